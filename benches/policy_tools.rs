//! The policy-as-code commands on large policies (issue 19): `who-can`, `diff` and `report` on
//! the generated policies of `common/policy_gen.rs` (the 100,000-grant standard: 10,000 roles,
//! 10,000 users, 1,000 groups), timed as the commands run them: load the policy file (or two,
//! in parallel, as `diff` does), then answer.
//!
//! `diff` is timed on four pairs: the policy against itself; against a review-sized change (one
//! role in a hundred loses its first table grant, one user in a hundred changes groups); against
//! a change to one group's roles (every member is asked again); and against a change that
//! touches every role (the worst case: every subject asked about everything its roles reach).
//! Each `diff` result is also checked against the change it should find.
//!
//! Run with `cargo bench --bench policy_tools` (about a minute on two cores); it prints the
//! table and writes `benches/results/policy-tools.md`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::string_slice,
    reason = "a test or benchmark that fails panics"
)]

use icegate::core::analysis::access::{Object, Right, State};
use icegate::core::analysis::{diff, report, who_can};
use icegate::core::policy::model::{ObjectType, Privilege};
use icegate::core::policy::{Snapshot, load_path};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "common/policy_gen.rs"]
mod policy_gen;
use policy_gen::{Shape, generate};

/// Runs of each measure; the median is reported.
const RUNS: usize = 5;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn time<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::with_capacity(RUNS);
    let mut last = None;
    for _ in 0..RUNS {
        let start = Instant::now();
        let out = f();
        times.push(start.elapsed());
        last = Some(out);
    }
    (median(times), last.unwrap())
}

fn load(path: &Path) -> Snapshot {
    load_path(path).unwrap().snapshot
}

/// As `icegate diff` loads: both at once.
fn load_two(a: &Path, b: &Path) -> (Snapshot, Snapshot) {
    std::thread::scope(|s| {
        let other = s.spawn(|| load(a));
        let b = load(b);
        (other.join().unwrap(), b)
    })
}

fn fmt(d: Duration) -> String {
    if d >= Duration::from_secs(1) {
        format!("{:.2} s", d.as_secs_f64())
    } else {
        format!("{:.1} ms", d.as_secs_f64() * 1e3)
    }
}

/// The generated YAML with edits, line by line: `role_line` edits `- {name: rN, ...}` lines,
/// `user_line` the `- {name: uN, ...}` ones, `group_line` the `- {name: gN, ...}` ones.
fn edit(
    yaml: &str,
    role_line: impl Fn(u32, &str) -> String,
    user_line: impl Fn(u32, &str) -> String,
    group_line: impl Fn(u32, &str) -> String,
) -> String {
    let number = |line: &str, prefix: &str| -> Option<u32> {
        let rest = line.strip_prefix(prefix)?;
        rest[..rest.find(',')?].parse().ok()
    };
    let mut out = String::with_capacity(yaml.len());
    for line in yaml.lines() {
        let edited = if let Some(n) = number(line, "- {name: r") {
            role_line(n, line)
        } else if let Some(n) = number(line, "- {name: u") {
            user_line(n, line)
        } else if let Some(n) = number(line, "- {name: g") {
            group_line(n, line)
        } else {
            line.to_owned()
        };
        out.push_str(&edited);
        out.push('\n');
    }
    out
}

/// Removes the first TABLE grant of a role line.
fn drop_first_table_grant(line: &str) -> String {
    let start = line.find(", {type: TABLE").unwrap();
    let end = start + line[start..].find("]}").unwrap() + 2;
    format!("{}{}", &line[..start], &line[end..])
}

struct Row {
    what: String,
    time: Duration,
    result: String,
}

