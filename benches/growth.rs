//! Cost growth: how icegate's costs grow with the size of the policy and the length of a list.
//!
//! Policy size, on the generated policy of `common/policy_gen.rs` at 1,000, 10,000, 100,000 and
//! 1,000,000 grants, written in JSON (the loader's fast path): the text's size, the load time (parse, build of the indexes, total), the
//! resident memory of the loaded snapshot, and the median loadTable decision for an allowed and a
//! denied subject, and over 1,000 different requests. Each size runs in a fresh child process,
//! so that its memory figures do not inherit what a larger or earlier load left in the heap.
//!
//! List length, on the 100,000-grant policy: a listTables response of 10 to 100,000 entries,
//! filtered and rendered with the calls the proxy makes, beside a baseline that parses the whole
//! response into a `serde_json::Value`, filters it with the same decisions and serializes it
//! again. Both outputs are checked to be the same JSON before anything is timed.
//!
//! Run with `cargo bench --bench growth` (about a minute on two cores, and 1 GB of memory at its
//! peak, in the 1,000,000-grant child);
//! it prints the tables and writes `benches/results/growth.md` and `benches/results/growth.svg`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::string_slice,
    reason = "a test or benchmark that fails panics"
)]

use bytes::Bytes;
use icegate::core::iceberg::list::{self, Entry, ListKind};
use icegate::core::iceberg::{Namespace, OperationId, TableIdent};
use icegate::core::policy::authorize::{Reason, Request, Verdict, authorize_path};
use icegate::core::policy::entries::EntryFilter;
use icegate::core::policy::load::{Loaded, Source, build, parse};
use icegate::core::policy::{Snapshot, Subject};
use icegate::core::roles::{ActiveRoles, Narrowed, OwnershipMode, Principal, check_user, narrow};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[path = "common/policy_gen.rs"]
mod policy_gen;
use policy_gen::{Generated, Shape, generate};

const GRANTS: [u32; 4] = [1_000, 10_000, 100_000, 1_000_000];
const LIST_LENGTHS: [u32; 5] = [10, 100, 1_000, 10_000, 100_000];
/// The policy the list filters decide on: the issue's standard size.
const LIST_POLICY_GRANTS: u32 = 100_000;
/// Set (to a grant count) in the child process that measures one policy size.
const CHILD_ENV: &str = "ICEGATE_GROWTH_GRANTS";
/// Requests in the mixed loadTable measure: enough different users and tables that the
/// decisions do not all run on the same few cache lines.
const MIXED_REQUESTS: usize = 1_000;
/// Allowed and denied loadTable cases timed per policy size, and the time each is timed for.
const CASES: usize = 15;
const CASE_TIME: Duration = Duration::from_millis(100);
/// Clause 4 of loadTable's rule is `USE_CATALOG@ ∧ USE_SCHEMA@ ∧ SELECT_TABLE@`.
const SELECT_CLAUSE: usize = 4;
const TARGET_LIST_ENTRIES: u32 = 10_000;
const TARGET_LIST_TIME: Duration = Duration::from_millis(1);
const TARGET_LIST_MBPS: f64 = 700.0;

fn main() {
    if let Ok(grants) = std::env::var(CHILD_ENV) {
        let row = policy_child(grants.parse().expect("grant count"));
        println!("{}", serde_json::to_string(&row).unwrap());
        return;
    }
    let machine = Machine::now();
    eprintln!("growth: {} CPUs ({}), load average {}", machine.cpus, machine.model, machine.load_before);

    let exe = std::env::current_exe().unwrap();
    let policy: Vec<PolicyRow> = GRANTS
        .iter()
        .map(|grants| {
            let out = Command::new(&exe)
                .env(CHILD_ENV, grants.to_string())
                .stderr(Stdio::inherit())
                .output()
                .expect("the policy-size child did not start");
            assert!(out.status.success(), "the child for {grants} grants failed: {}", out.status);
            let stdout = String::from_utf8(out.stdout).unwrap();
            serde_json::from_str(stdout.lines().last().expect("the child printed no row")).unwrap()
        })
        .collect();

    let lists = list_measures();
    let list_cpu_share = cpu_share();
    let machine = Machine { load_after: load_average(), ..machine };

    let report = Report { machine, policy, lists, list_cpu_share };
    let tables = report.tables();
    println!();
    println!("{tables}");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/results");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("growth.md"), report.markdown(&tables)).unwrap();
    std::fs::write(dir.join("growth.svg"), report.svg()).unwrap();
    println!("wrote {} and growth.svg", dir.join("growth.md").display());
}

// ---------------------------------------------------------------------------------------------
// Policy size (one child process per size)

/// What one policy size measured; the child sends it to the parent as one JSON line.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PolicyRow {
    grants: u32,
    users: usize,
    allow: usize,
    deny: usize,
    text_bytes: usize,
    runs: usize,
    parse: Duration,
    build: Duration,
    total: Duration,
    /// RSS after the first load, snapshot alive and the parsed files freed, minus RSS before.
    rss_first: u64,
    /// RSS growth of a second snapshot loaded while the first is alive, when there was a
    /// second run.
    rss_second: Option<u64>,
    /// Peak RSS of the whole child (generator output and policy text included).
    peak: u64,
    allowed: Duration,
    allowed_by_select: bool,
    denied: Duration,
    /// How many allowed/denied cases the two medians are over.
    cases: usize,
    mixed: Duration,
    mixed_allowed: usize,
    /// The measuring thread's CPU share over the timed sections.
    cpu_share: f64,
}

/// Loads per size: enough for a median, fewer where one load takes seconds.
fn load_runs(grants: u32) -> usize {
    match grants {
        0..=10_000 => 7,
        10_001..=100_000 => 5,
        _ => 2,
    }
}

/// The generated policy as JSON, the YAML text freed: a copy would sit in the RSS figures.
fn as_json(generated: &mut Generated) -> String {
    let yaml = std::mem::take(&mut generated.yaml);
    policy_gen::json(&yaml)
}

