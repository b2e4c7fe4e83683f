//! The serving path end to end: icegate in-process in front of a fake catalog that records what
//! it receives. Every test checks both what the client got and what reached the upstream.

use crate::fake_upstream::{Answer, FakeUpstream, Reply, basic, gate, raw, send};
use crate::support::SALES_POLICY as POLICY;
use serde_json::json;
use std::time::Duration;

const LOAD_ORDERS: &str = "/v1/prod/namespaces/sales/tables/orders";

/// A fake catalog answering `{}` 200 to everything, and icegate in front of it.
async fn setup() -> (FakeUpstream, crate::fake_upstream::Gate) {
    setup_with(Reply::empty_catalog, |_| {}).await
}

async fn setup_with(
    script: impl Fn(&crate::fake_upstream::Recorded) -> Reply + Send + Sync + 'static,
    tweak: impl FnOnce(&mut icegate::config::Config),
) -> (FakeUpstream, crate::fake_upstream::Gate) {
    let upstream = FakeUpstream::start(script).await;
    let gate = gate(&upstream.url(""), POLICY, tweak).await;
    (upstream, gate)
}

async fn get(g: &crate::fake_upstream::Gate, user: &str, target: &str) -> Answer {
    send(g.addr, "GET", target, &[("authorization", &basic(user))], b"").await
}

const CREATE: &str = "/v1/prod/namespaces/sales/tables";

async fn create(g: &crate::fake_upstream::Gate, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let auth = basic("bob");
    let mut all = vec![("authorization", auth.as_str())];
    all.extend_from_slice(headers);
    send(g.addr, "POST", CREATE, &all, body).await
}

const LIST: &str = "/v1/prod/namespaces/sales/tables";

fn idents(names: &[&str]) -> serde_json::Value {
    json!(names.iter().map(|n| json!({"namespace":["sales"],"name":n})).collect::<Vec<_>>())
}

fn names(v: &serde_json::Value) -> Vec<String> {
    v["identifiers"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap().to_owned()).collect()
}

mod audit;
mod bodies;
mod findings;
mod limits;
mod lists;
mod requests;
