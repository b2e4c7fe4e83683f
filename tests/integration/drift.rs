//! Regressions of `explain` and shadow decisions drifting from enforcement (issue 17): the
//! offline decision must forward what the proxy forwards, and a shadow decision must replay
//! what the upstream told the served request instead of deciding without it.

use crate::fake_upstream::{FakeUpstream, Recorded, Reply, basic, gate, send};
use crate::reload::{samples, start};
use crate::support::TempDir;
use icegate::core::decide::Settings;
use icegate::core::offline::{Input, decide};
use icegate::core::roles::Principal;
use serde_json::json;
use std::sync::Arc;

const METRICS: &str = "/v1/prod/namespaces/sales/tables/orders/metrics";
const TABLE: &str = "/v1/prod/namespaces/sales/tables/orders";
const FRESH: &str = "/v1/prod/namespaces/sales/tables/fresh";
const CREATE: &str = "/v1/prod/namespaces/sales/tables";

/// `user` with `privileges` on the schema `prod.sales`, and `extra` YAML after the roles.
fn policy(user: &str, privileges: &[&str], extra: &str) -> String {
    let privileges: Vec<String> =
        privileges.iter().map(|p| format!("          - {{ name: {p}, condition: ALLOW }}\n")).collect();
    format!(
        r#"
version: 1
metalake: lake
default_catalog: prod
users:
  - {{ name: {user}, roles: [r] }}
roles:
  - name: r
    securableObjects:
      - {{ type: CATALOG, fullName: prod, privileges: [{{ name: USE_CATALOG, condition: ALLOW }}] }}
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - {{ name: USE_SCHEMA, condition: ALLOW }}
{}{extra}"#,
        privileges.concat()
    )
}

/// How many disagreements the shadow decisions have counted so far.
fn disagreements(shared: &icegate::serve::pipeline::state::Shared) -> f64 {
    samples(&shared.metrics.render(), "icegate_shadow_disagreements_total").iter().map(|(_, v)| v).sum()
}

#[tokio::test]
async fn finding_explain_forwards_a_streamed_body_over_the_cap_as_the_proxy_does() {
    // reportMetrics' body is not inspected: the proxy streams it whatever its size
    let p = policy("ann", &["SELECT_TABLE", "MODIFY_TABLE"], "");
    let upstream = FakeUpstream::start(|_: &Recorded| Reply::ok()).await;
    let g = gate(&upstream.url(""), &p, |c| c.limits.max_body_bytes = 1024).await;
    let body = json!({"report-type": "scan-report", "padding": "x".repeat(2000)}).to_string();
    let auth = basic("ann");
    let served = send(
        g.addr,
        "POST",
        METRICS,
        &[("authorization", &auth), ("content-type", "application/json")],
        body.as_bytes(),
    )
    .await;
    assert_eq!(served.status, 200, "{}", served.text());
    assert_eq!(upstream.only_forwarded().body.len(), body.len());
    // explain decides it the same way
    let snapshot = crate::support::load(&p);
    let settings = Settings { max_body_bytes: 1024, ..Settings::default() };
    let input = Input {
        method: "POST",
        target: METRICS,
        principal: Principal { user: "ann".into(), groups: vec![], claim_roles: None },
        active_roles: None,
        body: Some(body.as_bytes()),
        exists: true,
        list_response: None,
        namespace_location: None,
        table_metadata: None,
    };
    let explained = decide(&snapshot, &settings, &input);
    assert_eq!(explained.status, 200, "{}", explained.reason);
}

#[tokio::test]
async fn finding_shadow_replays_the_location_the_upstream_assigned_to_a_staged_create() {
    // The live policy lets carl create tables; the candidate also makes him the schema's owner,
    // which allows an explicit location too. The commit sets the location the upstream
    // assigned, which both allow: no disagreement, though without the upstream's answer the
    // live policy would refuse it as an explicit location.
    let upstream = FakeUpstream::start(|r: &Recorded| match (r.method.as_str(), r.target.as_str()) {
        ("POST", CREATE) => {
            Reply::json(200, json!({"metadata": {"format-version": 2, "location": "s3://lake/sales/fresh"}}))
        }
        ("HEAD", _) => Reply::raw(404, ""),
        _ => Reply::ok(),
    })
    .await;
    let dir = TempDir::new("drift-staged");
    let live = dir.write("live.yaml", &policy("carl", &["CREATE_TABLE"], ""));
    let owner = "owners:\n  - { type: SCHEMA, fullName: prod.sales, owner: carl, ownerType: USER }\n";
    let candidate = dir.write("candidate.yaml", &policy("carl", &["CREATE_TABLE"], owner));
    let (addr, shared) = start(&upstream, &live, Some(&candidate)).await;
    let commit = json!({
        "requirements": [{"type": "assert-create"}],
        "updates": [{"action": "set-location", "location": "s3://lake/sales/fresh"}],
    });
    let auth = basic("carl");
    let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
    let a = send(addr, "POST", FRESH, &headers, commit.to_string().as_bytes()).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert!(upstream.requests().iter().any(|r| r.method == "POST" && r.target == FRESH), "the commit was forwarded");
    settle(&shared).await;
    assert_eq!(disagreements(&shared), 0.0, "the shadow decision did not replay the assigned location");
}

#[tokio::test]
async fn finding_shadow_replays_the_sign_location_check() {
    // The live policy lets alice read the table, but the object she asks to sign is another
    // table's: enforcement refuses it (403). The candidate refuses reading at all (403): the
    // two agree, though without the sign check's answer the live policy would allow it.
    let load = json!({
        "metadata-location": "s3://lake/wh/sales/orders/metadata/1.json",
        "metadata": {"format-version": 2, "table-uuid": "u", "location": "s3://lake/wh/sales/orders", "properties": {}, "schemas": []},
        "config": {},
    })
    .to_string();
    let upstream = FakeUpstream::start(move |r: &Recorded| match (r.method.as_str(), r.target.as_str()) {
        ("GET", TABLE) => Reply::raw(200, &load),
        _ => Reply::ok(),
    })
    .await;
    let dir = TempDir::new("drift-sign");
    let live = dir.write("live.yaml", &policy("alice", &["SELECT_TABLE"], ""));
    let candidate = dir.write("candidate.yaml", &policy("alice", &[], ""));
    let (addr, shared) = start(&upstream, &live, Some(&candidate)).await;
    let sign = json!({
        "region": "us-east-1",
        "method": "GET",
        "uri": "https://lake.s3.amazonaws.com/wh/sales/payroll/data/f.parquet",
        "headers": {},
    });
    let auth = basic("alice");
    let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
    let a = send(addr, "POST", &format!("{TABLE}/sign"), &headers, sign.to_string().as_bytes()).await;
    a.assert_error(403, "ForbiddenException");
    settle(&shared).await;
    assert_eq!(disagreements(&shared), 0.0, "the shadow decision did not replay the sign-location check");
}

/// Waits until every shadow decision of an answered request has been made (they run after the
/// response, on tasks of their own).
pub(crate) async fn settle(shared: &Arc<icegate::serve::pipeline::state::Shared>) {
    for _ in 0..10_000 {
        if shared.shadow_pending() == 0 {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("shadow decisions still pending");
}