fn policy_child(grants: u32) -> PolicyRow {
    let shape = Shape::with_grants(grants);
    let start = Instant::now();
    let mut generated = generate(&shape);
    let generate_time = start.elapsed();
    let text = as_json(&mut generated);
    let text_bytes = text.len();
    eprintln!(
        "grants {}: {} of JSON generated in {}; loading",
        count(u64::from(grants)),
        fmt_bytes(text_bytes as f64),
        fmt_time(generate_time)
    );
    // The text moves into the source: a copy would sit in the RSS figures as noise.
    let sources = vec![Source { path: PathBuf::from("generated.json"), text }];
    let threads = thread_count();

    let runs = load_runs(grants);
    let rss_before = rss_bytes();
    let (loaded, parse_time, build_time) = timed_load(&sources);
    wait_for_threads(threads);
    let rss_first = rss_bytes().saturating_sub(rss_before);
    let mut times = vec![(parse_time, build_time)];
    let mut rss_second = None;
    for run in 1..runs {
        let rss_mid = rss_bytes();
        let (other, parse_time, build_time) = timed_load(&sources);
        // The next load must not share the machine's second core with this one's freeing.
        wait_for_threads(threads);
        if run == 1 {
            rss_second = Some(rss_bytes().saturating_sub(rss_mid));
        }
        drop(other);
        times.push((parse_time, build_time));
    }
    let peak = peak_rss_bytes();
    let parse_median = median(times.iter().map(|t| t.0).collect());
    let build_median = median(times.iter().map(|t| t.1).collect());
    let total_median = median(times.iter().map(|t| t.0 + t.1).collect());

    let snap = &loaded.snapshot;
    let stats = snap.stats();
    // The median over several subjects and tables, each timed alone: one request's time
    // depends on its user's roles and on where its data landed in memory.
    let cases = find_cases(snap, &generated, shape.users);
    let (mut allowed_times, mut denied_times, mut allowed_by_select) = (Vec::new(), Vec::new(), true);
    for (allowed, denied_user) in &cases {
        let allowed_narrowed = narrowed(snap, &allowed.user);
        let allowed_subject = allowed_narrowed.subject(&allowed.user);
        let denied_narrowed = narrowed(snap, denied_user);
        let denied_subject = denied_narrowed.subject(denied_user);
        let req = allowed.table.request();
        let decision = authorize_path(snap, &allowed_subject, &req);
        assert!(decision.is_allowed());
        allowed_by_select &= last_clause(&decision.reason) == Some(SELECT_CLAUSE);
        assert!(!authorize_path(snap, &denied_subject, &req).is_allowed());
        let decide = |subject: &Subject<'_>| drop(black_box(authorize_path(snap, black_box(subject), black_box(&req))));
        allowed_times.push(median_time_for(|| decide(&allowed_subject), CASE_TIME));
        denied_times.push(median_time_for(|| decide(&denied_subject), CASE_TIME));
    }
    let cases_timed = cases.len();
    let allowed_time = median(allowed_times);
    let denied_time = median(denied_times);

    let mixed = mixed_requests(&generated, shape.users);
    let mixed_narrowed: Vec<Narrowed> = mixed.iter().map(|(user, _)| narrowed(snap, user)).collect();
    let mixed_subjects: Vec<Subject<'_>> =
        mixed.iter().zip(&mixed_narrowed).map(|((user, _), n)| n.subject(user)).collect();
    let mixed_reqs: Vec<Request<'_>> = mixed.iter().map(|(_, t)| t.request()).collect();
    let mixed_allowed =
        mixed_subjects.iter().zip(&mixed_reqs).filter(|(s, r)| authorize_path(snap, s, r).is_allowed()).count();
    let mixed_time = median_time(|| {
        for (subject, req) in mixed_subjects.iter().zip(&mixed_reqs) {
            drop(black_box(authorize_path(snap, black_box(subject), black_box(req))));
        }
    }) / MIXED_REQUESTS as u32;

    eprintln!(
        "grants {}: load {} (parse {} + build {}, median of {runs}); RSS +{}; loadTable {} allowed, {} denied, {} mixed",
        count(u64::from(grants)),
        fmt_time(total_median),
        fmt_time(parse_median),
        fmt_time(build_median),
        fmt_bytes(rss_first as f64),
        fmt_time(allowed_time),
        fmt_time(denied_time),
        fmt_time(mixed_time)
    );
    PolicyRow {
        grants,
        users: stats.users,
        allow: stats.allow,
        deny: stats.deny,
        text_bytes,
        runs,
        parse: parse_median,
        build: build_median,
        total: total_median,
        rss_first,
        rss_second,
        peak,
        allowed: allowed_time,
        allowed_by_select,
        denied: denied_time,
        cases: cases_timed,
        mixed: mixed_time,
        mixed_allowed,
        cpu_share: cpu_share(),
    }
}

fn timed_load(sources: &[Source]) -> (Loaded, Duration, Duration) {
    timed(|| {
        let start = Instant::now();
        let parsed = parse(black_box(sources)).unwrap();
        let parse_time = start.elapsed();
        let start = Instant::now();
        let loaded = build(parsed).unwrap();
        (loaded, parse_time, start.elapsed())
    })
}

/// A loadTable target, owned so that requests can borrow it.
struct TableRef {
    catalog: String,
    schema: Namespace,
    table: String,
}

impl TableRef {
    fn new(catalog: u32, schema: u32, table: u32) -> Self {
        Self { catalog: format!("c{catalog}"), schema: ns(&format!("s{schema}")), table: format!("t{table}") }
    }

    fn request(&self) -> Request<'_> {
        Request {
            op: OperationId::LoadTable,
            catalog: &self.catalog,
            namespace: Some(&self.schema),
            name: Some(&self.table),
            parent: None,
            purge: false,
        }
    }
}

struct Case {
    user: String,
    table: TableRef,
}

