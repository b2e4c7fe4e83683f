//! Issue 28: where a table's data may live. Anyone who could create one table owned it, and a
//! data-moving update needed only `own(table)`, so a creator could point its table at another
//! table's files and read them with its credentials. Each `finding_*` test reproduces one way
//! against the recording fake catalog and asserts the answer and what reached the catalog
//! (docs/design.md §4 "Locations are placed only by owners, and only inside what they own").

use super::Lab;
use crate::fake_upstream::{Recorded, Reply};
use serde_json::{Value, json};

/// carl may create tables in `prod.sales` and owns `prod.sales.mine` (as its creator would);
/// sonia owns the schemas `prod.sales`, `prod.sandbox` and `prod.dark`; root owns the catalog.
const POLICY: &str = r#"
version: 1
metalake: lake
default_catalog: prod
users:
  - { name: carl, roles: [creator] }
  - { name: sonia, roles: [member] }
  - { name: root }
roles:
  - name: member
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
  - name: creator
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: CREATE_TABLE, condition: ALLOW }
owners:
  - { type: CATALOG, fullName: prod, owner: root, ownerType: USER }
  - { type: SCHEMA, fullName: prod.sales, owner: sonia, ownerType: USER }
  - { type: SCHEMA, fullName: prod.sandbox, owner: sonia, ownerType: USER }
  - { type: SCHEMA, fullName: prod.dark, owner: sonia, ownerType: USER }
  - { type: TABLE, fullName: prod.sales.mine, owner: carl, ownerType: USER }
"#;

const MINE: &str = "/v1/prod/namespaces/sales/tables/mine";
const SALES: &str = "/v1/prod/namespaces/sales";
const CREATE: &str = "/v1/prod/namespaces/sales/tables";
const SANDBOX_CREATE: &str = "/v1/prod/namespaces/sandbox/tables";

/// `sales` reports its directory as a property; `sandbox` reports none, and its stage-creates are
/// placed under `s3://lake/sandbox`; `dark` answers neither question.
fn catalog(r: &Recorded) -> Reply {
    let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    match (r.method.as_str(), r.target.as_str()) {
        ("GET", SALES) => {
            Reply::json(200, json!({"namespace": ["sales"], "properties": {"location": "s3://lake/sales"}}))
        }
        ("GET", "/v1/prod/namespaces/sandbox") => Reply::json(200, json!({"namespace": ["sandbox"], "properties": {}})),
        ("POST", SANDBOX_CREATE) if body["stage-create"] == json!(true) => {
            let location = format!("s3://lake/sandbox/{}", body["name"].as_str().unwrap_or_default());
            Reply::json(200, json!({"metadata": {"format-version": 2, "location": location}, "config": {}}))
        }
        (_, t) if t.starts_with("/v1/prod/namespaces/dark") => Reply::raw(500, ""),
        ("HEAD", _) => Reply::raw(404, ""),
        _ => Reply::ok(),
    }
}

fn json_body(v: &Value) -> Vec<u8> {
    v.to_string().into_bytes()
}

fn set_location(location: &str) -> Vec<u8> {
    json_body(&json!({"requirements": [], "updates": [{"action": "set-location", "location": location}]}))
}

fn create_at(name: &str, location: &str) -> Vec<u8> {
    json_body(&json!({"name": name, "location": location, "schema": {"type": "struct", "fields": []}}))
}

/// How often the upstream received `method` on `target`, not counting icegate's own
/// stage-creates (its questions about where the upstream places a table).
fn received(lab: &Lab, method: &str, target: &str) -> usize {
    let question =
        |r: &Recorded| serde_json::from_slice::<Value>(&r.body).is_ok_and(|b| b["stage-create"] == json!(true));
    lab.up.requests().iter().filter(|r| r.method == method && r.target == target && !question(r)).count()
}

#[tokio::test]
async fn finding_a_table_owner_cannot_point_its_table_at_another_tables_files() {
    let lab = Lab::with_policy(POLICY, catalog, |_| {}).await;
    let message = lab.call("carl", "POST", MINE, &[], &set_location("s3://lake/hr/payroll")).await;
    message.assert_error(403, "ForbiddenException");
    // inside its own namespace too: a table's owner is often just its creator
    lab.call("carl", "POST", MINE, &[], &set_location("s3://lake/sales/mine_v2"))
        .await
        .assert_error(403, "ForbiddenException");
    let data_path = json_body(
        &json!({"updates": [{"action": "set-properties", "updates": {"write.data.path": "s3://lake/hr/payroll/data"}}]}),
    );
    lab.call("carl", "POST", MINE, &[], &data_path).await.assert_error(403, "ForbiddenException");
    let transaction = json_body(&json!({"table-changes": [{
        "identifier": {"namespace": ["sales"], "name": "mine"},
        "updates": [{"action": "set-location", "location": "s3://lake/hr/payroll"}]}]}));
    lab.call("carl", "POST", "/v1/prod/transactions/commit", &[], &transaction)
        .await
        .assert_error(403, "ForbiddenException");
    lab.up.assert_untouched();
    // everything else about its table stays its own
    let retries =
        json_body(&json!({"updates": [{"action": "set-properties", "updates": {"commit.retry.num-retries": "5"}}]}));
    assert_eq!(lab.call("carl", "POST", MINE, &[], &retries).await.status, 200);
    assert_eq!(received(&lab, "POST", MINE), 1);
}

