//! One poll of a Gravitino metalake of 10,000 tables (100 schemas of 100, each table owned, 50
//! roles of 200 grants, 1,000 users), served by a fake of Gravitino's REST API over loopback
//! HTTP on a runtime of its own: the whole poll as the reload task makes it
//! (`ops::reload::poll_gravitino`: every call, `gravitino.concurrency` in flight, the
//! plausibility check, the load of the snapshot and its publication), a poll that finds nothing
//! changed, and the baseline: the same calls made by the same HTTP client at the same
//! concurrency with their answers read and dropped, nothing decoded. Run with
//! `cargo bench --bench gravitino_poll`; `-- --concurrency N` (default 16), `-- --rounds N`
//! (default 5; medians are printed), `-- --latency-ms N` (the fake waits N ms before each answer,
//! as a server across a network would; default 0).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::string_slice,
    reason = "a test or benchmark that fails panics"
)]

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use icegate::config::Config;
use icegate::core::clock::Clock;
use icegate::ops::metrics::Metrics;
use icegate::ops::reload::{Host, Outcome, poll_gravitino};
use icegate::ops::state::{DecisionState, Health, Published};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SCHEMAS: usize = 100;
const TABLES: usize = 100;
const ROLES: usize = 50;
const USERS: usize = 1_000;

/// The fake's answer to a GET of `path` (query included).
fn answer(path: &str) -> Value {
    let rest = path.strip_prefix("/api/metalakes/lake").unwrap_or("");
    let parts: Vec<&str> = rest.split('/').skip(1).collect();
    match parts.as_slice() {
        ["roles"] => json!({"code": 0, "names": (0..ROLES).map(|r| format!("role{r}")).collect::<Vec<_>>()}),
        ["roles", r] => {
            let n: usize = r.trim_start_matches("role").parse().unwrap();
            // each role: 200 table grants spread over the metalake, and its schemas' usage
            let mut objects = vec![
                json!({"fullName": "prod", "type": "catalog", "privileges": [{"name": "use_catalog", "condition": "allow"}]}),
            ];
            for i in 0..200 {
                let t = (n * 200 + i) % (SCHEMAS * TABLES);
                objects.push(json!({"fullName": format!("prod.s{}.t{}", t / TABLES, t % TABLES), "type": "table",
                    "privileges": [{"name": "select_table", "condition": if i % 10 == 0 { "deny" } else { "allow" }}]}));
            }
            json!({"code": 0, "role": {"name": r, "properties": {}, "securableObjects": objects}})
        }
        ["users?details=true"] => {
            let mut users: Vec<Value> = (0..USERS)
                .map(|u| json!({"name": format!("user{u}"), "roles": [format!("role{}", u % ROLES)]}))
                .collect();
            users.push(json!({"name": "icegate", "roles": []}));
            json!({"code": 0, "users": users})
        }
        ["groups?details=true"] => json!({"code": 0, "groups": [{"name": "analysts", "roles": ["role0"]}]}),
        ["catalogs?details=true"] => json!({"code": 0, "catalogs": [{"name": "prod", "type": "relational"}]}),
        ["catalogs", "prod", "schemas"] => {
            json!({"code": 0, "identifiers": (0..SCHEMAS).map(|s| json!({"namespace": ["lake", "prod"], "name": format!("s{s}")})).collect::<Vec<_>>()})
        }
        ["catalogs", "prod", "schemas", s, "tables"] => {
            json!({"code": 0, "identifiers": (0..TABLES).map(|t| json!({"namespace": ["lake", "prod", s], "name": format!("t{t}")})).collect::<Vec<_>>()})
        }
        ["catalogs", "prod", "schemas", _, "views"] => json!({"code": 0, "identifiers": []}),
        ["owners", _, name] => {
            json!({"code": 0, "owner": {"name": format!("user{}", name.len() % USERS), "type": "USER"}})
        }
        _ => json!({"code": 1003, "type": "NotFound", "message": path}),
    }
}

/// What the fake was asked, while `recording`.
#[derive(Default)]
struct Asked {
    recording: AtomicBool,
    paths: Mutex<Vec<String>>,
}

async fn serve(listener: tokio::net::TcpListener, asked: Arc<Asked>, latency: Duration) {
    while let Ok((stream, _)) = listener.accept().await {
        let asked = Arc::clone(&asked);
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let asked = Arc::clone(&asked);
            async move {
                let path = request.uri().path_and_query().map(ToString::to_string).unwrap_or_default();
                if asked.recording.load(Ordering::Relaxed) {
                    asked.paths.lock().unwrap().push(path.clone());
                }
                let body = answer(&path).to_string();
                if !latency.is_zero() {
                    tokio::time::sleep(latency).await;
                }
                Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::from(body))))
            }
        });
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// A serving process's state, as the reload task publishes into it: nothing read yet.
struct Serving {
    config: Config,
    state: Published,
    health: Health,
    metrics: Metrics,
    clock: Clock,
}