/// Up to `CASES` allowed loadTables of different users, each with a user denied the same table.
/// The allowed ones are preferably allowed by the SELECT clause (privileges, not ownership), so
/// that every size times the same path; the denied user preferably holds a role in the table's
/// catalog, so that its decision gets past the first check. Unlike `decision.rs`'s finder, it
/// falls back to any case, so that the smallest policies (100 users) have one too.
fn find_cases(snap: &Snapshot, generated: &Generated, users: u32) -> Vec<(Case, String)> {
    let mut cases = Vec::new();
    let mut fallback = None;
    for u in 0..users {
        if cases.len() == CASES {
            break;
        }
        let user = format!("u{u}");
        let n = narrowed(snap, &user);
        let subject = n.subject(&user);
        let mut found = None;
        'roles: for r in generated.held(u) {
            let (c, _) = generated.role_home[r as usize];
            for &(s, t) in &generated.role_tables[r as usize] {
                let table = TableRef::new(c, s, t);
                let d = authorize_path(snap, &subject, &table.request());
                if d.is_allowed() && last_clause(&d.reason) == Some(SELECT_CLAUSE) {
                    found = Some(table);
                    break 'roles;
                }
                if d.is_allowed() && fallback.is_none() {
                    fallback = Some((u, TableRef::new(c, s, t)));
                }
            }
        }
        if let Some(table) = found
            && let Some(denied) = denied_user(snap, generated, users, u, &table)
        {
            cases.push((Case { user, table }, denied));
        }
    }
    if cases.is_empty()
        && let Some((u, table)) = fallback
        && let Some(denied) = denied_user(snap, generated, users, u, &table)
    {
        cases.push((Case { user: format!("u{u}"), table }, denied));
    }
    assert!(!cases.is_empty(), "no allowed and denied loadTable in the policy");
    cases
}

/// A user denied `table`, looked for after `allowed_u` so that the cases have different ones.
fn denied_user(snap: &Snapshot, generated: &Generated, users: u32, allowed_u: u32, table: &TableRef) -> Option<String> {
    let mut any = None;
    for k in 1..users {
        let u = (allowed_u + k) % users;
        let user = format!("u{u}");
        let n = narrowed(snap, &user);
        if authorize_path(snap, &n.subject(&user), &table.request()).verdict == Verdict::Allow {
            continue;
        }
        if generated.held(u).iter().any(|r| format!("c{}", generated.role_home[*r as usize].0) == table.catalog) {
            return Some(user);
        }
        any.get_or_insert(user);
    }
    any
}

/// `MIXED_REQUESTS` loadTables of users spread over the whole policy, each on a table one of its
/// roles names (allowed or denied, as the policy has it).
fn mixed_requests(generated: &Generated, users: u32) -> Vec<(String, TableRef)> {
    (0..MIXED_REQUESTS)
        .map(|i| {
            // 7,919 is prime, so the users visited are spread rather than the first thousand.
            let u = ((i as u64 * 7_919) % u64::from(users)) as u32;
            let held = generated.held(u);
            let r = held[i % held.len()] as usize;
            let (c, _) = generated.role_home[r];
            let tables = &generated.role_tables[r];
            let (s, t) = tables[i % tables.len()];
            (format!("u{u}"), TableRef::new(c, s, t))
        })
        .collect()
}

fn narrowed(snap: &Snapshot, user: &str) -> Narrowed {
    let principal = Principal { user: user.to_owned(), ..Principal::default() };
    let id = check_user(snap, &principal).unwrap();
    narrow(snap, &principal, id, &ActiveRoles::DEFAULT, OwnershipMode::Always).unwrap()
}

/// The clause of the last check of a decision, if it has checks.
fn last_clause(reason: &Reason<'_>) -> Option<usize> {
    match reason {
        Reason::Checks(done) => done.last().and_then(|c| c.eval.clause),
        _ => None,
    }
}

fn ns(name: &str) -> Namespace {
    Namespace::new(vec![name.to_owned()], &[]).unwrap()
}

// ---------------------------------------------------------------------------------------------
// List length

/// Who lists, and which schema.
struct Lister {
    label: &'static str,
    user: String,
    catalog: String,
    schema: String,
}

#[derive(Debug)]
struct ListRow {
    entries: u32,
    input_bytes: usize,
    kept: usize,
    icegate: Duration,
    baseline: Duration,
}

#[derive(Debug)]
struct ListSeries {
    label: &'static str,
    user: String,
    catalog: String,
    schema: String,
    rows: Vec<ListRow>,
}

fn list_measures() -> Vec<ListSeries> {
    let shape = Shape::with_grants(LIST_POLICY_GRANTS);
    let generated = generate(&shape);
    let sources = vec![Source { path: PathBuf::from("generated.json"), text: policy_gen::json(&generated.yaml) }];
    let threads = thread_count();
    let (loaded, _, _) = timed_load(&sources);
    drop(sources);
    // Its freeing thread would contend with the first lists for the allocator.
    wait_for_threads(threads);
    let snap = &loaded.snapshot;
    // The proxy's separators are `upstream.namespace_separators`, none unless configured.
    let separators = icegate::core::decide::Settings::default().namespace_separators;

    let listers = find_listers(snap, &generated, shape.users);
    let mut series = Vec::new();
    for lister in listers {
        let n = narrowed(snap, &lister.user);
        let subject = n.subject(&lister.user);
        let catalog = lister.catalog.as_str();
        // As the proxy filters a list: one EntryFilter per response, `list::filter` over the
        // upstream's bytes, then `render` with the sealed token, here none (the upstream's is
        // null).
        // The proxy hands `list::filter` the buffered body as `Bytes`; cloning one is a reference
        // count.
        let icegate = |bytes: &Bytes| -> (Vec<u8>, usize) {
            let mut entries = EntryFilter::new(snap, &subject, catalog, ListKind::Tables);
            let page = list::filter(ListKind::Tables, bytes.clone(), &separators, |e| entries.visible(e)).unwrap();
            (page.render(ListKind::Tables, None), page.len())
        };
        let baseline = |bytes: &[u8]| -> Vec<u8> {
            let mut entries = EntryFilter::new(snap, &subject, catalog, ListKind::Tables);
            baseline_filter(bytes, &separators, |e| entries.visible(e))
        };
        let mut rows = Vec::new();
        for &len in &LIST_LENGTHS {
            let bytes = Bytes::from(list_response(&lister.schema, len));
            let (out, kept) = icegate(&bytes);
            let expected = baseline(&bytes);
            let got: Value = serde_json::from_slice(&out).unwrap();
            let want: Value = serde_json::from_slice(&expected).unwrap();
            assert_eq!(got, want, "icegate's {len}-entry list for {} differs from the baseline's", lister.user);
            assert_eq!(want["identifiers"].as_array().map(Vec::len), Some(kept));
            let icegate_time = median_time(|| drop(black_box(icegate(black_box(&bytes)))));
            let baseline_time = median_time(|| drop(black_box(baseline(black_box(&bytes)))));
            eprintln!(
                "list {} {len}: {} kept; icegate {} ({:.0} MB/s), baseline {} ({:.0} MB/s)",
                lister.label,
                kept,
                fmt_time(icegate_time),
                mbps(bytes.len(), icegate_time),
                fmt_time(baseline_time),
                mbps(bytes.len(), baseline_time)
            );
            rows.push(ListRow {
                entries: len,
                input_bytes: bytes.len(),
                kept,
                icegate: icegate_time,
                baseline: baseline_time,
            });
        }
        series.push(ListSeries {
            label: lister.label,
            user: lister.user,
            catalog: lister.catalog,
            schema: lister.schema,
            rows,
        });
    }
    series
}

