//! A quick timing of list filtering, for before/after comparisons by hand (not a benchmark):
//! `cargo test --release --lib iceberg::list::tests::timing -- --ignored --nocapture`.

use super::super::*;
use crate::core::iceberg::{Namespace, TableIdent};
use crate::core::policy::entries::EntryFilter;
use crate::core::roles::{ActiveRoles, OwnershipMode, Principal, check_user, narrow};
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

const ENTRIES: usize = 10_000;

/// A listTables response as a catalog sends one: compact, one namespace, long-ish names.
fn response() -> Vec<u8> {
    let mut out = String::from(r#"{"identifiers":["#);
    for i in 0..ENTRIES {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, r#"{{"namespace":["big"],"name":"events_{i:05}_daily_rollup_by_region"}}"#);
    }
    out.push_str(r#"],"next-page-token":"p2"}"#);
    out.into_bytes()
}

/// A policy that lets `ann` see the schema but not `denied` of its tables.
fn policy(denied: impl Iterator<Item = usize>) -> String {
    let mut denials = String::new();
    for i in denied {
        let _ = write!(
            denials,
            "\n      - {{ type: TABLE, fullName: prod.big.events_{i:05}_daily_rollup_by_region, \
             privileges: [{{ name: SELECT_TABLE, condition: DENY }}] }}"
        );
    }
    format!(
        r#"version: 1
metalake: lake
default_catalog: prod
users:
  - {{ name: ann, roles: [reader] }}
roles:
  - name: reader
    securableObjects:
      - {{ type: CATALOG, fullName: prod, privileges: [{{ name: USE_CATALOG, condition: ALLOW }}] }}
      - type: SCHEMA
        fullName: prod.big
        privileges:
          - {{ name: USE_SCHEMA, condition: ALLOW }}
          - {{ name: SELECT_TABLE, condition: ALLOW }}{denials}
"#
    )
}

/// The CPU time this thread has run, in nanoseconds (the first field of its `schedstat`).
fn cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    stat.split_whitespace().next().and_then(|ns| ns.parse().ok()).unwrap_or(0)
}

/// The mean CPU time and the fastest wall time of many runs of `f`: the machine is shared,
/// so wall times of single runs are noisy, and CPU time leaves out the time others ran.
fn time(mut f: impl FnMut()) -> (Duration, Duration) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(200) {
        f();
    }
    const RUNS: u32 = 400;
    let cpu = cpu_ns();
    let fastest = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default();
    (Duration::from_nanos(cpu_ns().saturating_sub(cpu)) / RUNS, fastest)
}

fn report(label: &str, bytes: usize, f: impl FnMut()) {
    let (cpu, fastest) = time(f);
    let per_entry = |t: Duration| t.as_nanos() as f64 / ENTRIES as f64;
    let mbps = |t: Duration| bytes as f64 / t.as_nanos() as f64 * 1e3;
    eprintln!(
        "{label:<46} CPU {:>7.1} µs {:>6.1} ns/entry {:>5.0} MB/s | fastest {:>7.1} µs {:>6.1} ns/entry {:>5.0} MB/s",
        cpu.as_nanos() as f64 / 1e3,
        per_entry(cpu),
        mbps(cpu),
        fastest.as_nanos() as f64 / 1e3,
        per_entry(fastest),
        mbps(fastest),
    );
}

fn subject_filter(yaml: &str, mut f: impl FnMut(&mut dyn FnMut(&Entry) -> bool)) {
    let snap = crate::core::policy::load_str("p.yaml", yaml).unwrap().snapshot;
    let principal = Principal { user: "ann".into(), ..Principal::default() };
    let id = check_user(&snap, &principal).unwrap();
    let narrowed = narrow(&snap, &principal, id, &ActiveRoles::DEFAULT, OwnershipMode::Always).unwrap();
    let subject = narrowed.subject("ann");
    let mut entries = EntryFilter::new(&snap, &subject, "prod", ListKind::Tables);
    f(&mut |e| entries.visible(e));
}

#[test]
#[ignore = "a timing, meaningful only in a release build"]
fn timing() {
    let body = response();
    let cheap = |e: &Entry| matches!(e, Entry::Object(i) if i.name.as_bytes().get(11) != Some(&b'0'));
    let page = filter(ListKind::Tables, body.as_slice(), &[], cheap).unwrap();
    assert_eq!((page.len(), page.hidden()), (9_000, 1_000));
    eprintln!("{} entries, {} bytes", ENTRIES, body.len());
    if let Some(profile) = std::env::var_os("LIST_TIMING_PROFILE") {
        // a long run for `perf record`: the raw filter, or with `entries` an EntryFilter's
        let yaml = policy((0..ENTRIES).step_by(1000));
        subject_filter(&yaml, |visible| {
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(5) {
                let page = if profile == "entries" {
                    filter(ListKind::Tables, black_box(body.as_slice()), &[], &mut *visible)
                } else {
                    filter(ListKind::Tables, black_box(body.as_slice()), &[], cheap)
                };
                drop(black_box(page));
            }
        });
        return;
    }
    let bytes = body.len();
    report("old filter, cheap predicate (90%)", bytes, || {
        drop(black_box(super::old::filter(ListKind::Tables, black_box(&body), &[], cheap)))
    });
    report("new filter, cheap predicate (90%)", bytes, || {
        drop(black_box(filter(ListKind::Tables, black_box(body.as_slice()), &[], cheap)))
    });
    report("old filter + render, cheap predicate", bytes, || {
        let page = super::old::filter(ListKind::Tables, black_box(&body), &[], cheap).unwrap();
        black_box(page.render(ListKind::Tables, Some("sealed")));
    });
    report("new filter + render, cheap predicate", bytes, || {
        let page = filter(ListKind::Tables, black_box(body.as_slice()), &[], cheap).unwrap();
        black_box(page.render(ListKind::Tables, Some("sealed")));
    });
    for (label, yaml) in
        [("10 denied", policy((0..ENTRIES).step_by(1000))), ("1,000 denied (90%)", policy((0..ENTRIES).step_by(10)))]
    {
        subject_filter(&yaml, |visible| {
            report(&format!("EntryFilter::visible alone, {label}"), bytes, || {
                let ns = Namespace::new(vec!["big".into()], &[]).unwrap();
                let mut e = Entry::Object(TableIdent::new(ns, "x".to_owned()).unwrap());
                for i in 0..ENTRIES {
                    if let Entry::Object(ident) = &mut e {
                        ident.name.clear();
                        let _ = write!(ident.name, "events_{i:05}_daily_rollup_by_region");
                    }
                    black_box(visible(&e));
                }
            });
        });
        for new in [false, true] {
            subject_filter(&yaml, |visible| {
                let which = if new { "new" } else { "old" };
                report(&format!("{which} filter + render, {label}"), bytes, || {
                    let rendered = if new {
                        filter(ListKind::Tables, black_box(body.as_slice()), &[], &mut *visible)
                            .unwrap()
                            .render(ListKind::Tables, Some("sealed"))
                    } else {
                        super::old::filter(ListKind::Tables, black_box(&body), &[], &mut *visible)
                            .unwrap()
                            .render(ListKind::Tables, Some("sealed"))
                    };
                    black_box(rendered);
                });
            });
        }
    }
}
