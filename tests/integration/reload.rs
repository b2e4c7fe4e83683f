//! Hot reload, shadow decisions and the admin listener (docs/design.md §9, §10), with icegate
//! in-process in front of a fake catalog and the reload task running as `serve` runs it.

use crate::fake_upstream::{FakeUpstream, Reply, basic, send};
use crate::support::TempDir;
use icegate::serve::pipeline::state::Shared;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A policy in which `ann` may see the tables of `prod.sales` named in `visible`.
fn policy(visible: &[u32]) -> String {
    let mut tables = String::new();
    for t in visible {
        tables.push_str(&format!(
            "      - {{ type: TABLE, fullName: prod.sales.t{t}, privileges: [{{ name: SELECT_TABLE, condition: ALLOW }}] }}\n"
        ));
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
      - {{ type: SCHEMA, fullName: prod.sales, privileges: [{{ name: USE_SCHEMA, condition: ALLOW }}] }}
{tables}"#
    )
}

const ODD: [u32; 5] = [1, 3, 5, 7, 9];
const EVEN: [u32; 5] = [2, 4, 6, 8, 10];
const LIST: &str = "/v1/prod/namespaces/sales/tables";

/// A catalog listing tables t1..t10.
async fn catalog() -> FakeUpstream {
    FakeUpstream::start(|_| {
        let identifiers: Vec<Value> =
            (1..=10).map(|t| json!({"namespace": ["sales"], "name": format!("t{t}")})).collect();
        Reply::json(200, json!({"identifiers": identifiers}))
    })
    .await
}

/// A ConfigMap-style mount: `policy.yaml -> ..data/policy.yaml`, `..data -> ..vN`.
struct ConfigMap {
    dir: TempDir,
    version: u32,
}

impl ConfigMap {
    fn new(text: &str) -> Self {
        let dir = TempDir::new("configmap");
        let mut map = Self { dir, version: 0 };
        map.publish(text);
        std::os::unix::fs::symlink("..data/policy.yaml", map.dir.path().join("policy.yaml")).unwrap();
        map
    }