/// A listTables response as the spec's `ListTablesResponse` has it: the tables `t0`, `t1`...
/// of one schema (the policy names `t0`..`t49`; the rest are tables it never mentions).
fn list_response(schema: &str, entries: u32) -> Vec<u8> {
    let mut out = String::with_capacity(entries as usize * 40 + 64);
    out.push_str(r#"{"identifiers":["#);
    for t in 0..entries {
        if t > 0 {
            out.push(',');
        }
        write!(out, r#"{{"namespace":["{schema}"],"name":"t{t}"}}"#).unwrap();
    }
    out.push_str(r#"],"next-page-token":null}"#);
    out.into_bytes()
}

/// The straightforward way: the whole response as a `Value`, entries kept by `visible`, the
/// whole value serialized again.
fn baseline_filter(bytes: &[u8], separators: &[String], mut visible: impl FnMut(&Entry) -> bool) -> Vec<u8> {
    let mut value: Value = serde_json::from_slice(bytes).unwrap();
    let top = value.as_object_mut().unwrap();
    if let Some(Value::Array(ids)) = top.get_mut("identifiers") {
        ids.retain(|id| table_entry(id, separators).is_some_and(|e| visible(&e)));
    }
    // The proxy never passes the upstream's token on: it seals it, and omits it when it is null.
    if top.get("next-page-token").is_some_and(Value::is_null) {
        top.remove("next-page-token");
    }
    serde_json::to_vec(&value).unwrap()
}

fn table_entry(id: &Value, separators: &[String]) -> Option<Entry> {
    let levels = id.get("namespace")?.as_array()?;
    let levels = levels.iter().map(|l| l.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>()?;
    let name = id.get("name")?.as_str()?.to_owned();
    TableIdent::new(Namespace::new(levels, separators).ok()?, name).ok().map(Entry::Object)
}

/// Two listers who pass listTables' gate: a reader with SELECT_TABLE on the whole schema, who
/// sees every table but those denied to it (the most the filter keeps, copies and renders), and
/// a sparse lister with only USE_SCHEMA and CREATE_TABLE there, who sees the few tables its
/// roles name.
fn find_listers(snap: &Snapshot, generated: &Generated, users: u32) -> Vec<Lister> {
    let gate = |subject: &Subject<'_>, catalog: &str, schema: &Namespace| {
        let req = Request {
            op: OperationId::ListTables,
            catalog,
            namespace: Some(schema),
            name: None,
            parent: None,
            purge: false,
        };
        authorize_path(snap, subject, &req).is_allowed()
    };
    let visible_of = |subject: &Subject<'_>, catalog: &str, schema: &str, entries: u32| {
        let mut filter = EntryFilter::new(snap, subject, catalog, ListKind::Tables);
        (0..entries)
            .filter(|t| {
                let ident = TableIdent::new(ns(schema), format!("t{t}")).unwrap();
                filter.visible(&Entry::Object(ident))
            })
            .count()
    };
    let (mut reader, mut sparse) = (None, None);
    for u in 0..users {
        let user = format!("u{u}");
        let n = narrowed(snap, &user);
        let subject = n.subject(&user);
        for r in generated.held(u) {
            let r = r as usize;
            let catalog = format!("c{}", generated.role_home[r].0);
            let home = format!("s{}", generated.role_home[r].1);
            if reader.is_none()
                && gate(&subject, &catalog, &ns(&home))
                && visible_of(&subject, &catalog, &home, 100) > 90
            {
                let schema = home.clone();
                reader = Some(Lister { label: "reader", user: user.clone(), catalog: catalog.clone(), schema });
            }
            if let (None, Some(s)) = (&sparse, generated.role_create_only[r]) {
                let schema = format!("s{s}");
                let visible = visible_of(&subject, &catalog, &schema, 1_000);
                if gate(&subject, &catalog, &ns(&schema)) && (1..=10).contains(&visible) {
                    sparse = Some(Lister { label: "sparse", user: user.clone(), catalog, schema });
                }
            }
        }
        if reader.is_some() && sparse.is_some() {
            break;
        }
    }
    vec![reader.expect("no reader in the policy"), sparse.expect("no sparse lister in the policy")]
}

// ---------------------------------------------------------------------------------------------
// Measuring

/// Wall and CPU time of the measuring thread over every timed section, to tell how much of
/// that time it was kept off the CPU by other work on the machine.
static TIMED_WALL_NS: AtomicU64 = AtomicU64::new(0);
static TIMED_CPU_NS: AtomicU64 = AtomicU64::new(0);

/// Runs `f` as a timed section.
fn timed<T>(f: impl FnOnce() -> T) -> T {
    let (wall, cpu) = (Instant::now(), thread_cpu());
    let out = f();
    TIMED_WALL_NS.fetch_add(wall.elapsed().as_nanos() as u64, Ordering::Relaxed);
    TIMED_CPU_NS.fetch_add(thread_cpu().saturating_sub(cpu).as_nanos() as u64, Ordering::Relaxed);
    out
}

/// The share of the timed sections' wall time the measuring thread spent on a CPU: near 1 on
/// a quiet machine.
fn cpu_share() -> f64 {
    let wall = TIMED_WALL_NS.load(Ordering::Relaxed);
    if wall == 0 { 1.0 } else { TIMED_CPU_NS.load(Ordering::Relaxed) as f64 / wall as f64 }
}

/// CPU time of the calling thread. The kernel brings it up to date at every tick and context
/// switch, so it is exact to a few ms: good for the sum of a section, not for one call.
fn thread_cpu() -> Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    Duration::from_nanos(text.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0))
}

