//! A restriction keeps covering what it covered (docs/design.md §8, issue 44), on the served path
//! against the recording fake catalog: the three bypasses (renaming a restricted table, moving it
//! out of a restricted schema, giving a restricted column's name to another field) are refused
//! before anything is forwarded; the catalog's owner (`TOP`) still may; and the commits that move
//! nothing keep working, the ones that cannot change a schema without a table load at all.

use crate::fake_upstream::{FakeUpstream, Gate, Recorded, Reply, basic, gate, send};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

const POLICY: &str = r#"
version: 1
metalake: lake
default_catalog: prod
users:
  - { name: trino, roles: [analyst] }
  - { name: olga, roles: [analyst] }
  - { name: wes, roles: [writer] }
  - { name: root }
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
      - { type: SCHEMA, fullName: prod.pii, privileges: [{ name: USE_SCHEMA, condition: ALLOW }] }
  - name: writer
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges: [{ name: USE_SCHEMA, condition: ALLOW }, { name: MODIFY_TABLE, condition: ALLOW }]
      - type: SCHEMA
        fullName: prod.hr
        privileges: [{ name: USE_SCHEMA, condition: ALLOW }, { name: MODIFY_TABLE, condition: ALLOW }]
owners:
  - { type: TABLE, fullName: prod.sales.customers, owner: olga, ownerType: USER }
  - { type: TABLE, fullName: prod.pii.people, owner: olga, ownerType: USER }
  - { type: CATALOG, fullName: prod, owner: root, ownerType: USER }
restrictions:
  - name: eu people
    object: { type: SCHEMA, fullName: prod.pii }
    row_filter: { type: eq, term: region, value: EU }
  - name: customer pii
    object: { type: TABLE, fullName: prod.sales.customers }
    columns: { ssn: replace-with-null }
restriction_enforcers: { users: [trino] }
"#;

const CUSTOMERS: &str = "/v1/prod/namespaces/sales/tables/customers";

fn field(id: i64, name: &str) -> Value {
    json!({"id": id, "name": name, "required": false, "type": "string"})
}

fn schema(id: i64, fields: Vec<Value>) -> Value {
    json!({"type": "struct", "schema-id": id, "fields": fields})
}

/// `ssn` is field 2 in the current schema 0.
fn metadata() -> Value {
    json!({"format-version": 2, "table-uuid": "u", "location": "s3://lake/sales/customers", "properties": {},
        "current-schema-id": 0, "schemas": [schema(0, vec![field(1, "id"), field(2, "ssn"), field(3, "region")])]})
}

struct Fake {
    upstream: FakeUpstream,
    gate: Gate,
    /// What a load of a table answers: its metadata, or a status without one.
    load: Arc<Mutex<Result<Value, u16>>>,
}

async fn setup() -> Fake {
    let load = Arc::new(Mutex::new(Ok(metadata())));
    let answer = Arc::clone(&load);
    let upstream = FakeUpstream::start(move |r: &Recorded| match r.method.as_str() {
        "GET" => match &*answer.lock().unwrap() {
            Ok(m) => Reply::json(200, json!({"metadata-location": "s3://lake/m.json", "metadata": m})),
            Err(status) => Reply::raw(*status, ""),
        },
        "HEAD" => Reply::raw(404, ""),
        _ => Reply::json(200, json!({"metadata-location": "s3://lake/m.json", "metadata": metadata()})),
    })
    .await;
    let gate = gate(&upstream.url(""), POLICY, |_| {}).await;
    Fake { upstream, gate, load }
}

async fn post(g: &Gate, user: &str, path: &str, body: &Value) -> crate::fake_upstream::Answer {
    let auth = basic(user);
    let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
    send(g.addr, "POST", path, &headers, body.to_string().as_bytes()).await
}

fn rename(from: (&str, &str), to: (&str, &str)) -> Value {
    json!({"source": {"namespace": [from.0], "name": from.1}, "destination": {"namespace": [to.0], "name": to.1}})
}

fn commit(updates: Value) -> Value {
    json!({"requirements": [], "updates": updates})
}

/// An add-schema made current: the commit a schema change sends.
fn new_schema(fields: Vec<Value>) -> Value {
    commit(
        json!([{"action": "add-schema", "schema": schema(1, fields)}, {"action": "set-current-schema", "schema-id": -1}]),
    )
}

fn decoy() -> Value {
    new_schema(vec![field(1, "id"), field(2, "x"), field(3, "region"), field(4, "ssn")])
}

fn posts(upstream: &FakeUpstream) -> Vec<String> {
    upstream.requests().iter().filter(|r| r.method == "POST").map(|r| r.target.clone()).collect()
}

