//! One poll of a Gravitino metalake of 10,000 tables (100 schemas of 100, each table owned, 50
//! roles of 200 grants, 1,000 users), read from an in-process fake of Gravitino's REST API over
//! loopback HTTP: the reads (a call per role and per owner, `gravitino.concurrency` in flight)
//! and the load of the snapshot they make. Run with `cargo bench --bench gravitino_poll`;
//! `-- --concurrency N` to change how many calls are in flight (default 16).
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
use serde_json::{Value, json};
use std::sync::Arc;
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

async fn serve(listener: tokio::net::TcpListener) {
    while let Ok((stream, _)) = listener.accept().await {
        let service = hyper::service::service_fn(|request: hyper::Request<Incoming>| async move {
            let path = request.uri().path_and_query().map(ToString::to_string).unwrap_or_default();
            let body = answer(&path).to_string();
            Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::from(body))))
        });
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let concurrency =
        args.iter().position(|a| a == "--concurrency").and_then(|i| args.get(i + 1)).map_or(16, |n| n.parse().unwrap());
    // The fake on a runtime of its own, so that its work is not counted as the reader's.
    let fake = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let listener = fake.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    fake.spawn(serve(listener));
    let config = icegate::config::Gravitino {
        url: format!("http://{addr}"),
        metalake: "lake".into(),
        user: Some("icegate".into()),
        concurrency,
        ..Default::default()
    };
    let reader = Arc::new(icegate::ops::gravitino::Reader::new(&config).unwrap());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut reads = Vec::new();
    let mut loads = Vec::new();
    let mut calls = 0;
    let mut stats = String::new();
    for _ in 0..5 {
        let start = Instant::now();
        let read = runtime.block_on(reader.read()).unwrap();
        reads.push(start.elapsed());
        calls = read.calls;
        let start = Instant::now();
        let loaded =
            icegate::core::policy::gravitino::load(icegate::core::policy::gravitino::source(&read.document)).unwrap();
        loads.push(start.elapsed());
        stats = loaded.snapshot.stats().to_string();
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    println!(
        "gravitino poll, {} tables, {calls} calls, {concurrency} in flight: read {:.0} ms, load {:.0} ms (median of 5); {stats}",
        SCHEMAS * TABLES,
        median(&mut reads).as_secs_f64() * 1e3,
        median(&mut loads).as_secs_f64() * 1e3,
    );
}
