//! Issue 15: where the catalog and the storage resolve names differently from icegate. Each
//! `finding_*` test reproduces one finding against the recording fake catalog and asserts the
//! answer and what reached the catalog (docs/design.md §2, §4 "Names, locations and storage", §6, §7).

use super::Lab;
use crate::fake_upstream::{Recorded, Reply, basic, raw, send};
use serde_json::json;
use std::time::Duration;

/// alice reads (analyst: DENY on `salaries`) and modifies (editor) `prod.sales`; carl may
/// create schemas and tables but owns nothing; grace is in the policy's group `staff`; root owns
/// the catalog; hana reads the case-insensitive catalog `hive`, where `salaries` is denied.
const POLICY: &str = r#"
version: 1
metalake: lake
default_catalog: prod
catalogs:
  - { name: prod }
  - { prefix: "main|warehouse", name: prod }
  - { name: hive, case_sensitive: false }
users:
  - { name: alice, roles: [analyst, editor] }
  - { name: carl, roles: [creator] }
  - { name: grace, groups: [staff] }
  - { name: hana, roles: [hive_reader] }
  - { name: root }
groups:
  - { name: staff }
roles:
  - name: analyst
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: SELECT_TABLE, condition: ALLOW }
      - { type: TABLE, fullName: prod.sales.salaries, privileges: [{ name: SELECT_TABLE, condition: DENY }] }
  - name: editor
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: MODIFY_TABLE, condition: ALLOW }
  - name: creator
    securableObjects:
      - type: CATALOG
        fullName: prod
        privileges:
          - { name: USE_CATALOG, condition: ALLOW }
          - { name: CREATE_SCHEMA, condition: ALLOW }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: CREATE_TABLE, condition: ALLOW }
  - name: hive_reader
    securableObjects:
      - { type: CATALOG, fullName: hive, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: hive.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: SELECT_TABLE, condition: ALLOW }
      - { type: TABLE, fullName: hive.sales.salaries, privileges: [{ name: SELECT_TABLE, condition: DENY }] }
  - name: auditor
    securableObjects:
      - { type: TABLE, fullName: prod.sales.audit_log, privileges: [{ name: SELECT_TABLE, condition: ALLOW }] }
owners:
  - { type: CATALOG, fullName: prod, owner: root, ownerType: USER }
"#;

const CREATE: &str = "/v1/prod/namespaces/sales/tables";
const STAGED: &str = "/v1/prod/namespaces/sales/tables/fresh";