/// Median time per call of `f`: `batches` batches of `iters` calls.
fn median_per_call(mut f: impl FnMut(), iters: u32, batches: usize) -> Duration {
    timed(|| {
        let times = (0..batches)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..iters {
                    f();
                }
                start.elapsed() / iters
            })
            .collect();
        median(times)
    })
}

/// `median_per_call` with batches of about 2 ms, for about 0.6 s (at least 11 batches): short
/// batches, so that on a busy machine most of them run without being preempted and the median
/// ignores the rest, yet each far above the clock's resolution.
fn median_time(f: impl FnMut()) -> Duration {
    median_time_for(f, Duration::from_millis(600))
}

/// `median_time` for about `total` (still at least 11 batches).
fn median_time_for(mut f: impl FnMut(), total: Duration) -> Duration {
    const BATCH: Duration = Duration::from_millis(2);
    f();
    let start = Instant::now();
    f();
    let once = start.elapsed().max(Duration::from_nanos(1));
    let iters = (BATCH.as_nanos() / once.as_nanos()).clamp(1, 100_000) as u32;
    let batches = (total.as_nanos() / (once.as_nanos() * u128::from(iters))).clamp(11, 301) as usize;
    median_per_call(f, iters, batches)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    let mid = v.len() / 2;
    if v.len().is_multiple_of(2) { (v[mid - 1] + v[mid]) / 2 } else { v[mid] }
}

fn proc_field(file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix(key))?;
    line.trim().trim_end_matches("kB").trim().parse().ok()
}

/// Resident set size, from `/proc/self/statm` (pages × 4096).
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()).unwrap_or(0) * 4096
}

fn peak_rss_bytes() -> u64 {
    proc_field("/proc/self/status", "VmHWM:").unwrap_or(0) * 1024
}

fn thread_count() -> u64 {
    proc_field("/proc/self/status", "Threads:").unwrap_or(1)
}

/// Waits for the thread `build` spawns to free the parsed files: until it is done, the RSS
/// still holds them, and it would compete with whatever is timed next.
fn wait_for_threads(threads: u64) {
    let start = Instant::now();
    while thread_count() > threads && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

// ---------------------------------------------------------------------------------------------
// Formatting

fn fmt_time(d: Duration) -> String {
    let ns = d.as_secs_f64() * 1e9;
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e4 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e7 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns < 1e9 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// Decimal units (1 MB = 10⁶ bytes), as MB/s is.
fn fmt_bytes(b: f64) -> String {
    if b < 1e3 {
        format!("{b:.0} B")
    } else if b < 1e6 {
        format!("{:.1} kB", b / 1e3)
    } else if b < 1e9 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.2} GB", b / 1e9)
    }
}

fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e6
}

fn ns_per(d: Duration, n: u32) -> f64 {
    d.as_secs_f64() * 1e9 / f64::from(n)
}

/// The exponent `k` of cost ∝ size^k between two sizes: 1 is linear, 0 flat.
fn exponent(size: (f64, f64), cost: (f64, f64)) -> f64 {
    (cost.1 / cost.0).ln() / (size.1 / size.0).ln()
}

// ---------------------------------------------------------------------------------------------
// The report

#[derive(Debug, Clone)]
struct Machine {
    cpus: String,
    model: String,
    memory: String,
    date: String,
    load_before: String,
    load_after: String,
}

impl Machine {
    fn now() -> Self {
        let cpus = command_output("nproc", &[]).unwrap_or_else(|| {
            std::thread::available_parallelism().map(|n| n.to_string()).unwrap_or_else(|_| "?".to_owned())
        });
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .map(|l| l.trim_start_matches([' ', '\t', ':']).trim().to_owned())
            .unwrap_or_else(|| "unknown CPU".to_owned());
        let memory =
            proc_field("/proc/meminfo", "MemTotal:").map_or_else(|| "?".to_owned(), |kb| fmt_bytes(kb as f64 * 1024.0));
        let date = command_output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_else(|| "unknown date".to_owned());
        Self { cpus, model, memory, date, load_before: load_average(), load_after: String::new() }
    }
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The 1-minute load average: other work on the machine during the run shows here.
fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().next().unwrap_or("?").to_owned()
}

struct Report {
    machine: Machine,
    policy: Vec<PolicyRow>,
    lists: Vec<ListSeries>,
    list_cpu_share: f64,
}

