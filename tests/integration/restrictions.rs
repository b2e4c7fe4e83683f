//! Read restrictions on the served path (docs/design.md §8), against the recording fake catalog:
//! the exact `read-restrictions` a trusted reader's loadTable-like answer carries, merged with
//! the upstream's own, failing closed when the policy names what the table lacks, and the
//! refusal of a client that is not trusted to enforce them (which never reaches the upstream).

use crate::fake_upstream::{FakeUpstream, Gate, Recorded, Reply, basic, gate, send};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

const POLICY: &str = r#"
version: 1
metalake: lake
default_catalog: prod
users:
  - { name: trino, roles: [analyst] }
  - { name: bob, roles: [analyst] }
  - { name: hr, roles: [analyst, pii_reader] }
roles:
  - name: analyst
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: SELECT_TABLE, condition: ALLOW }
          - { name: CREATE_TABLE, condition: ALLOW }
  - name: pii_reader
restrictions:
  - name: eu rows
    object: { type: SCHEMA, fullName: prod.sales }
    unless_roles: [pii_reader]
    row_filter: { type: and, left: { type: eq, term: region, value: EU }, right: { type: not-null, term: address.city } }
  - object: { type: TABLE, fullName: prod.sales.customers }
    unless_roles: [pii_reader]
    columns: { email: mask-alphanum, ssn: replace-with-null, address.city: show-first-4 }
restriction_enforcers: { users: [trino] }
"#;

const TABLE: &str = "/v1/prod/namespaces/sales/tables/customers";

/// Schema 1 is current: `email` and `region` renamed from schema 0's and reordered; ids stay.
const METADATA: &str = r#"{"format-version":2,"table-uuid":"u","location":"s3://lake/sales/customers","properties":{},"current-schema-id":1,"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"mail","required":false,"type":"string"},{"id":2,"name":"ssn","required":false,"type":"string"}]},{"type":"struct","schema-id":1,"fields":[{"id":5,"name":"region","required":false,"type":"string"},{"id":2,"name":"ssn","required":false,"type":"string"},{"id":1,"name":"email","required":false,"type":"string"},{"id":3,"name":"address","required":false,"type":{"type":"struct","fields":[{"id":4,"name":"city","required":false,"type":"string"}]}}]}]}"#;

fn load_answer(extra: &str) -> String {
    format!(
        r#"{{"metadata-location":"s3://lake/sales/customers/metadata/1.json","metadata":{METADATA},"config":{{"client.region":"eu-west-1"}}{extra}}}"#
    )
}

/// The fake catalog answers loads and creates with `answer`.
async fn setup(answer: String) -> (FakeUpstream, Gate) {
    let answer = Arc::new(Mutex::new(answer));
    let upstream = FakeUpstream::start(move |r: &Recorded| match r.method.as_str() {
        "GET" | "POST" => Reply::raw(200, &answer.lock().unwrap()),
        // nothing collides with a create
        "HEAD" => Reply::raw(404, ""),
        _ => Reply::ok(),
    })
    .await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    (upstream, g)
}

async fn load(g: &Gate, user: &str, roles: Option<&str>) -> crate::fake_upstream::Answer {
    let auth = basic(user);
    let mut headers = vec![("authorization", auth.as_str())];
    if let Some(r) = roles {
        headers.push(("x-gravitino-active-roles", r));
    }
    send(g.addr, "GET", TABLE, &headers, b"").await
}

fn expected_filter() -> Value {
    json!({"type": "and",
        "left": {"type": "eq", "left": {"type": "reference", "id": 5}, "right": "EU"},
        "right": {"type": "not-null", "child": {"type": "reference", "id": 4}}})
}