async fn lab(script: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Lab {
    Lab::with_policy(POLICY, script, |_| {}).await
}

fn json_body(v: &serde_json::Value) -> Vec<u8> {
    v.to_string().into_bytes()
}

/// A stage-create's answer: the table's metadata with the location the catalog assigned.
fn staged_table(location: &str) -> Reply {
    Reply::json(200, json!({"metadata": {"format-version": 2, "location": location}, "config": {}}))
}

// --- names in bodies ------------------------------------------------------------------------

#[tokio::test]
async fn finding_a_body_name_with_a_slash_never_reaches_a_catalog_that_joins_names_into_locations() {
    let lab = lab(Reply::empty_catalog).await;
    for (target, body) in [
        (CREATE, json!({"name": "orders/data", "schema": {"type": "struct", "fields": []}})),
        (CREATE, json!({"name": "orders\\data", "schema": {"type": "struct", "fields": []}})),
        ("/v1/prod/namespaces", json!({"namespace": ["sales", "eu/de"]})),
        (
            "/v1/prod/tables/rename",
            json!({"source": {"namespace": ["sales"], "name": "t"}, "destination": {"namespace": ["sales"], "name": "t/x"}}),
        ),
    ] {
        let user = if target.ends_with("rename") { "alice" } else { "carl" };
        let a = lab.call(user, "POST", target, &[("content-type", "application/json")], &json_body(&body)).await;
        let message = a.assert_error(400, "BadRequestException");
        assert!(message.contains("`/` or `\\`"), "{message}");
    }
    lab.up.assert_untouched();
}

// --- one name, one kind, one level -----------------------------------------------------------

#[tokio::test]
async fn finding_a_namespace_named_like_an_existing_table_is_409() {
    // `sales.orders` is a table: a namespace `sales.orders` would put its tables in its directory
    let lab = lab(|r: &Recorded| match (r.method.as_str(), r.target.as_str()) {
        ("HEAD", "/v1/prod/namespaces/sales/tables/orders") => Reply::raw(204, ""),
        ("HEAD", _) => Reply::raw(404, ""),
        _ => Reply::ok(),
    })
    .await;
    let body = json_body(&json!({"namespace": ["sales", "orders"]}));
    let a = lab.call("carl", "POST", "/v1/prod/namespaces", &[], &body).await;
    let message = a.assert_error(409, "AlreadyExistsException");
    assert!(message.contains("namespace `sales.orders`"), "{message}");
    assert!(lab.up.requests().iter().all(|r| r.method == "HEAD"), "nothing but the check was sent");
    // a name no table or view has is created
    let body = json_body(&json!({"namespace": ["sales", "eu"]}));
    assert_eq!(lab.call("carl", "POST", "/v1/prod/namespaces", &[], &body).await.status, 200);
    let heads: Vec<String> = lab.up.requests().into_iter().filter(|r| r.method == "HEAD").map(|r| r.target).collect();
    assert!(heads.contains(&"/v1/prod/namespaces/sales/views/eu".to_owned()), "{heads:?}");
    assert_eq!(lab.up.only_forwarded().target, "/v1/prod/namespaces");
}

#[tokio::test]
async fn finding_a_table_named_like_an_existing_child_namespace_is_409() {
    let lab = lab(|r: &Recorded| match (r.method.as_str(), r.target.as_str()) {
        ("HEAD", "/v1/prod/namespaces/sales%1Feu") => Reply::raw(200, ""),
        ("HEAD", _) => Reply::raw(404, ""),
        _ => Reply::ok(),
    })
    .await;
    let create = json_body(&json!({"name": "eu", "schema": {"type": "struct", "fields": []}}));
    lab.call("carl", "POST", CREATE, &[], &create).await.assert_error(409, "AlreadyExistsException");
    let rename = json_body(
        &json!({"source": {"namespace": ["sales"], "name": "orders"}, "destination": {"namespace": ["sales"], "name": "eu"}}),
    );
    lab.call("alice", "POST", "/v1/prod/tables/rename", &[], &rename).await.assert_error(409, "AlreadyExistsException");
    assert!(lab.up.requests().iter().all(|r| r.method == "HEAD"), "{:#?}", lab.up.requests());
}

#[tokio::test]
async fn a_create_whose_collision_the_upstream_cannot_rule_out_is_503_and_not_forwarded() {
    let lab = lab(|r: &Recorded| if r.method == "HEAD" { Reply::raw(500, "") } else { Reply::ok() }).await;
    let create = json_body(&json!({"name": "t", "schema": {"type": "struct", "fields": []}}));
    lab.call("carl", "POST", CREATE, &[], &create).await.assert_error(503, "ServiceUnavailableException");
    assert!(lab.up.requests().iter().all(|r| r.method == "HEAD"));
}

// --- locations are placed only by owners -----------------------------------------------------

#[tokio::test]
async fn finding_a_staged_create_commits_only_the_location_the_upstream_assigned_to_it() {
    let lab = lab(|r: &Recorded| match (r.method.as_str(), r.target.as_str()) {
        ("POST", CREATE) => staged_table("s3://lake/sales/fresh"),
        ("HEAD", _) => Reply::raw(404, ""),
        _ => Reply::ok(),
    })
    .await;
    // Spark's CTAS: stage-create, then the commit with the location the answer carried
    let stage = json_body(&json!({"name": "fresh", "schema": {"type": "struct", "fields": []}, "stage-create": true}));
    assert_eq!(lab.call("carl", "POST", CREATE, &[], &stage).await.status, 200);
    let commit = |location: &str| {
        json_body(
            &json!({"requirements": [{"type": "assert-create"}], "updates": [{"action": "set-location", "location": location}]}),
        )
    };
    // another table's directory is an explicit location: CREATE_TABLE does not place data
    lab.call("carl", "POST", STAGED, &[], &commit("s3://lake/sales/orders"))
        .await
        .assert_error(403, "ForbiddenException");
    assert!(!lab.targets().contains(&STAGED.to_owned()), "the commit was forwarded");
    let a = lab.call("carl", "POST", STAGED, &[], &commit("s3://lake/sales/fresh")).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(lab.targets().iter().filter(|t| *t == STAGED).count(), 1);
}

#[tokio::test]
async fn a_staged_commit_icegate_has_no_record_of_is_checked_against_a_new_stage_create() {
    let lab = lab(|r: &Recorded| match (r.method.as_str(), r.target.as_str()) {
        ("POST", CREATE) => staged_table("s3://lake/sales/fresh"),
        _ => Reply::ok(),
    })
    .await;
    let commit = |location: &str| {
        json_body(
            &json!({"requirements": [{"type": "assert-create"}], "updates": [{"action": "set-location", "location": location}]}),
        )
    };
    let a = lab.call("carl", "POST", STAGED, &[], &commit("s3://lake/sales/fresh/")).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let requests = lab.up.requests();
    let asked: Vec<_> = requests.iter().filter(|r| r.target == CREATE).collect();
    assert_eq!(asked.len(), 1, "{requests:#?}");
    let asked: serde_json::Value = serde_json::from_slice(&asked[0].body).unwrap();
    assert_eq!((asked["name"].as_str(), asked["stage-create"].as_bool()), (Some("fresh"), Some(true)));
    lab.call("carl", "POST", STAGED, &[], &commit("s3://lake/sales/orders"))
        .await
        .assert_error(403, "ForbiddenException");
}

#[tokio::test]
async fn no_stage_create_is_sent_for_a_caller_who_may_not_create_the_table() {
    let lab = lab(|r: &Recorded| match (r.method.as_str(), r.target.as_str()) {
        ("POST", CREATE) => staged_table("s3://lake/sales/fresh"),
        _ => Reply::ok(),
    })
    .await;
    // alice may modify tables in `sales` but not create them: asking on her behalf could not
    // change the answer, and would send a create icegate did not authorize
    let commit = json_body(
        &json!({"requirements": [{"type": "assert-create"}], "updates": [{"action": "set-location", "location": "s3://lake/sales/fresh"}]}),
    );
    lab.call("alice", "POST", STAGED, &[], &commit).await.assert_error(403, "ForbiddenException");
    lab.up.assert_untouched();
}

#[tokio::test]
async fn finding_a_namespace_location_needs_the_catalog_owner() {
    let lab = lab(Reply::empty_catalog).await;
    let body = json_body(&json!({"namespace": ["reports"], "properties": {"location": "s3://lake/sales/orders"}}));
    lab.call("carl", "POST", "/v1/prod/namespaces", &[], &body).await.assert_error(403, "ForbiddenException");
    lab.up.assert_untouched();
    assert_eq!(lab.call("root", "POST", "/v1/prod/namespaces", &[], &body).await.status, 200);
}

// --- renames ---------------------------------------------------------------------------------

#[tokio::test]
async fn finding_a_rename_neither_sheds_a_deny_nor_lands_on_a_granted_name() {
    let lab = lab(Reply::empty_catalog).await;
    let rename = |from: &str, to: &str| {
        json_body(
            &json!({"source": {"namespace": ["sales"], "name": from}, "destination": {"namespace": ["sales"], "name": to}}),
        )
    };
    for (from, to) in [("salaries", "salaries_old"), ("orders", "audit_log")] {
        let a = lab.call("alice", "POST", "/v1/prod/tables/rename", &[], &rename(from, to)).await;
        let message = a.assert_error(403, "ForbiddenException");
        assert!(message.contains("would change which policy entries apply"), "{message}");
        assert!(!message.contains("analyst") && !message.contains("auditor"), "names the policy: {message}");
    }
    lab.up.assert_untouched();
    assert_eq!(
        lab.call("alice", "POST", "/v1/prod/tables/rename", &[], &rename("orders", "orders_v2")).await.status,
        200
    );
}

// --- every success is inspected ----------------------------------------------------------------

#[tokio::test]
async fn finding_a_list_answered_with_203_or_206_is_still_filtered() {
    for status in [201, 203, 206] {
        let lab = lab(move |_: &Recorded| {
            Reply::json(status, json!({"identifiers": [{"namespace": ["sales"], "name": "salaries"}, {"namespace": ["sales"], "name": "orders"}]}))
        })
        .await;
        let a = lab.call("alice", "GET", CREATE, &[("x-gravitino-active-roles", "analyst")], b"").await;
        assert_eq!(a.status, status, "{}", a.text());
        assert_eq!(a.json()["identifiers"], json!([{"namespace": ["sales"], "name": "orders"}]), "{status}");
    }
}

#[tokio::test]
async fn finding_a_config_or_table_answered_with_another_2xx_is_still_cleaned() {
    for status in [201, 203] {
        let lab = lab(move |r: &Recorded| {
            if r.target.starts_with("/v1/config") {
                Reply::json(status, json!({"defaults": {"uri": "http://catalog", "token": "t", "s3.secret-access-key": "sk"}, "overrides": {}}))
            } else {
                Reply::json(status, json!({
                    "metadata": {"location": "s3://lake/sales/orders"},
                    "config": {"s3.access-key-id": "AKIA-UP", "s3.secret-access-key": "upstream-secret", "token": "up-token"},
                    "storage-credentials": [{"prefix": "s3://lake/sales/orders", "config": {"s3.secret-access-key": "upstream-secret"}}]
                }))
            }
        })
        .await;
        let config = lab.get("alice", "/v1/config").await;
        assert_eq!(config.status, status);
        assert_eq!(config.json()["defaults"], json!({}), "{status}");
        // narrowed to reading, alice must not get the writer's credentials the upstream vended
        let a = lab
            .call(
                "alice",
                "GET",
                "/v1/prod/namespaces/sales/tables/orders",
                &[("x-gravitino-active-roles", "analyst")],
                b"",
            )
            .await;
        assert_eq!(a.status, status);
        let text = a.text();
        assert!(!text.contains("upstream-secret") && !text.contains("up-token") && !text.contains("AKIA"), "{text}");
    }
}

#[tokio::test]
async fn finding_an_upstream_redirect_is_502_and_never_relayed() {
    let lab = lab(|_: &Recorded| Reply::raw(302, "").with("location", "http://catalog.internal/v1/prod")).await;
    for target in ["/v1/prod/namespaces/sales/tables/orders", CREATE, "/v1/config"] {
        let a = lab.get("alice", target).await;
        a.assert_error(502, "BadGatewayException");
        assert!(a.headers.get("location").is_none());
    }
    let not_modified = lab_status(304).await;
    assert_eq!(not_modified.get("alice", "/v1/prod/namespaces/sales/tables/orders").await.status, 304);
}

async fn lab_status(status: u16) -> Lab {
    lab(move |_: &Recorded| Reply::raw(status, "")).await
}

#[tokio::test]
async fn finding_a_502_never_quotes_what_the_upstream_sent() {
    for body in [
        r#"{"metadata":{"location":"s3://lake/sales/orders"},"config":{},"storage-credentials":"SECRET-VALUE"}"#,
        r#"{"metadata":{"location":"s3://lake/sales/orders"},"config":"SECRET-VALUE"}"#,
        r#"{"metadata":{"location":"s3://lake/sales/orders"},"SECRET-KEY":"a","SECRET-KEY":"b"}"#,
    ] {
        let lab = lab(move |_: &Recorded| Reply::raw(200, body)).await;
        let a = lab.get("alice", "/v1/prod/namespaces/sales/tables/orders").await;
        let message = a.assert_error(502, "BadGatewayException");
        assert!(!message.contains("SECRET"), "{message}");
    }
}

// --- messages --------------------------------------------------------------------------------

#[tokio::test]
async fn finding_a_denials_explain_hint_names_no_group_from_the_policy() {
    let lab = lab(Reply::empty_catalog).await;
    let a = lab.get("grace", "/v1/prod/namespaces/sales/tables/orders").await;
    let message = a.assert_error(403, "ForbiddenException");
    assert!(message.contains("icegate explain") && !message.contains("staff"), "{message}");
    lab.up.assert_untouched();
}

// --- smaller ones ----------------------------------------------------------------------------

#[tokio::test]
async fn finding_an_untrusted_identity_header_is_401_whatever_the_provider_order() {
    let lab = Lab::with_policy(POLICY, Reply::empty_catalog, |c| {
        c.identity.providers = vec![icegate::config::Provider::Simple, icegate::config::Provider::Header];
        c.identity.header.trusted_peers = vec!["127.0.0.2".parse().unwrap()];
    })
    .await;
    let auth = basic("carl");
    let a = send(lab.addr(), "GET", CREATE, &[("authorization", &auth), ("x-forwarded-user", "root")], b"").await;
    a.assert_error(401, "NotAuthorizedException");
    lab.up.assert_untouched();
}

#[tokio::test]
async fn finding_a_method_override_query_parameter_is_400() {
    let lab = lab(Reply::empty_catalog).await;
    for target in
        ["/v1/prod/namespaces/sales/tables/orders?_method=DELETE", "/v1/prod/namespaces?X-HTTP-Method-Override=POST"]
    {
        lab.get("alice", target).await.assert_error(400, "BadRequestException");
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn finding_a_transaction_without_changes_is_400() {
    let lab = lab(Reply::empty_catalog).await;
    let body = json_body(&json!({"table-changes": []}));
    lab.call("root", "POST", "/v1/prod/transactions/commit", &[], &body).await.assert_error(400, "BadRequestException");
    lab.up.assert_untouched();
}

#[tokio::test]
async fn finding_content_length_with_transfer_encoding_is_400_and_closes_the_connection() {
    let lab = lab(Reply::empty_catalog).await;
    let body = r#"{"name":"t"}"#;
    let request = format!(
        "POST {CREATE} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\ncontent-length: {}\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\nGET /v1/prod/namespaces/sales/tables/orders HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\n\r\n",
        basic("carl"),
        body.len(),
        body.len(),
        basic("alice"),
    );
    let out = raw(lab.addr(), request.as_bytes(), Duration::from_secs(2)).await;
    assert!(out.starts_with("HTTP/1.1 400"), "{out}");
    assert!(out.to_ascii_lowercase().contains("connection: close"), "{out}");
    assert_eq!(out.matches("HTTP/1.1").count(), 1, "the connection carried another request: {out}");
    lab.up.assert_untouched();
}

// --- catalogs --------------------------------------------------------------------------------

#[tokio::test]
async fn finding_a_prefix_alias_the_catalogs_list_does_not_name_is_403() {
    let lab = lab(Reply::empty_catalog).await;
    // Nessie answers `main` as it answers `main|warehouse`: read as its own catalog, `main`
    // would carry none of `prod`'s denies
    let a = lab.get("alice", "/v1/main/namespaces/sales/tables/salaries").await;
    let message = a.assert_error(403, "ForbiddenException");
    assert!(message.contains("unknown catalog prefix `main`"), "{message}");
    lab.up.assert_untouched();
    let analyst = [("x-gravitino-active-roles", "analyst")];
    let listed = lab.call("alice", "GET", "/v1/main%7Cwarehouse/namespaces/sales/tables/salaries", &analyst, b"").await;
    listed.assert_error(403, "ForbiddenException");
    assert_eq!(lab.get("alice", "/v1/main%7Cwarehouse/namespaces/sales/tables/orders").await.status, 200);
    assert_eq!(lab.up.only().target, "/v1/main%7Cwarehouse/namespaces/sales/tables/orders");
}

#[tokio::test]
async fn finding_an_upper_case_name_meets_the_deny_of_a_case_insensitive_catalog() {
    let lab = lab(Reply::empty_catalog).await;
    for target in ["/v1/hive/namespaces/sales/tables/SALARIES", "/v1/hive/namespaces/SALES/tables/Salaries"] {
        lab.get("hana", target).await.assert_error(403, "ForbiddenException");
    }
    lab.up.assert_untouched();
    // what is forwarded is what was authorized: the folded name
    assert_eq!(lab.get("hana", "/v1/hive/namespaces/Sales/tables/ORDERS").await.status, 200);
    assert_eq!(lab.up.only().target, "/v1/hive/namespaces/sales/tables/orders");
}

#[tokio::test]
async fn a_staged_create_relayed_by_one_replica_commits_through_another() {
    // A catalog that assigns a fresh location per stage-create (so asking again would not
    // match): only the location the first answer carried may be committed.
    let serial = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let up =
        crate::fake_upstream::FakeUpstream::start(move |r: &Recorded| match (r.method.as_str(), r.target.as_str()) {
            ("POST", CREATE) => {
                let n = serial.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                staged_table(&format!("s3://lake/sales/fresh-{n}"))
            }
            ("HEAD", _) => Reply::raw(404, ""),
            _ => Reply::ok(),
        })
        .await;
    let dir = crate::support::TempDir::new("staged-replicas");
    let store = dir.path().join("owners.db");
    let url = up.url("");
    let replica = |store: std::path::PathBuf| {
        crate::fake_upstream::gate(&url, POLICY, move |c| {
            c.owners.store = Some(icegate::ops::owners::StoreKind::Embedded);
            c.owners.path = Some(store);
        })
    };
    let (a, b) = (replica(store.clone()).await, replica(store).await);
    let stage = json_body(&json!({"name": "fresh", "schema": {"type": "struct", "fields": []}, "stage-create": true}));
    let staged = send(a.addr, "POST", CREATE, &[("authorization", &basic("carl"))], &stage).await;
    assert_eq!(staged.json()["metadata"]["location"], "s3://lake/sales/fresh-0");
    let commit = json_body(
        &json!({"requirements": [{"type": "assert-create"}], "updates": [{"action": "set-location", "location": "s3://lake/sales/fresh-0"}]}),
    );
    let committed = send(b.addr, "POST", STAGED, &[("authorization", &basic("carl"))], &commit).await;
    assert_eq!(committed.status, 200, "{}", committed.text());
    let stage_creates = up.requests().iter().filter(|r| r.method == "POST" && r.target == CREATE).count();
    assert_eq!(stage_creates, 1, "replica b asked again instead of reading the store");
}