fn assert_uncovered(a: &crate::fake_upstream::Answer) {
    let message = a.assert_error(403, "ForbiddenException");
    assert!(message.contains("move data out from under a read restriction"), "{message}");
    assert!(message.contains("an administrator must change the policy first"), "{message}");
    assert!(!message.contains("customer pii") && !message.contains("eu people"), "no policy entry: {message}");
}

#[tokio::test]
async fn finding_an_owners_rename_of_a_restricted_table_is_refused_before_the_catalog_is_asked() {
    let f = setup().await;
    let a =
        post(&f.gate, "olga", "/v1/prod/tables/rename", &rename(("sales", "customers"), ("sales", "customers_copy")))
            .await;
    assert_uncovered(&a);
    assert!(f.upstream.requests().is_empty(), "{:?}", f.upstream.requests());
}

#[tokio::test]
async fn finding_an_owners_move_out_of_a_restricted_schema_is_refused_before_the_catalog_is_asked() {
    let f = setup().await;
    let a = post(&f.gate, "olga", "/v1/prod/tables/rename", &rename(("pii", "people"), ("sales", "people"))).await;
    assert_uncovered(&a);
    assert!(f.upstream.requests().is_empty(), "{:?}", f.upstream.requests());
}

#[tokio::test]
async fn finding_a_restricted_columns_name_given_to_another_field_is_refused_before_forwarding() {
    let f = setup().await;
    // rename ssn (2) to x and add a decoy ssn (4) in one commit
    assert_uncovered(&post(&f.gate, "wes", CUSTOMERS, &decoy()).await);
    // set-current-schema to an older schema in which ssn is another column
    *f.load.lock().unwrap() = Ok(json!({"current-schema-id": 1, "schemas": [
        schema(0, vec![field(1, "id"), field(7, "ssn")]),
        schema(1, vec![field(1, "id"), field(2, "ssn"), field(7, "old_ssn")])]}));
    let back = commit(json!([{"action": "set-current-schema", "schema-id": 0}]));
    assert_uncovered(&post(&f.gate, "wes", CUSTOMERS, &back).await);
    // ssn was dropped (schema 1 is current); a new ssn would let time travel read field 2 unmasked
    *f.load.lock().unwrap() = Ok(json!({"current-schema-id": 1, "schemas": [
        schema(0, vec![field(1, "id"), field(2, "ssn")]), schema(1, vec![field(1, "id")])]}));
    assert_uncovered(&post(&f.gate, "wes", CUSTOMERS, &new_schema(vec![field(1, "id"), field(5, "ssn")])).await);
    // remove-schemas erases the history the rule reads: refused without a load
    let loads_before = f.upstream.requests().len();
    let remove = commit(json!([{"action": "remove-schemas", "schema-ids": [0]}]));
    assert_uncovered(&post(&f.gate, "wes", CUSTOMERS, &remove).await);
    assert_eq!(f.upstream.requests().len(), loads_before, "no load for remove-schemas");
    assert!(posts(&f.upstream).is_empty(), "nothing was forwarded: {:?}", posts(&f.upstream));
    assert!(f.upstream.requests().iter().all(|r| r.target == CUSTOMERS), "only loads of the table");
}

#[tokio::test]
async fn the_catalogs_owner_may_do_all_of_it() {
    let f = setup().await;
    let renamed =
        post(&f.gate, "root", "/v1/prod/tables/rename", &rename(("sales", "customers"), ("sales", "c2"))).await;
    assert_eq!(renamed.status, 200, "{}", renamed.text());
    let moved = post(&f.gate, "root", "/v1/prod/tables/rename", &rename(("pii", "people"), ("sales", "people"))).await;
    assert_eq!(moved.status, 200, "{}", moved.text());
    for body in [decoy(), commit(json!([{"action": "remove-schemas", "schema-ids": [0]}]))] {
        let a = post(&f.gate, "root", CUSTOMERS, &body).await;
        assert_eq!(a.status, 200, "{}", a.text());
    }
    assert_eq!(posts(&f.upstream).len(), 4, "{:?}", posts(&f.upstream));
    assert!(f.upstream.requests().iter().all(|r| r.method != "GET"), "TOP costs no load");
}