impl Host for Serving {
    fn config(&self) -> &Config {
        &self.config
    }

    fn state(&self) -> &Published {
        &self.state
    }

    fn health(&self) -> &Health {
        &self.health
    }

    fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    fn clock(&self) -> &Clock {
        &self.clock
    }
}

fn unread() -> Arc<Serving> {
    let empty = icegate::core::policy::load_str("unread.yaml", "version: 1\nmetalake: lake\n").unwrap().snapshot;
    let state = DecisionState {
        snapshot: Arc::new(empty),
        generation: 0,
        loaded_at: std::time::SystemTime::now(),
        shadow: None,
        owners: Arc::default(),
        owners_version: 0,
    };
    Arc::new(Serving {
        config: Config::default(),
        state: Published::new(state),
        health: Health::default(),
        metrics: Metrics::new(),
        clock: Clock::real(),
    })
}

/// GETs every path at most `limit` at once, reading and dropping each answer.
async fn bare(client: &reqwest::Client, base: &str, paths: &[String], limit: usize) {
    let permits = Arc::new(tokio::sync::Semaphore::new(limit));
    let mut running = tokio::task::JoinSet::new();
    for path in paths {
        let permit = Arc::clone(&permits).acquire_owned().await.unwrap();
        let (client, url) = (client.clone(), format!("{base}{path}"));
        running.spawn(async move {
            let answer = client.get(url).send().await.unwrap();
            assert!(answer.status().is_success());
            let _ = answer.bytes().await.unwrap();
            drop(permit);
        });
    }
    while let Some(done) = running.join_next().await {
        done.unwrap();
    }
}

fn median(v: &mut [Duration]) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str, default: usize| {
        args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map_or(default, |n| n.parse().unwrap())
    };
    let (concurrency, rounds) = (flag("--concurrency", 16), flag("--rounds", 5).max(1));
    let latency = Duration::from_millis(u64::try_from(flag("--latency-ms", 0)).unwrap());
    // The fake on a runtime of its own, so that its work is not counted as the reader's.
    let fake = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let listener = fake.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    let asked = Arc::new(Asked::default());
    fake.spawn(serve(listener, Arc::clone(&asked), latency));
    let config = icegate::config::Gravitino {
        url: format!("http://{addr}"),
        metalake: "lake".into(),
        user: Some("icegate".into()),
        concurrency,
        ..Default::default()
    };
    let reader = icegate::ops::gravitino::Reader::new(&config).unwrap();
    // the reader on one thread of its own, as the reload task's share of the serving runtime
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();

    // what one read asks, for the baseline and the count
    asked.recording.store(true, Ordering::Relaxed);
    let read = runtime.block_on(reader.read()).unwrap();
    asked.recording.store(false, Ordering::Relaxed);
    let paths = std::mem::take(&mut *asked.paths.lock().unwrap());
    assert_eq!(paths.len(), read.calls, "the reader counts the calls it makes");
    let owners = paths.iter().filter(|p| p.contains("/owners/")).count();
    assert!(owners > SCHEMAS * TABLES, "every table's owner is read ({owners} owner calls)");

    let (mut polls, mut unchanged, mut baselines) = (Vec::new(), Vec::new(), Vec::new());
    let mut stats = String::new();
    for _ in 0..rounds {
        let serving = unread();
        let start = Instant::now();
        let outcome = runtime.block_on(poll_gravitino(&serving, &reader));
        polls.push(start.elapsed());
        assert!(matches!(outcome, Outcome::Reloaded { generation: 1 }), "{outcome:?}");
        stats = serving.state.load().snapshot.stats().to_string();
        let start = Instant::now();
        let outcome = runtime.block_on(poll_gravitino(&serving, &reader));
        unchanged.push(start.elapsed());
        assert!(matches!(outcome, Outcome::Unchanged), "{outcome:?}");
        let client = icegate::net::outbound::shared().unwrap();
        let start = Instant::now();
        runtime.block_on(bare(client.client(), &config.url, &paths, concurrency));
        baselines.push(start.elapsed());
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("model name").map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned()))
        .unwrap_or_default();
    println!(
        "gravitino poll, {} tables, {} calls ({owners} owners), {concurrency} in flight, {} ms a call's latency, median of {rounds}:\n  \
         whole poll (read, check, load, publish) {:.0} ms\n  \
         poll that finds nothing changed (read, check, hash) {:.0} ms\n  \
         baseline, the same calls bare (answers read and dropped) {:.0} ms\n  \
         {stats}\n  machine: {} cores, {cpu}; load average {}",
        SCHEMAS * TABLES,
        paths.len(),
        latency.as_millis(),
        median(&mut polls),
        median(&mut unchanged),
        median(&mut baselines),
        std::thread::available_parallelism().map_or(0, usize::from),
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    );
}
