//! What a reload keeps alive (issue 18: "a reload keeps at most one old and one new snapshot
//! alive"): the old snapshot lives on only while requests that loaded it are in flight, and
//! reloads in a row never accumulate snapshots. Served in-process in front of a fake catalog;
//! reloads are triggered with `reload_now`, the function the reload task runs on each trigger.

use crate::fake_upstream::{FakeUpstream, Reply, basic, send};
use crate::support::TempDir;
use icegate::core::policy::Snapshot;
use icegate::ops::reload::{Outcome, reload_now};
use icegate::serve::pipeline::state::Shared;
use serde_json::json;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// How long the catalog takes to answer: the in-flight request holds the state it loaded
/// for at least this long.
const UPSTREAM_DELAY: Duration = Duration::from_secs(2);

/// A policy in which `ann` may see table `t{generation}` of `prod.sales`: each generation's
/// text differs, so each reload loads a new snapshot.
fn policy(generation: u32) -> String {
    format!(
        "version: 1\nmetalake: lake\ndefault_catalog: prod\nusers:\n  - {{ name: ann, roles: [reader] }}\nroles:\n  \
         - name: reader\n    securableObjects:\n      \
         - {{ type: CATALOG, fullName: prod, privileges: [{{ name: USE_CATALOG, condition: ALLOW }}] }}\n      \
         - {{ type: SCHEMA, fullName: prod.sales, privileges: [{{ name: USE_SCHEMA, condition: ALLOW }}] }}\n      \
         - {{ type: TABLE, fullName: prod.sales.t{generation}, privileges: [{{ name: SELECT_TABLE, condition: ALLOW }}] }}\n"
    )
}

/// icegate serving `policy` without the reload task, so that the test alone decides when a
/// reload happens.
async fn start(upstream: &FakeUpstream, policy: &Path) -> (SocketAddr, Arc<Shared>) {
    let overrides = icegate::config::Overrides {
        upstream: Some(upstream.url("")),
        policy: Some(policy.to_owned()),
        ..Default::default()
    };
    let mut config = icegate::config::Config::load(None, overrides).unwrap();
    config.audit.enabled = false;
    config.owners.store = Some(icegate::ops::owners::StoreKind::Off);
    let snapshot = icegate::core::policy::load_path(policy).unwrap().snapshot;
    let forward =
        icegate::serve::upstream::upstreams::Upstreams::from_config(&config, icegate::core::clock::Clock::real())
            .unwrap();
    let shared = Shared::new(config, snapshot, forward);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(icegate::serve::listen::server::serve(
        shared.clone(),
        listener,
        std::future::pending(),
        Duration::from_secs(1),
    ));
    (addr, shared)
}

async fn reload(shared: &Arc<Shared>) -> Outcome {
    let shared = shared.clone();
    tokio::task::spawn_blocking(move || reload_now(&shared)).await.unwrap()
}

fn published(shared: &Shared) -> Weak<Snapshot> {
    Arc::downgrade(&shared.state.load().snapshot)
}

/// Waits (at most five seconds) until nothing holds `snapshot` any more: a request's task
/// drops the state it loaded just after it has written the response.
async fn freed(snapshot: &Weak<Snapshot>) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while snapshot.strong_count() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    snapshot.strong_count() == 0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_keeps_the_old_snapshot_only_while_requests_hold_it() {
    let upstream = FakeUpstream::start(|_| {
        let identifiers: Vec<_> = (1..=6).map(|t| json!({"namespace": ["sales"], "name": format!("t{t}")})).collect();
        Reply::json(200, json!({"identifiers": identifiers})).after(UPSTREAM_DELAY)
    })
    .await;
    let dir = TempDir::new("reload-memory");
    let file = dir.write("p.yaml", &policy(1));
    let (addr, shared) = start(&upstream, &file).await;
    let first = published(&shared);

    // A request in flight: decided on generation 1, waiting for the catalog.
    let auth = basic("ann");
    let in_flight = tokio::spawn(async move {
        send(addr, "GET", "/v1/prod/namespaces/sales/tables", &[("authorization", &auth)], b"").await
    });
    let deadline = Instant::now() + UPSTREAM_DELAY;
    while upstream.requests().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(upstream.requests().len(), 1, "the request reached the catalog");

    std::fs::write(&file, policy(2)).unwrap();
    assert!(matches!(reload(&shared).await, Outcome::Reloaded { generation: 2 }));
    let second = published(&shared);
    assert!(!in_flight.is_finished(), "the catalog has not answered yet");
    assert_eq!(first.strong_count(), 1, "the old snapshot lives on in the request that loaded it, only there");
    assert_eq!(second.strong_count(), 1, "the new snapshot is held by the published state alone");

    // The request finishes with the policy it started with (t1), and the old snapshot goes.
    let answer = in_flight.await.unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.json()["identifiers"], json!([{"namespace": ["sales"], "name": "t1"}]));
    assert!(freed(&first).await, "the old snapshot outlived the last request that held it");
    assert_eq!(second.strong_count(), 1);

    // Reloads in a row, none in flight: each frees its predecessor at once.
    let mut previous = second;
    for generation in 3..=6 {
        std::fs::write(&file, policy(generation)).unwrap();
        assert!(matches!(reload(&shared).await, Outcome::Reloaded { generation: g } if g == u64::from(generation)));
        assert_eq!(previous.strong_count(), 0, "generation {} outlived its reload", generation - 1);
        previous = published(&shared);
        assert_eq!(previous.strong_count(), 1, "generation {generation} is held by the published state alone");
    }
    // An unchanged or failing reload keeps the one snapshot and makes no other.
    assert!(matches!(reload(&shared).await, Outcome::Unchanged));
    std::fs::write(&file, "version: 1\n").unwrap();
    assert!(matches!(reload(&shared).await, Outcome::Failed(_)));
    assert_eq!(previous.strong_count(), 1, "the last good snapshot still serves, held once");
}