#[tokio::test]
async fn commits_that_move_nothing_keep_working() {
    let f = setup().await;
    let append = commit(json!([
        {"action": "add-snapshot", "snapshot": {"snapshot-id": 1, "timestamp-ms": 1, "manifest-list": "s3://lake/sales/customers/m.avro", "summary": {"operation": "append"}}},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 1}]));
    let properties = commit(json!([{"action": "set-properties", "updates": {"owner": "sales"}}]));
    for body in [append, properties] {
        let a = post(&f.gate, "wes", CUSTOMERS, &body).await;
        assert_eq!(a.status, 200, "{}", a.text());
    }
    assert!(f.upstream.requests().iter().all(|r| r.method != "GET"), "no schema change, no load");
    let kept = [
        // a new column with a new name
        new_schema(vec![field(1, "id"), field(2, "ssn"), field(3, "region"), field(4, "note")]),
        // renaming the restricted column away with no decoy (its reads then fail closed)
        new_schema(vec![field(1, "id"), field(2, "x"), field(3, "region")]),
        // dropping an unrestricted column
        new_schema(vec![field(1, "id"), field(2, "ssn")]),
    ];
    for body in kept {
        let a = post(&f.gate, "wes", CUSTOMERS, &body).await;
        assert_eq!(a.status, 200, "{body}: {}", a.text());
    }
    assert_eq!(posts(&f.upstream).len(), 5);
}

#[tokio::test]
async fn a_transaction_is_refused_as_a_whole_when_one_of_its_tables_would_be_uncovered() {
    let f = setup().await;
    let change = |ns: &str, name: &str, body: Value| {
        let mut c = body;
        c["identifier"] = json!({"namespace": [ns], "name": name});
        c
    };
    let grow = new_schema(vec![field(1, "id"), field(9, "note")]);
    let mixed = json!({"table-changes": [change("hr", "staff", grow.clone()), change("sales", "customers", decoy())]});
    assert_uncovered(&post(&f.gate, "wes", "/v1/prod/transactions/commit", &mixed).await);
    assert!(posts(&f.upstream).is_empty(), "{:?}", posts(&f.upstream));
    let gets: Vec<String> =
        f.upstream.requests().iter().filter(|r| r.method == "GET").map(|r| r.target.clone()).collect();
    assert_eq!(gets, [CUSTOMERS], "only the restricted table is loaded");
    let fine = json!({"table-changes": [change("hr", "staff", grow), change("sales", "customers", commit(json!([])))]});
    let a = post(&f.gate, "wes", "/v1/prod/transactions/commit", &fine).await;
    assert_eq!(a.status, 200, "{}", a.text());
}

#[tokio::test]
async fn a_commit_whose_table_the_upstream_will_not_load_is_503_and_not_forwarded() {
    let f = setup().await;
    *f.load.lock().unwrap() = Err(500);
    let a = post(&f.gate, "wes", CUSTOMERS, &decoy()).await;
    let message = a.assert_error(503, "ServiceUnavailableException");
    assert!(message.contains("did not answer a load of the table"), "{message}");
    *f.load.lock().unwrap() = Ok(json!({"format-version": 2}));
    post(&f.gate, "wes", CUSTOMERS, &decoy()).await.assert_error(503, "ServiceUnavailableException");
    assert!(posts(&f.upstream).is_empty(), "{:?}", posts(&f.upstream));
}

/// The upstream's 404 for the table is the commit's own answer (the table is missing), as a load
/// for the table's storage relays it; not a 503, and nothing is forwarded.
#[tokio::test]
async fn a_commit_to_a_table_the_upstream_does_not_have_is_its_404_and_not_forwarded() {
    let f = setup().await;
    *f.load.lock().unwrap() = Err(404);
    let message = post(&f.gate, "wes", CUSTOMERS, &decoy()).await.assert_error(404, "NoSuchTableException");
    assert_eq!(message, "table does not exist upstream");
    let change = json!({"identifier": {"namespace": ["sales"], "name": "customers"}, "requirements": [],
        "updates": decoy()["updates"]});
    let tx = json!({"table-changes": [change]});
    post(&f.gate, "wes", "/v1/prod/transactions/commit", &tx).await.assert_error(404, "NoSuchTableException");
    assert!(posts(&f.upstream).is_empty(), "{:?}", posts(&f.upstream));
}

/// The 403's hint names the files `explain` needs to decide it again: the body, and for a commit
/// the table's metadata, before the method and target.
#[tokio::test]
async fn the_explain_hint_of_a_keep_covering_refusal_names_the_body_and_the_tables_metadata() {
    let f = setup().await;
    let renamed =
        post(&f.gate, "olga", "/v1/prod/tables/rename", &rename(("sales", "customers"), ("sales", "customers_copy")))
            .await;
    let message = renamed.assert_error(403, "ForbiddenException");
    assert!(
        message.ends_with(
            "policy first; `icegate explain --policy POLICY --user olga --body FILE POST /v1/prod/tables/rename` shows why"
        ),
        "{message}"
    );
    let message = post(&f.gate, "wes", CUSTOMERS, &decoy()).await.assert_error(403, "ForbiddenException");
    let hint = format!(
        "policy first; `icegate explain --policy POLICY --user wes --body FILE --table-metadata FILE POST {CUSTOMERS}` \
         shows why"
    );
    assert!(message.ends_with(&hint), "{message}");
}