#[tokio::test]
async fn an_enforcers_load_table_carries_the_restrictions_by_field_id_of_the_current_schema() {
    let (_upstream, g) = setup(load_answer("")).await;
    let a = load(&g, "trino", None).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert!(a.text().contains(&format!(r#""metadata":{METADATA}"#)), "metadata passes byte for byte");
    let v = a.json();
    assert_eq!(
        v["read-restrictions"],
        json!({
            "required-row-filter": expected_filter(),
            "required-column-projections": [
                {"field-id": 1, "action": "mask-alphanum"},
                {"field-id": 2, "action": "replace-with-null"},
                {"field-id": 4, "action": "show-first-4"}]
        })
    );
    assert_eq!(v["config"], json!({"client.region": "eu-west-1"}));
}

#[tokio::test]
async fn the_upstreams_own_read_restrictions_are_merged_not_replaced() {
    let upstream_own = r#","read-restrictions":{"required-row-filter":{"type":"gt","left":{"type":"reference","id":2},"right":"0"},"required-column-projections":[{"field-id":1,"action":"sha-256-global"},{"field-id":5,"action":"mask-alphanum"}]}"#;
    let (_upstream, g) = setup(load_answer(upstream_own)).await;
    let a = load(&g, "trino", None).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.text().matches("read-restrictions").count(), 1);
    assert_eq!(
        a.json()["read-restrictions"],
        json!({
            "required-row-filter": {"type": "and",
                "left": {"type": "gt", "left": {"type": "reference", "id": 2}, "right": "0"},
                "right": expected_filter()},
            "required-column-projections": [
                {"field-id": 1, "action": "replace-with-null"},
                {"field-id": 5, "action": "mask-alphanum"},
                {"field-id": 2, "action": "replace-with-null"},
                {"field-id": 4, "action": "show-first-4"}]
        })
    );
}

#[tokio::test]
async fn a_column_the_current_schema_lacks_fails_closed() {
    // the current schema dropped `ssn`: the policy names what the table does not have
    let without_ssn =
        load_answer("").replace(r#"{"id":2,"name":"ssn","required":false,"type":"string"},{"id":1"#, r#"{"id":1"#);
    assert!(
        !without_ssn
            .contains(r#""schema-id":1,"fields":[{"id":5,"name":"region","required":false,"type":"string"},{"id":2"#)
    );
    let (_upstream, g) = setup(without_ssn).await;
    let a = load(&g, "trino", None).await;
    let message = a.assert_error(403, "ForbiddenException");
    assert!(message.contains("read restrictions icegate cannot issue"), "{message}");
    assert!(
        !a.text().contains("metadata") && !a.text().contains("ssn"),
        "nothing of the table or policy: {}",
        a.text()
    );
}

#[tokio::test]
async fn a_client_not_trusted_to_enforce_them_is_refused_before_the_upstream_is_asked() {
    let (upstream, g) = setup(load_answer("")).await;
    let a = load(&g, "bob", None).await;
    let message = a.assert_error(403, "ForbiddenException");
    assert!(message.contains("has read restrictions") && message.contains("not trusted to enforce"), "{message}");
    assert!(upstream.requests().iter().all(|r| r.method != "GET"), "{:?}", upstream.requests());
}

#[tokio::test]
async fn a_role_that_lifts_them_gives_the_raw_answer_and_narrowing_it_away_refuses() {
    let (_upstream, g) = setup(load_answer("")).await;
    let a = load(&g, "hr", None).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert!(a.json().get("read-restrictions").is_none());
    load(&g, "hr", Some("analyst")).await.assert_error(403, "ForbiddenException");
}

#[tokio::test]
async fn an_enforcers_create_in_a_restricted_schema_carries_the_schemas_restrictions() {
    let (_upstream, g) = setup(load_answer("")).await;
    let body = json!({"name": "customers", "schema": {"type": "struct", "fields": []}}).to_string();
    let auth = basic("trino");
    let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
    let a = send(g.addr, "POST", "/v1/prod/namespaces/sales/tables", &headers, body.as_bytes()).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["read-restrictions"]["required-row-filter"], expected_filter());
}

/// `check` (and every load) refuses a restriction it could not issue, with file and line.
#[test]
fn a_malformed_restriction_is_refused_with_its_file_and_line() {
    let policy = r#"version: 1
metalake: lake
roles:
  - name: analyst
restrictions:
  - object: { type: VIEW, fullName: prod.sales.v }
    columns: { a: mask-alphanum }
  - object: { type: TABLE, fullName: prod.sales }
    columns: { a: mask-alphanum }
  - object: { type: TABLE, fullName: prod.sales.t }
    unless_roles: [nobody]
    row_filter: { type: like, term: a, value: x }
    columns:
      "a..b": mask-alphanum
      c: mask-everything
  - object: { type: SCHEMA, fullName: prod.sales }
restriction_enforcers: { users: [trino] }
"#;
    let Err(e) = icegate::core::policy::load_str("p.yaml", policy) else { panic!("the policy loaded") };
    let e = e.to_string();
    for wanted in [
        "p.yaml:6: restriction on VIEW `prod.sales.v`: read restrictions apply to tables",
        "p.yaml:8: full name `prod.sales` does not fit type TABLE",
        "p.yaml:11: restriction on TABLE `prod.sales.t` lists undefined role `nobody` in `unless_roles`",
        "p.yaml:12: restriction on TABLE `prod.sales.t` has a malformed `row_filter`: unknown expression type `like`",
        "which is not a column path",
        "gives column `c` unknown action `mask-everything`; expected one of `mask-alphanum`",
        "p.yaml:16: restriction on SCHEMA `prod.sales` restricts nothing",
    ] {
        assert!(e.contains(wanted), "missing {wanted:?} in:\n{e}");
    }
}

/// `who-can` marks restricted access, and `diff` shows a restriction added as a change.
#[test]
fn who_can_and_diff_mark_restricted_access() {
    use icegate::core::analysis::access::{Object, Right};
    use icegate::core::analysis::{diff, who_can};
    use icegate::core::policy::model::ObjectType;
    let snap = crate::support::load(POLICY);
    let object = Object::parse(ObjectType::Table, "prod.sales.customers", "lake").unwrap();
    let right = Right::parse("SELECT_TABLE").unwrap();
    let lines: Vec<Value> =
        who_can::who_can(&snap, right, &object).iter().map(|h| serde_json::to_value(h).unwrap()).collect();
    let of = |user: &str| lines.iter().find(|l| l["user"] == user).cloned().unwrap();
    assert_eq!(
        of("trino")["restricted"],
        json!({"applied": ["eu rows", "TABLE `prod.sales.customers`"], "trusted": true})
    );
    assert_eq!(of("bob")["restricted"]["trusted"], false);
    assert!(of("hr").get("restricted").is_none(), "pii_reader lifts both: {lines:?}");

    let unrestricted = POLICY.split("restrictions:\n").next().unwrap();
    let old = crate::support::load(unrestricted);
    let changes: Vec<Value> = diff::diff(&old, &snap).iter().map(|c| serde_json::to_value(c).unwrap()).collect();
    let bob_sales = changes
        .iter()
        .find(|c| {
            c["subject"] == "user:bob" && c["object"]["fullName"] == "prod.sales" && c["privilege"] == "SELECT_TABLE"
        })
        .unwrap_or_else(|| panic!("{changes:#?}"));
    assert_eq!(bob_sales["before"], "allow");
    assert_eq!(bob_sales["after"], "allow");
    assert_eq!(bob_sales["restricted"], json!({"before": false, "after": true}));
    assert!(!changes.iter().any(|c| c["subject"] == "user:hr"), "{changes:#?}");
}