impl Report {
    /// The tables, as Markdown (readable in a terminal too).
    fn tables(&self) -> String {
        let mut t = String::new();
        t.push_str("### Policy size\n\n");
        t.push_str(
            "| grants | users | JSON | parse | build | load total | runs | RSS after load | 2nd snapshot | peak RSS \
             | loadTable allowed | loadTable denied | loadTable mixed |\n",
        );
        t.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for r in &self.policy {
            let allowed_note = if r.allowed_by_select { "" } else { " (not via SELECT)" };
            writeln!(
                t,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {}{allowed_note} | {} | {} |",
                count((r.allow + r.deny) as u64),
                count(r.users as u64),
                fmt_bytes(r.text_bytes as f64),
                fmt_time(r.parse),
                fmt_time(r.build),
                fmt_time(r.total),
                r.runs,
                fmt_bytes(r.rss_first as f64),
                r.rss_second.map_or_else(|| "—".to_owned(), |b| fmt_bytes(b as f64)),
                fmt_bytes(r.peak as f64),
                fmt_time(r.allowed),
                fmt_time(r.denied),
                fmt_time(r.mixed),
            )
            .unwrap();
        }
        t.push_str("\nGrowth exponent k between neighbouring sizes (cost ∝ grants^k; 1 = linear, 0 = flat):\n\n");
        t.push_str("| grants | parse | build | load total | RSS after load | loadTable allowed | loadTable mixed |\n");
        t.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
        for w in self.policy.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            let size = (f64::from(a.grants), f64::from(b.grants));
            let k = |f: &dyn Fn(&PolicyRow) -> f64| format!("{:.2}", exponent(size, (f(a), f(b))));
            writeln!(
                t,
                "| {} → {} | {} | {} | {} | {} | {} | {} |",
                count(u64::from(a.grants)),
                count(u64::from(b.grants)),
                k(&|r| r.parse.as_secs_f64()),
                k(&|r| r.build.as_secs_f64()),
                k(&|r| r.total.as_secs_f64()),
                k(&|r| r.rss_first as f64),
                k(&|r| r.allowed.as_secs_f64()),
                k(&|r| r.mixed.as_secs_f64()),
            )
            .unwrap();
        }
        for s in &self.lists {
            writeln!(
                t,
                "\n### listTables filter, {} (`{}` listing {}.{}, on the {}-grant policy)\n",
                s.label,
                s.user,
                s.catalog,
                s.schema,
                count(u64::from(LIST_POLICY_GRANTS))
            )
            .unwrap();
            t.push_str(
                "| entries | input | kept | icegate per list | icegate MB/s | icegate ns/entry \
                 | baseline per list | baseline MB/s | baseline ns/entry | icegate speed-up |\n",
            );
            t.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for r in &s.rows {
                writeln!(
                    t,
                    "| {} | {} | {} | {} | {:.0} | {:.1} | {} | {:.0} | {:.1} | {:.1}× |",
                    count(u64::from(r.entries)),
                    fmt_bytes(r.input_bytes as f64),
                    count(r.kept as u64),
                    fmt_time(r.icegate),
                    mbps(r.input_bytes, r.icegate),
                    ns_per(r.icegate, r.entries),
                    fmt_time(r.baseline),
                    mbps(r.input_bytes, r.baseline),
                    ns_per(r.baseline, r.entries),
                    r.baseline.as_secs_f64() / r.icegate.as_secs_f64(),
                )
                .unwrap();
            }
        }
        t.push('\n');
        for s in &self.lists {
            if let Some(r) = s.rows.iter().find(|r| r.entries == TARGET_LIST_ENTRIES) {
                writeln!(
                    t,
                    "- target, {}-entry list ({}): {} per list at {:.0} MB/s; target < {} of CPU per list and ≥ {:.0} MB/s, \
                     output identical to a full parse-and-filter (checked for every length)",
                    count(u64::from(TARGET_LIST_ENTRIES)),
                    s.label,
                    fmt_time(r.icegate),
                    mbps(r.input_bytes, r.icegate),
                    fmt_time(TARGET_LIST_TIME),
                    TARGET_LIST_MBPS
                )
                .unwrap();
            }
        }
        let shares: Vec<String> = self
            .policy
            .iter()
            .map(|r| format!("{} grants {:.0}%", count(u64::from(r.grants)), r.cpu_share * 100.0))
            .chain(std::iter::once(format!("lists {:.0}%", self.list_cpu_share * 100.0)))
            .collect();
        writeln!(
            t,
            "- CPU share of the measuring thread while timed (below ~90%, other work took the CPU): {}",
            shares.join(", ")
        )
        .unwrap();
        t
    }

    fn markdown(&self, tables: &str) -> String {
        let m = &self.machine;
        let mut md = String::new();
        md.push_str("# Cost growth\n\n");
        writeln!(
            md,
            "Written by `cargo bench --bench growth` on {}: {} CPUs ({}), {} of memory; 1-minute load average {} \
             before the run, {} after.\n",
            m.date, m.cpus, m.model, m.memory, m.load_before, m.load_after
        )
        .unwrap();
        md.push_str("![How load time, memory, decision time and list filtering grow](growth.svg)\n\n");
        md.push_str(tables);
        let allowed = self.policy.iter().map(|r| r.mixed_allowed);
        let (fewest, most) = (allowed.clone().min().unwrap_or(0), allowed.max().unwrap_or(0));
        let cases = self.policy.iter().map(|r| r.cases).min().unwrap_or(0);
        md.push_str("\n## How these were measured\n\n");
        md.push_str(
            "- The policy is `benches/common/policy_gen.rs` at `Shape::with_grants(n)`: roles of ten grants each \
             over 100 catalogs × 100 schemas × 50 tables, as many users as roles, a group per ten roles, about 3% \
             DENY. Only the number of roles, users and groups changes with n.\n\
             - Each policy size runs in its own process, so that its memory figures start from a clean heap. Load \
             times are wall-clock medians of the runs shown (the 1,000,000-grant policy is loaded only twice, each \
             load taking seconds). `build` hands the parsed files to a thread that frees them; the timings do not \
             include that, and the next run waits for it.\n\
             - *RSS after load* is the resident-set growth from before parsing to after the first load, with the \
             snapshot alive and the parsed files freed: an upper bound on the snapshot, since heap the allocator \
             keeps after the parse counts too. *2nd snapshot* is the growth when a second copy is loaded beside the \
             first (as during a hot reload), which reuses most of that kept heap and so is nearer the snapshot's own \
             size. *Peak RSS* is the whole process at its peak, the generator's output and the JSON text included.\n",
        );
        writeln!(
            md,
            "- Decision and list times are medians over batches of about 2 ms (at least 11 batches), wall clock \
             on one thread. loadTable *allowed* and *denied* (`authorize_path`) are the median over {cases} cases \
             (different users, each allowed on a table by SELECT, and for each a user denied it), each case one \
             request repeated for {} ms, so warm caches; *mixed* is the time per decision over {MIXED_REQUESTS} \
             different requests of users spread over the whole policy, each on a table one of its roles names \
             ({fewest}–{most} of them allowed), run in turn, which is nearer the cache behaviour of real traffic.",
            CASE_TIME.as_millis()
        )
        .unwrap();
        md.push_str(
            "- Lists are filtered with the proxy's calls (`list::filter` with one `EntryFilter` per response and the \
             default namespace separators, then `ListPage::render`); the baseline parses the response into a \
             `serde_json::Value`, keeps the entries the same `EntryFilter` shows, drops the null page token (the \
             proxy never passes the upstream's on) and serializes the value again. Before timing, both outputs are \
             parsed and asserted equal, for every length and both listers. Entries are about 37 bytes \
             (`{\"namespace\":[\"s95\"],\"name\":\"t1234\"}`); the policy names only `t0`..`t49` of a schema, so \
             in the longer lists most entries are tables it never mentions, whose answer is computed once per \
             response.\n\
             - *CPU share* is the measuring thread's CPU time (`/proc/thread-self/schedstat`) over the wall time of \
             the timed sections: well below 100%, other work on the machine took the CPU and the wall-clock figures \
             are inflated.\n\
             - Targets are from the issue and are never asserted.\n",
        );
        md
    }

    fn svg(&self) -> String {
        let grants_of = |f: &dyn Fn(&PolicyRow) -> f64| -> Vec<(f64, f64)> {
            self.policy.iter().map(|r| (f64::from(r.grants), f(r))).collect()
        };
        let load = Panel {
            title: "Policy load time",
            x_label: "grants",
            y_label: "median wall time",
            x_tick: tick_count,
            y_tick: tick_time,
            series: vec![
                Series::line("total", BLUE, grants_of(&|r| r.total.as_secs_f64())),
                Series::line("parse JSON", ORANGE, grants_of(&|r| r.parse.as_secs_f64())),
                Series::line("build indexes", GREEN, grants_of(&|r| r.build.as_secs_f64())),
            ],
            guide: true,
            mark: None,
        };
        let memory = Panel {
            title: "Policy memory",
            x_label: "grants",
            y_label: "resident memory",
            x_tick: tick_count,
            y_tick: tick_bytes,
            series: vec![
                Series::line("RSS after load", BLUE, grants_of(&|r| r.rss_first as f64)),
                Series::line("peak RSS of the process", RED, grants_of(&|r| r.peak as f64)),
                Series::line("JSON text", GRAY, grants_of(&|r| r.text_bytes as f64)),
            ],
            guide: true,
            mark: None,
        };
        let decide = Panel {
            title: "loadTable decision",
            x_label: "grants",
            y_label: "median time per decision",
            x_tick: tick_count,
            y_tick: tick_time,
            series: vec![
                Series::line("allowed (a request repeated)", BLUE, grants_of(&|r| r.allowed.as_secs_f64())),
                Series::line("denied (a request repeated)", RED, grants_of(&|r| r.denied.as_secs_f64())),
                Series::line("1,000 different requests in turn", GREEN, grants_of(&|r| r.mixed.as_secs_f64())),
            ],
            guide: false,
            mark: None,
        };
        let colors = [(BLUE, ORANGE), (GREEN, RED)];
        let mut list_series = Vec::new();
        for (s, (ice, base)) in self.lists.iter().zip(colors) {
            let points = |f: &dyn Fn(&ListRow) -> Duration| -> Vec<(f64, f64)> {
                s.rows.iter().map(|r| (f64::from(r.entries), f(r).as_secs_f64())).collect()
            };
            list_series.push(Series::line(&format!("icegate, {}", s.label), ice, points(&|r| r.icegate)));
            let mut b = Series::line(&format!("serde_json::Value, {}", s.label), base, points(&|r| r.baseline));
            b.dashed = true;
            list_series.push(b);
        }
        let list = Panel {
            title: "listTables response filtered (100,000-grant policy)",
            x_label: "entries in the response",
            y_label: "median time per response",
            x_tick: tick_count,
            y_tick: tick_time,
            series: list_series,
            guide: false,
            mark: Some((f64::from(TARGET_LIST_ENTRIES), TARGET_LIST_TIME.as_secs_f64(), "target: 1 ms at 10k")),
        };
        let title = format!(
            "icegate cost growth — {} CPUs ({}), {}; log-log scales",
            self.machine.cpus, self.machine.model, self.machine.date
        );
        plot(&title, &[load, memory, decide, list])
    }
}