#[tokio::test]
async fn finding_a_schema_owner_places_data_only_inside_its_namespace_directory() {
    let lab = Lab::with_policy(POLICY, catalog, |_| {}).await;
    let outside = lab.call("sonia", "POST", CREATE, &[], &create_at("grab", "s3://lake/hr/payroll")).await;
    let message = outside.assert_error(403, "ForbiddenException");
    assert!(message.contains("`s3://lake/sales`"), "the message names the directory: {message}");
    let prefix = lab.call("sonia", "POST", CREATE, &[], &create_at("grab", "s3://lake/sales_archive/x")).await;
    prefix.assert_error(403, "ForbiddenException");
    let staged = json_body(&json!({"requirements": [{"type": "assert-create"}],
        "updates": [{"action": "set-location", "location": "s3://lake/hr/payroll"}]}));
    lab.call("sonia", "POST", "/v1/prod/namespaces/sales/tables/fresh", &[], &staged)
        .await
        .assert_error(403, "ForbiddenException");
    lab.call("sonia", "POST", MINE, &[], &set_location("s3://lake/sales/../hr/payroll"))
        .await
        .assert_error(400, "BadRequestException");
    assert_eq!(received(&lab, "POST", CREATE), 0, "a create was forwarded");
    assert_eq!(received(&lab, "POST", MINE), 0, "an update was forwarded");
    // inside: forwarded, and the directory was asked once (then cached)
    let inside = lab.call("sonia", "POST", CREATE, &[], &create_at("custom", "s3://lake/sales/custom")).await;
    assert_eq!(inside.status, 200, "{}", inside.text());
    assert_eq!(lab.call("sonia", "POST", MINE, &[], &set_location("s3a://lake/sales/mine_v2/")).await.status, 200);
    assert_eq!((received(&lab, "POST", CREATE), received(&lab, "POST", MINE)), (1, 1));
    assert_eq!(received(&lab, "GET", SALES), 1, "{:#?}", lab.targets());
}

#[tokio::test]
async fn finding_a_namespace_directory_is_learned_from_a_stage_create_when_it_has_no_location_property() {
    let lab = Lab::with_policy(POLICY, catalog, |_| {}).await;
    let inside = lab.call("sonia", "POST", SANDBOX_CREATE, &[], &create_at("t", "s3://lake/sandbox/t")).await;
    assert_eq!(inside.status, 200, "{}", inside.text());
    let requests = lab.up.requests();
    let probes: Vec<Value> = requests
        .iter()
        .filter(|r| r.target == SANDBOX_CREATE)
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .filter(|b: &Value| b["stage-create"] == json!(true))
        .collect();
    assert_eq!(probes.len(), 1, "{requests:#?}");
    let probe = probes[0]["name"].as_str().unwrap();
    assert!(probe.starts_with("icegate_location_probe_"), "a name no object has: {probe}");
    lab.call("sonia", "POST", SANDBOX_CREATE, &[], &create_at("u", "s3://lake/sales/u"))
        .await
        .assert_error(403, "ForbiddenException");
}

#[tokio::test]
async fn a_namespace_directory_the_upstream_cannot_tell_is_503_and_nothing_is_forwarded() {
    let lab = Lab::with_policy(POLICY, catalog, |_| {}).await;
    let create = "/v1/prod/namespaces/dark/tables";
    lab.call("sonia", "POST", create, &[], &create_at("t", "s3://lake/dark/t"))
        .await
        .assert_error(503, "ServiceUnavailableException");
    let requests = lab.up.requests();
    assert!(
        requests.iter().all(|r| r.target != create || serde_json::from_slice::<Value>(&r.body).unwrap()["name"] != "t"),
        "the create was forwarded: {requests:#?}"
    );
}

#[tokio::test]
async fn the_catalog_owner_places_data_anywhere_without_a_question() {
    let lab = Lab::with_policy(POLICY, catalog, |_| {}).await;
    let a = lab.call("root", "POST", CREATE, &[], &create_at("external", "s3://archive/2019/sales")).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(received(&lab, "GET", SALES), 0, "TOP needs no directory");
}

#[tokio::test]
async fn finding_register_table_needs_the_catalog_owner() {
    let lab = Lab::with_policy(POLICY, catalog, |_| {}).await;
    let register = json_body(&json!({"name": "copy", "metadata-location": "s3://lake/hr/payroll/metadata/1.json"}));
    let path = "/v1/prod/namespaces/sales/register";
    lab.call("sonia", "POST", path, &[], &register).await.assert_error(403, "ForbiddenException");
    lab.up.assert_untouched();
    assert_eq!(lab.call("root", "POST", path, &[], &register).await.status, 200);
    assert_eq!(received(&lab, "POST", path), 1);
}

#[tokio::test]
async fn finding_a_purge_needs_the_catalog_owner() {
    let lab = Lab::with_policy(POLICY, catalog, |_| {}).await;
    for purge in ["true", "TRUE", "True"] {
        let target = format!("{MINE}?purgeRequested={purge}");
        let message = lab.call("carl", "DELETE", &target, &[], b"").await.assert_error(403, "ForbiddenException");
        assert!(message.contains("without `purgeRequested`"), "the message says how to drop: {message}");
        lab.call("sonia", "DELETE", &target, &[], b"").await.assert_error(403, "ForbiddenException");
    }
    lab.up.assert_untouched();
    assert_eq!(lab.call("carl", "DELETE", MINE, &[], b"").await.status, 200);
    assert_eq!(lab.call("carl", "DELETE", &format!("{MINE}?purgeRequested=false"), &[], b"").await.status, 200);
    assert_eq!(lab.call("root", "DELETE", &format!("{MINE}?purgeRequested=true"), &[], b"").await.status, 200);
    assert_eq!(received(&lab, "DELETE", &format!("{MINE}?purgeRequested=true")), 1);
}