    /// What the kubelet does: a new timestamped directory, then an atomic swap of `..data`.
    fn publish(&mut self, text: &str) {
        self.version += 1;
        let name = format!("..v{}", self.version);
        std::fs::create_dir(self.dir.path().join(&name)).unwrap();
        std::fs::write(self.dir.path().join(&name).join("policy.yaml"), text).unwrap();
        let tmp = self.dir.path().join("..data_tmp");
        std::os::unix::fs::symlink(&name, &tmp).unwrap();
        std::fs::rename(&tmp, self.dir.path().join("..data")).unwrap();
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// icegate serving `policy` (and `shadow`) in front of `upstream`, with its reload task.
pub(crate) async fn start(upstream: &FakeUpstream, policy: &Path, shadow: Option<&Path>) -> (SocketAddr, Arc<Shared>) {
    start_with(upstream, policy, shadow, |_| {}).await
}

/// [`start`], after `tweak` adjusted the config.
async fn start_with(
    upstream: &FakeUpstream,
    policy: &Path,
    shadow: Option<&Path>,
    tweak: impl FnOnce(&mut icegate::config::Config),
) -> (SocketAddr, Arc<Shared>) {
    let mut config = icegate::config::Config::load(
        None,
        icegate::config::Overrides {
            upstream: Some(upstream.url("")),
            policy: Some(policy.to_owned()),
            ..Default::default()
        },
    )
    .unwrap();
    config.audit.enabled = false;
    config.owners.store = Some(icegate::ops::owners::StoreKind::Off);
    config.reload.debounce_ms = 50;
    config.shadow_policy = shadow.map(Path::to_owned);
    tweak(&mut config);
    let live = icegate::core::policy::load_path(policy).unwrap().snapshot;
    let candidate = shadow.map(|p| icegate::core::policy::load_path(p).unwrap().snapshot);
    let forward =
        icegate::serve::upstream::upstreams::Upstreams::from_config(&config, icegate::core::clock::Clock::real())
            .unwrap();
    let shared = Shared::with_shadow(config, live, candidate, forward);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(icegate::serve::listen::server::serve(
        shared.clone(),
        listener,
        std::future::pending(),
        Duration::from_secs(1),
    ));
    // The watch starts in `run` itself: a change the test makes after this line is seen.
    tokio::spawn(icegate::ops::reload::run(shared.clone(), std::future::pending()));
    (addr, shared)
}

async fn visible(addr: SocketAddr) -> BTreeSet<u32> {
    let a = send(addr, "GET", LIST, &[("authorization", &basic("ann"))], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    a.json()["identifiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap()[1..].parse().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reload_under_load_never_mixes_policies_and_takes_effect_within_two_seconds() {
    let upstream = catalog().await;
    let mut map = ConfigMap::new(&policy(&ODD));
    let (addr, shared) = start(&upstream, map.path(), None).await;
    let odd: BTreeSet<u32> = ODD.into_iter().collect();
    let even: BTreeSet<u32> = EVEN.into_iter().collect();
    assert_eq!(visible(addr).await, odd);

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut clients = Vec::new();
    for _ in 0..4 {
        let (stop, odd, even) = (stop.clone(), odd.clone(), even.clone());
        clients.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let seen = visible(addr).await;
                assert!(seen == odd || seen == even, "a mix of two policies: {seen:?}");
                n += 1;
            }
            n
        }));
    }
    let mut expected = odd.clone();
    for round in 0..6 {
        if round == 3 {
            // A truncated file between two good versions: the last good policy stays.
            map.publish("version: 1\nmetalake: lake\nusers:\n  - { name: ann, roles: [rea");
            let published = Instant::now();
            while !shared.metrics.render().contains("icegate_policy_reloads_total{result=\"failure\"} 1") {
                assert!(published.elapsed() < Duration::from_secs(2), "the broken policy was not tried within 2 s");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert_eq!(visible(addr).await, expected, "a broken policy must not replace the last good one");
            let (_, ready) = icegate::serve::listen::admin::readiness(&shared);
            assert_eq!(ready["policy"]["stale"], true, "{ready}");
            assert!(shared.metrics.render().contains("icegate_policy_reloads_total{result=\"failure\"} 1"));
        }
        let (text, next) = if expected == odd { (policy(&EVEN), even.clone()) } else { (policy(&ODD), odd.clone()) };
        let changed = Instant::now();
        map.publish(&text);
        while visible(addr).await != next {
            assert!(changed.elapsed() < Duration::from_secs(2), "round {round}: not in force after 2 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        expected = next;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut served = 0;
    for c in clients {
        served += c.await.unwrap();
    }
    assert!(served > 50, "the clients kept running: {served}");
    let state = shared.state.load();
    assert_eq!(state.generation, 7, "six successful reloads after the first load");
    let (_, ready) = icegate::serve::listen::admin::readiness(&shared);
    assert_eq!(ready["policy"]["stale"], false, "fixed: {ready}");
    assert_eq!(ready["policy"]["hash"], state.snapshot.hash());
}

#[tokio::test]
async fn a_policy_that_fails_to_load_is_reported_and_fixing_it_recovers() {
    let upstream = catalog().await;
    let dir = TempDir::new("reload-file");
    let file = dir.write("p.yaml", &policy(&ODD));
    let (addr, shared) = start(&upstream, &file, None).await;
    for broken in ["", "version: 1\nmetalake: lake\nusers:\n  - { name: ann, roles: [nobody] }\n"] {
        std::fs::write(&file, broken).unwrap();
        assert!(matches!(icegate::ops::reload::reload_now(&shared), icegate::ops::reload::Outcome::Failed(_)));
        assert_eq!(visible(addr).await, ODD.into_iter().collect());
        assert_eq!(icegate::serve::listen::admin::readiness(&shared).1["policy"]["stale"], true);
        assert!(shared.metrics.render().contains("icegate_policy_stale 1"));
    }
    std::fs::write(&file, policy(&EVEN)).unwrap();
    assert!(matches!(
        icegate::ops::reload::reload_now(&shared),
        icegate::ops::reload::Outcome::Reloaded { generation: 2 }
    ));
    assert_eq!(visible(addr).await, EVEN.into_iter().collect());
    assert!(matches!(icegate::ops::reload::reload_now(&shared), icegate::ops::reload::Outcome::Unchanged));
    assert_eq!(icegate::serve::listen::admin::readiness(&shared).1["policy"]["stale"], false);
}

/// A service credential mounted from a Secret rotates: its file is read again on reload
/// (docs/design.md §6), not on every request, and a file that cannot be read or holds no valid
/// value leaves the credential in use rather than cutting the upstream off.
#[tokio::test]
async fn a_rotated_service_credential_file_reaches_the_upstream_after_the_next_reload() {
    let upstream = catalog().await;
    let dir = TempDir::new("reload-service-policy");
    let file = dir.write("p.yaml", &policy(&ODD));
    let secrets = TempDir::new("reload-service-secret");
    let secret = secrets.write("authorization", "Bearer first\n");
    let (addr, shared) = start_with(&upstream, &file, None, |c| {
        c.upstream.auth = icegate::config::UpstreamAuth::Service;
        c.upstream.service_authorization = Some("Bearer first".into());
        c.upstream.service_authorization_file = Some(secret.clone());
    })
    .await;
    let sent = |upstream: &FakeUpstream| {
        upstream.requests().last().and_then(|r| r.header("authorization").map(str::to_owned)).unwrap_or_default()
    };
    visible(addr).await;
    assert_eq!(sent(&upstream), "Bearer first");
    std::fs::write(&secret, "Bearer second\n").unwrap();
    visible(addr).await;
    assert_eq!(sent(&upstream), "Bearer first", "the file is read on reload, not per request");
    assert!(matches!(icegate::ops::reload::reload_now(&shared), icegate::ops::reload::Outcome::Unchanged));
    visible(addr).await;
    assert_eq!(sent(&upstream), "Bearer second", "the policy did not change, the credential did");
    for broken in [None, Some("Bearer half\nwritten"), Some("\n")] {
        match broken {
            None => std::fs::remove_file(&secret).unwrap(),
            Some(text) => std::fs::write(&secret, text).unwrap(),
        }
        icegate::ops::reload::reload_now(&shared);
        visible(addr).await;
        assert_eq!(sent(&upstream), "Bearer second", "after {broken:?} the credential in use stays");
    }
}

/// An audit log (or any other file) written beside the policy file must not wake the reload
/// task: with the audit file in the policy's directory, every request used to cost a watch
/// event and a reload attempt.
#[tokio::test]
async fn writes_to_other_files_beside_the_policy_do_not_trigger_reloads() {
    let upstream = catalog().await;
    let dir = TempDir::new("reload-beside");
    let file = dir.write("p.yaml", &policy(&ODD));
    let (addr, shared) = start(&upstream, &file, None).await;
    let attempts = |shared: &Shared| {
        samples(&shared.metrics.render(), "icegate_policy_reloads_total").iter().map(|(_, v)| *v).sum::<f64>()
    };
    // The writes are spread over 200 ms, four debounce periods: had the first of them woken the
    // reload task, its reload (of the unchanged policy) would have run before the edit below
    // and been counted apart from the edit's.
    for i in 0..20 {
        std::fs::write(dir.path().join("audit.jsonl"), format!("line {i}\n")).unwrap();
        std::fs::write(dir.path().join(".p.yaml.swp"), "swap").unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The policy itself still reloads by the watch; its reload is the only one.
    std::fs::write(&file, policy(&EVEN)).unwrap();
    let changed = Instant::now();
    while visible(addr).await != EVEN.into_iter().collect::<BTreeSet<u32>>() {
        assert!(changed.elapsed() < Duration::from_secs(2), "the policy edit was not picked up");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(attempts(&shared), 1.0, "{}", shared.metrics.render());
}

/// The counter values of `name` in a Prometheus text exposition, by label set.
pub(crate) fn samples(text: &str, name: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && l.starts_with(name))
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').unwrap();
            (series[name.len()..].to_owned(), value.parse().unwrap())
        })
        .collect()
}

#[tokio::test]
async fn shadow_mode_reports_exactly_the_requests_the_candidate_decides_differently() {
    let upstream = catalog().await;
    let dir = TempDir::new("shadow");
    let live = dir.write("live.yaml", &policy(&ODD));
    let candidate = dir.write("candidate.yaml", &policy(&[1, 3, 5, 7]));
    let (addr, shared) = start(&upstream, &live, Some(&candidate)).await;
    let auth = basic("ann");
    // t1 loads under both; t9 only under the live policy; the list differs in t9 too.
    for (target, differs) in [
        ("/v1/prod/namespaces/sales/tables/t1", false),
        ("/v1/prod/namespaces/sales/tables/t9", true),
        ("/v1/prod/namespaces/sales/tables/t2", false),
        (LIST, true),
        ("/v1/prod/namespaces/sales/tables/t9", true),
    ] {
        let before = shared.metrics.render();
        let a = send(addr, "GET", target, &[("authorization", &auth)], b"").await;
        assert!(a.status == 200 || a.status == 403 || a.status == 404, "{}", a.text());
        crate::drift::settle(&shared).await;
        let after = shared.metrics.render();
        let count = |t: &str| samples(t, "icegate_shadow_disagreements_total").iter().map(|(_, v)| v).sum::<f64>();
        assert_eq!(count(&after) - count(&before), f64::from(u8::from(differs)), "{target}");
    }
    let text = shared.metrics.render();
    let by_op = samples(&text, "icegate_shadow_disagreements_total");
    assert!(by_op.contains(&(r#"{operation="loadTable"}"#.to_owned(), 2.0)), "{by_op:?}");
    assert!(by_op.contains(&(r#"{operation="listTables"}"#.to_owned(), 1.0)), "{by_op:?}");
    // never enforced: the live policy still answers
    assert_eq!(visible(addr).await, ODD.into_iter().collect());
}

/// Issue 16: a catalog that needs `warehouse=` (Lakekeeper) answers a bare `/v1/config` with
/// 400 and logs an error each time; the probe sends what clients send, or what is configured.
#[tokio::test]
async fn the_readiness_probe_sends_the_query_clients_send_or_the_configured_target() {
    let upstream = FakeUpstream::start(|r: &crate::fake_upstream::Recorded| match r.target.as_str() {
        "/v1/config?warehouse=wh" => Reply::json(200, json!({"defaults": {}, "overrides": {"prefix": "wh"}})),
        _ => Reply::json(
            400,
            json!({"error": {"message": "warehouse is required", "type": "BadRequestException", "code": 400}}),
        ),
    })
    .await;
    let dir = TempDir::new("probe");
    let file = dir.write("p.yaml", &policy(&ODD));
    let (addr, shared) = start(&upstream, &file, None).await;
    // a 400 is an answer: reachable, as before
    assert!(icegate::serve::listen::admin::probe_once(&shared.upstreams.lanes()[0]).await);
    assert_eq!(upstream.requests().last().unwrap().target, "/v1/config");
    let a = send(addr, "GET", "/v1/config?warehouse=wh", &[("authorization", &basic("ann"))], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert!(icegate::serve::listen::admin::probe_once(&shared.upstreams.lanes()[0]).await);
    assert_eq!(upstream.requests().last().unwrap().target, "/v1/config?warehouse=wh");
    // a query the upstream refused is not learned
    send(addr, "GET", "/v1/config?warehouse=nope", &[("authorization", &basic("ann"))], b"").await;
    assert!(icegate::serve::listen::admin::probe_once(&shared.upstreams.lanes()[0]).await);
    assert_eq!(upstream.requests().last().unwrap().target, "/v1/config?warehouse=wh");

    let (_, configured) = start_with(&upstream, &file, None, |c| {
        c.upstream.readiness_probe = Some("/v1/config?warehouse=wh".into());
    })
    .await;
    assert!(icegate::serve::listen::admin::probe_once(&configured.upstreams.lanes()[0]).await);
    assert_eq!(upstream.requests().last().unwrap().target, "/v1/config?warehouse=wh");
    // a configured target that is not a path is a config error
    let text = format!("[upstream]\nurl = \"{}\"\nreadiness_probe = \"v1/config\"\n", upstream.url(""));
    let config = dir.write("c.toml", &text);
    let overrides = icegate::config::Overrides { policy: Some(file.clone()), ..Default::default() };
    let e = icegate::config::Config::load(Some(&config), overrides).unwrap_err().to_string();
    assert!(e.contains("`upstream.readiness_probe`"), "{e}");
}

#[tokio::test]
async fn the_admin_listener_serves_health_readiness_and_metrics_that_move() {
    let upstream = catalog().await;
    let dir = TempDir::new("admin");
    let file = dir.write("p.yaml", &policy(&ODD));
    let (addr, shared) = start(&upstream, &file, None).await;
    let admin = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let admin_addr = admin.local_addr().unwrap();
    tokio::spawn(icegate::serve::listen::admin::serve(shared.clone(), admin, std::future::pending()));

    assert_eq!(send(admin_addr, "GET", "/healthz", &[], b"").await.status, 200);
    let not_ready = send(admin_addr, "GET", "/readyz", &[], b"").await;
    assert_eq!(not_ready.status, 503, "no probe has answered yet: {}", not_ready.text());
    assert!(icegate::serve::listen::admin::probe_once(&shared.upstreams.lanes()[0]).await);
    shared.upstreams.lanes()[0].probed(true);
    let ready = send(admin_addr, "GET", "/readyz", &[], b"").await;
    assert_eq!(ready.status, 200);
    let body = ready.json();
    assert_eq!(body["ready"], true);
    assert_eq!(body["policy"]["generation"], 1);
    assert!(body["policy"]["hash"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(body["policy"]["loaded_at"].as_str().unwrap().len(), 24);
    assert_eq!(body["upstream"]["reachable"], true);

    let scrape = || async { send(admin_addr, "GET", "/metrics", &[], b"").await.text() };
    let before = scrape().await;
    assert_prometheus_text(&before);
    for _ in 0..3 {
        visible(addr).await;
    }
    send(addr, "GET", "/v1/prod/namespaces/sales/tables/t2", &[("authorization", &basic("ann"))], b"").await;
    let after = scrape().await;
    assert_prometheus_text(&after);
    let requests = samples(&after, "icegate_requests_total");
    assert!(
        requests.contains(&(r#"{operation="listTables",decision="allow",status="200"}"#.to_owned(), 3.0)),
        "{requests:?}"
    );
    assert!(requests.iter().any(|(l, _)| l.contains("loadTable") && l.contains("deny")), "{requests:?}");
    let hidden = samples(&after, "icegate_list_entries_hidden_total");
    assert_eq!(hidden, vec![(String::new(), 15.0)], "five of ten hidden, three times");
    assert!(samples(&after, "icegate_decision_duration_seconds_count")[0].1 >= 4.0);
    assert_eq!(send(admin_addr, "GET", "/nope", &[], b"").await.status, 404);
}

/// Every line is a comment, or `name{labels} value` with a name starting `icegate_`.
fn assert_prometheus_text(text: &str) {
    assert!(text.ends_with("# EOF\n"), "{text}");
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("`{line}`"));
        assert!(series.starts_with("icegate_"), "`{line}`");
        assert!(value.parse::<f64>().is_ok(), "`{line}`");
        if let Some((_, labels)) = series.split_once('{') {
            assert!(labels.ends_with('}'), "`{line}`");
        }
    }
}