// ---------------------------------------------------------------------------------------------
// A small SVG plotter: log-log panels in a grid of two columns.

const BLUE: &str = "#1f77b4";
const ORANGE: &str = "#ff7f0e";
const GREEN: &str = "#2ca02c";
const RED: &str = "#d62728";
const GRAY: &str = "#7f7f7f";
const PANEL_W: f64 = 480.0;
const PANEL_H: f64 = 330.0;
const TITLE_H: f64 = 34.0;

struct Series {
    name: String,
    color: &'static str,
    dashed: bool,
    points: Vec<(f64, f64)>,
}

impl Series {
    fn line(name: &str, color: &'static str, points: Vec<(f64, f64)>) -> Self {
        Self { name: name.to_owned(), color, dashed: false, points }
    }
}

struct Panel {
    title: &'static str,
    x_label: &'static str,
    y_label: &'static str,
    x_tick: fn(f64) -> String,
    y_tick: fn(f64) -> String,
    series: Vec<Series>,
    /// A dotted line of slope 1 through the first series' first point: linear growth, to read
    /// the other slopes against.
    guide: bool,
    /// A labelled target point.
    mark: Option<(f64, f64, &'static str)>,
}

fn plot(title: &str, panels: &[Panel]) -> String {
    let rows = panels.len().div_ceil(2);
    let (w, h) = (2.0 * PANEL_W, TITLE_H + rows as f64 * PANEL_H);
    let mut s = String::new();
    writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#
    )
    .unwrap();
    writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#).unwrap();
    writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        w / 2.0,
        xml(title)
    )
    .unwrap();
    for (i, p) in panels.iter().enumerate() {
        let (ox, oy) = ((i % 2) as f64 * PANEL_W, TITLE_H + (i / 2) as f64 * PANEL_H);
        panel(&mut s, p, ox, oy);
    }
    s.push_str("</svg>\n");
    s
}

/// The decades that hold `values`, as exponents of 10.
fn decades(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.filter(|v| *v > 0.0).fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = (lo.log10().floor(), hi.log10().ceil());
    if hi > lo { (lo, hi) } else { (lo, lo + 1.0) }
}