fn main() {
    let dir = std::env::temp_dir().join(format!("icegate-policy-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Generated and edited as YAML, written as JSON: the syntax that loads large policies fast.
    let write = |name: &str, yaml: &str| -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, policy_gen::json(yaml)).unwrap();
        p
    };
    let mut rows = Vec::new();
    let shape = Shape::STANDARD;
    let generated = generate(&shape);
    let base = write("base.json", &generated.yaml);
    let keep = |_: u32, l: &str| l.to_owned();

    // One role in a hundred loses its first table grant; one user in a hundred changes groups.
    let review = edit(
        &generated.yaml,
        |n, l| if n % 100 == 7 { drop_first_table_grant(l) } else { l.to_owned() },
        |n, l| if n % 100 == 3 { l.replace("groups: [g", "groups: [g1, g") } else { l.to_owned() },
        keep,
    );
    let review = write("review.json", &review);
    // Group g0 gains a role: each of its members is asked again.
    let group =
        edit(
            &generated.yaml,
            keep,
            keep,
            |n, l| if n == 0 { l.replace("roles: [", "roles: [r1, ") } else { l.to_owned() },
        );
    let group = write("group.json", &group);
    // Every role loses its first table grant.
    let every = edit(&generated.yaml, |_, l| drop_first_table_grant(l), keep, keep);
    let every = write("every.json", &every);

    eprintln!("policy_tools: loading the {}-grant policy", shape.grants());
    let (t, snap) = time(|| load(&base));
    rows.push(Row {
        what: format!(
            "load the {}-grant policy ({} MB of JSON)",
            shape.grants(),
            std::fs::metadata(&base).unwrap().len() >> 20
        ),
        time: t,
        result: format!("{}", snap.stats()),
    });

    // who-can: a table with table-level grants, the most widely granted catalog, an owned table.
    let (c, s) = generated.role_home[0];
    let questions = [
        (Right::Privilege(Privilege::SelectTable), ObjectType::Table, format!("c{c}.s{s}.t0")),
        (Right::Privilege(Privilege::UseSchema), ObjectType::Schema, format!("c{c}.s{s}")),
        (Right::Privilege(Privilege::UseCatalog), ObjectType::Catalog, format!("c{c}")),
        (Right::Owner, ObjectType::Schema, format!("c{c}.s{s}")),
    ];
    for (right, kind, name) in questions {
        let object = Object::parse(kind, &name, "lake").unwrap();
        let (t, holders) = time(|| who_can::who_can(&snap, right, &object));
        rows.push(Row {
            what: format!("who-can {} {kind} {name} (after the load)", right.as_str()),
            time: t,
            result: format!("{} users and groups", holders.len()),
        });
    }

    for (label, path) in [
        ("itself", &base),
        ("a review-sized change (100 grants, 100 memberships)", &review),
        ("one group's roles changed", &group),
        ("a change to every role", &every),
    ] {
        let (t_load, (old, new)) = time(|| load_two(&base, path));
        let (t, changes) = time(|| diff::diff(&old, &new));
        let lost = changes.iter().filter(|c| c.before == State::Allow).count();
        let gained = changes.iter().filter(|c| c.after == State::Allow).count();
        if path == &base {
            assert!(changes.is_empty(), "a policy differs from itself");
        } else {
            assert!(!changes.is_empty(), "{label}: no change found");
        }
        rows.push(Row {
            what: format!("diff against {label}: loading both, in parallel"),
            time: t_load,
            result: String::new(),
        });
        rows.push(Row {
            what: format!("diff against {label}: the comparison"),
            time: t,
            result: format!("{} changes ({gained} gained, {lost} lost)", changes.len()),
        });
    }

    for grants in [1_000u32, 10_000] {
        let small = generate(&Shape::with_grants(grants));
        let path = write(&format!("p{grants}.json"), &small.yaml);
        let snap = load(&path);
        let label = path.display().to_string();
        let (t, page) = time(|| report::render(report::Labelled { snapshot: &snap, label: &label }, None));
        rows.push(Row {
            what: format!("report on the {grants}-grant policy ({} users)", snap.stats().users),
            time: t,
            result: format!("{:.1} MB of HTML", page.len() as f64 / 1e6),
        });
    }
    let _ = std::fs::remove_dir_all(&dir);

    let mut md = String::new();
    let date = std::process::Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"]).output().ok();
    let date = date.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned()).unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load.split_whitespace().next().unwrap_or("?");
    writeln!(md, "# Policy tools on large policies\n").unwrap();
    writeln!(
        md,
        "Written by `cargo bench --bench policy_tools` on {date}: {} CPUs, 1-minute load average {load} at the end; median of {RUNS} runs each.\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    )
    .unwrap();
    writeln!(md, "| what | time | result |\n|---|---:|---|").unwrap();
    for r in &rows {
        writeln!(md, "| {} | {} | {} |", r.what, fmt(r.time), r.result).unwrap();
    }
    print!("{md}");
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/results/policy-tools.md");
    std::fs::write(&out, md).unwrap();
    eprintln!("policy_tools: wrote {}", out.display());
}