/// A shadow candidate decides a restricted commit from the table metadata the served request
/// loaded, without loading it again: the live policy restricts `region`, which the decoy commit
/// leaves alone (forwarded), the candidate `ssn`, which it moves (403): one disagreement.
#[tokio::test]
async fn a_shadow_candidate_decides_a_restricted_commit_from_the_recorded_table_metadata() {
    let f = setup().await;
    let dir = crate::support::TempDir::new("shadow-cover");
    let live = dir.write("live.yaml", &POLICY.replace("columns: { ssn:", "columns: { region:"));
    let candidate = dir.write("candidate.yaml", POLICY);
    let (addr, shared) = crate::reload::start(&f.upstream, &live, Some(&candidate)).await;
    let disagreements = |op: &str| {
        let text = shared.metrics.render();
        let by_op = crate::reload::samples(&text, "icegate_shadow_disagreements_total");
        by_op.iter().filter(|(labels, _)| labels.contains(op)).map(|(_, v)| v).sum::<f64>()
    };
    let auth = basic("wes");
    let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
    // a new column with a new name: both policies forward it, from the same one load
    let grow = new_schema(vec![field(1, "id"), field(2, "ssn"), field(3, "region"), field(4, "note")]);
    let a = send(addr, "POST", CUSTOMERS, &headers, grow.to_string().as_bytes()).await;
    assert_eq!(a.status, 200, "{}", a.text());
    crate::drift::settle(&shared).await;
    assert_eq!(disagreements("updateTable"), 0.0);
    let a = send(addr, "POST", CUSTOMERS, &headers, decoy().to_string().as_bytes()).await;
    assert_eq!(a.status, 200, "the live policy forwards it: {}", a.text());
    crate::drift::settle(&shared).await;
    assert_eq!(disagreements(r#"operation="updateTable""#), 1.0, "the candidate refuses what the metadata shows");
    let gets = f.upstream.requests().iter().filter(|r| r.method == "GET").count();
    assert_eq!(gets, 2, "one load per served commit; the shadow decision asks nothing");
    assert_eq!(posts(&f.upstream).len(), 2);
}

/// `explain` decides a rename from its body; a commit with `--table-metadata`, and without it
/// says that the upstream's metadata decides.
#[test]
fn explain_decides_renames_and_with_table_metadata_commits() {
    use crate::cli::{icegate, stderr, stdout};
    let dir = crate::support::TempDir::new("explain-cover");
    let policy = dir.write("policy.yaml", POLICY);
    let body = |name: &str, v: &Value| dir.write(name, &v.to_string());
    let rename_body = body("rename.json", &rename(("sales", "customers"), ("sales", "customers_copy")));
    let decoy_body = body("decoy.json", &decoy());
    let metadata = body("metadata.json", &metadata());
    let explain = |user: &str, extra: &[&str], path: &str| -> Value {
        let mut args = vec!["explain", "--policy", policy.to_str().unwrap(), "--user", user];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["POST", path]);
        let out = icegate(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str(&stdout(&out)).unwrap()
    };
    let v = explain("olga", &["--body", rename_body.to_str().unwrap()], "/v1/prod/tables/rename");
    assert_eq!(v["status"], 403, "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains("(customer pii) would not apply to `sales.customers_copy`"), "{reason}");
    let v = explain("wes", &["--body", decoy_body.to_str().unwrap()], CUSTOMERS);
    assert_eq!(v["status"], 200, "{v}");
    assert!(v["reason"].as_str().unwrap().contains("the upstream's table metadata decides"), "{v}");
    let v = explain(
        "wes",
        &["--body", decoy_body.to_str().unwrap(), "--table-metadata", metadata.to_str().unwrap()],
        CUSTOMERS,
    );
    assert_eq!(v["status"], 403, "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("name `ssn`, which reads field 2 now and would read field 4"),
        "{v}"
    );
    let v = explain("root", &["--body", decoy_body.to_str().unwrap()], CUSTOMERS);
    assert_eq!(v["status"], 200, "{v}");
    assert!(!v["reason"].as_str().unwrap().contains("metadata decides"), "TOP asks nothing: {v}");
    let not_json = dir.write("bad.json", "[1]");
    let out = icegate(&[
        "explain",
        "--policy",
        policy.to_str().unwrap(),
        "--user",
        "wes",
        "--table-metadata",
        not_json.to_str().unwrap(),
        "POST",
        CUSTOMERS,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