fn panel(s: &mut String, p: &Panel, ox: f64, oy: f64) {
    let (left, right, top, bottom) = (76.0, 18.0, 30.0, 48.0);
    let (x0, x1) = (ox + left, ox + PANEL_W - right);
    let (y0, y1) = (oy + PANEL_H - bottom, oy + top);
    let all = || p.series.iter().flat_map(|s| s.points.iter().copied()).chain(p.mark.map(|(x, y, _)| (x, y)));
    let (xlo, xhi) = decades(all().map(|(x, _)| x));
    let (ylo, yhi) = decades(all().map(|(_, y)| y));
    let sx = |x: f64| x0 + (x.log10() - xlo) / (xhi - xlo) * (x1 - x0);
    let sy = |y: f64| y0 - (y.log10() - ylo) / (yhi - ylo) * (y0 - y1);

    writeln!(s, r#"<text x="{}" y="{}" font-size="13" font-weight="bold">{}</text>"#, x0, oy + 19.0, xml(p.title))
        .unwrap();
    // Grid: a line per decade, minor ticks at 2..9.
    for d in (xlo as i32)..=(xhi as i32) {
        let x = sx(10f64.powi(d));
        writeln!(s, r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{y1}" stroke="#ddd"/>"##).unwrap();
        writeln!(
            s,
            r#"<text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
            y0 + 16.0,
            xml(&(p.x_tick)(10f64.powi(d)))
        )
        .unwrap();
        for m in 2..10 {
            let v = f64::from(m) * 10f64.powi(d);
            if d < xhi as i32 {
                let x = sx(v);
                writeln!(s, r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{}" stroke="#999"/>"##, y0 - 4.0).unwrap();
            }
        }
    }
    for d in (ylo as i32)..=(yhi as i32) {
        let y = sy(10f64.powi(d));
        writeln!(s, r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#ddd"/>"##).unwrap();
        writeln!(
            s,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            x0 - 6.0,
            y + 4.0,
            xml(&(p.y_tick)(10f64.powi(d)))
        )
        .unwrap();
        for m in 2..10 {
            if d < yhi as i32 {
                let y = sy(f64::from(m) * 10f64.powi(d));
                writeln!(s, r##"<line x1="{x0}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#999"/>"##, x0 + 4.0).unwrap();
            }
        }
    }
    writeln!(
        s,
        r##"<rect x="{x0}" y="{y1}" width="{:.1}" height="{:.1}" fill="none" stroke="#333"/>"##,
        x1 - x0,
        y0 - y1
    )
    .unwrap();
    writeln!(s, r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#, (x0 + x1) / 2.0, y0 + 36.0, xml(p.x_label))
        .unwrap();
    let (lx, ly) = (ox + 16.0, (y0 + y1) / 2.0);
    writeln!(
        s,
        r#"<text x="{lx}" y="{ly:.1}" text-anchor="middle" transform="rotate(-90 {lx} {ly:.1})">{}</text>"#,
        xml(p.y_label)
    )
    .unwrap();

    let mut legend: Vec<(String, &str, &str)> = Vec::new();
    if p.guide
        && let Some(&(gx, gy)) = p.series.first().and_then(|s| s.points.first())
    {
        // Slope 1 from the first point to the right edge, clipped at the top.
        let end_x = 10f64.powf(xhi).min(gx * 10f64.powf(yhi) / gy);
        writeln!(
            s,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#999" stroke-dasharray="2 3"/>"##,
            sx(gx),
            sy(gy),
            sx(end_x),
            sy(gy * end_x / gx)
        )
        .unwrap();
        legend.push(("linear growth (slope 1)".to_owned(), "#999", "2 3"));
    }
    for series in &p.series {
        let dash = if series.dashed { "6 3" } else { "" };
        let points: Vec<String> = series.points.iter().map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y))).collect();
        writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
            points.join(" "),
            series.color
        )
        .unwrap();
        for &(x, y) in &series.points {
            writeln!(s, r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"/>"#, sx(x), sy(y), series.color).unwrap();
        }
        legend.push((series.name.clone(), series.color, dash));
    }
    if let Some((x, y, label)) = p.mark {
        let (cx, cy) = (sx(x), sy(y));
        writeln!(
            s,
            r#"<path d="M{:.1},{:.1} l10,10 M{:.1},{:.1} l10,-10" stroke="{RED}" stroke-width="2.5"/>"#,
            cx - 5.0,
            cy - 5.0,
            cx - 5.0,
            cy + 5.0
        )
        .unwrap();
        // Below the mark: the lines it is read against pass above or through it.
        writeln!(
            s,
            r#"<text x="{cx:.1}" y="{:.1}" fill="{RED}" text-anchor="middle">{}</text>"#,
            cy + 20.0,
            xml(label)
        )
        .unwrap();
    }
    // The legend sits top left, where rising lines leave room, on a white box.
    let line_h = 16.0;
    let width = 12.0 + 30.0 + 6.5 * legend.iter().map(|l| l.0.chars().count()).max().unwrap_or(0) as f64;
    let (bx, by) = (x0 + 8.0, y1 + 8.0);
    writeln!(
        s,
        r##"<rect x="{bx}" y="{by}" width="{width:.1}" height="{:.1}" fill="white" fill-opacity="0.9" stroke="#ccc"/>"##,
        8.0 + line_h * legend.len() as f64
    )
    .unwrap();
    for (i, (name, color, dash)) in legend.iter().enumerate() {
        let y = by + 12.0 + line_h * i as f64;
        writeln!(
            s,
            r#"<line x1="{}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
            bx + 6.0,
            bx + 30.0
        )
        .unwrap();
        writeln!(s, r#"<text x="{}" y="{:.1}">{}</text>"#, bx + 36.0, y + 4.0, xml(name)).unwrap();
    }
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

// Tick values are powers of ten computed by `powi`, so the thresholds allow for rounding.
fn tick_count(v: f64) -> String {
    match v {
        v if v >= 0.999e6 => format!("{}M", (v / 1e6).round()),
        v if v >= 0.999e3 => format!("{}k", (v / 1e3).round()),
        v => format!("{}", v.round()),
    }
}

fn tick_time(v: f64) -> String {
    match v {
        v if v >= 0.999 => format!("{} s", v.round()),
        v if v >= 0.999e-3 => format!("{} ms", (v * 1e3).round()),
        v if v >= 0.999e-6 => format!("{} µs", (v * 1e6).round()),
        v => format!("{} ns", (v * 1e9).round()),
    }
}

fn tick_bytes(v: f64) -> String {
    match v {
        v if v >= 0.999e9 => format!("{} GB", (v / 1e9).round()),
        v if v >= 0.999e6 => format!("{} MB", (v / 1e6).round()),
        v if v >= 0.999e3 => format!("{} kB", (v / 1e3).round()),
        v => format!("{} B", v.round()),
    }
}
