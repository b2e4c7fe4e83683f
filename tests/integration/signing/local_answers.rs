//! What icegate as the signer (`credentials.signing.signer = "local"`, docs/design.md §8 "Signing
//! without a catalog signer") makes of loadTable-like answers and loadCredentials: no vended
//! credentials, remote signing offered, icegate's table-scoped signer in every spelling, and
//! nothing of the upstream's own signer; and the offered endpoint signs.

use super::local::{KEY_ID, SECRET, assert_verifies_with, local_gate_with};
use super::*;

/// alice writes `prod.sales`, rita only reads it, root owns the catalog (registerTable needs it).
const OWNED: &str = r#"
version: 1
metalake: lake
default_catalog: prod
users:
  - { name: alice, roles: [writer] }
  - { name: rita, roles: [reader] }
  - { name: root }
roles:
  - name: writer
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: SELECT_TABLE, condition: ALLOW }
          - { name: MODIFY_TABLE, condition: ALLOW }
          - { name: CREATE_TABLE, condition: ALLOW }
  - name: reader
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: SELECT_TABLE, condition: ALLOW }
owners:
  - { type: CATALOG, fullName: prod, owner: root, ownerType: USER }
"#;

const CREATE: &str = "/v1/prod/namespaces/sales/tables";
const REGISTER: &str = "/v1/prod/namespaces/sales/register";

/// What a catalog that vends and signs itself answers: credentials of every kind, its own
/// signer in every key and in `remote-signing-config`, settings that carry no secret.
fn upstream_config() -> Value {
    json!({
        "s3.access-key-id": "AKIA-UPSTREAM", "s3.secret-access-key": "upstream-secret",
        "s3.session-token": "upstream-session", "token": "upstream-token", "my.custom.secret": "x",
        "client.refresh-credentials-endpoint": "http://catalog.internal/v1/prod/credentials",
        "s3.remote-signing-enabled": "false", "s3.signer": "UpstreamSigner",
        "s3.signer.uri": "http://catalog.internal/", "s3.signer.endpoint": "v1/upstream/sign",
        "signer.uri": "http://catalog.internal/", "signer.endpoint": "v1/upstream/sign",
        "header.X-Gravitino-Active-Roles": "admin",
        "client.region": "us-east-1", "s3.endpoint": "http://s3.local", "s3.path-style-access": "true",
        "write.format.default": "parquet",
    })
}

/// Credentials for the table's own location, which every other mode but `strip` hands on.
fn storage_credentials(location: &str) -> Value {
    json!([{"prefix": location, "config": {"s3.access-key-id": "AKIA-PREFIX", "s3.secret-access-key": "p"}}])
}

/// A loadTable-like answer for the table at `location` (also what a create and a register answer).
fn answer(location: &str) -> String {
    format!(
        r#"{{"metadata-location":"{location}/metadata/1.json","metadata":{{"format-version":2,"table-uuid":"u","location":"{location}","properties":{{}},"schemas":[]}},"config":{},"storage-credentials":{},"remote-signing-config":{{"properties":{{"signer.uri":"http://catalog.internal/","warehouse":"w"}},"headers":{{"X-Upstream-Signer":["k"]}}}}}}"#,
        upstream_config(),
        storage_credentials(location)
    )
}

async fn catalog() -> FakeUpstream {
    FakeUpstream::start(|r: &Recorded| {
        let path = r.target.split('?').next().unwrap_or_default();
        match (r.method.as_str(), path) {
            ("GET", TABLE) => Reply::raw(200, &answer("s3://lake/wh/sales/orders")),
            ("POST", CREATE) => Reply::raw(200, &answer("s3://lake/wh/sales/fresh")),
            ("POST", REGISTER) => Reply::raw(200, &answer("s3://lake/wh/sales/copy")),
            ("GET", p) if p == format!("{TABLE}/credentials") => {
                Reply::json(200, json!({"storage-credentials": storage_credentials("s3://lake/wh/sales/orders")}))
            }
            _ => Reply::json(404, json!({"error": {"message": "no route", "type": "NotFoundException", "code": 404}})),
        }
    })
    .await
}

/// The `config` every loadTable-like answer of table `name` carries, with `public` as
/// icegate's public URL.
fn offered(name: &str, public: Option<&str>) -> Value {
    let ours = format!("v1/prod/namespaces/sales/tables/{name}/sign");
    let mut config = json!({
        "client.region": "us-east-1", "s3.endpoint": "http://s3.local", "s3.path-style-access": "true",
        "write.format.default": "parquet",
        "s3.remote-signing-enabled": "true", "s3.signer": "S3V4RestSigner",
        "s3.signer.endpoint": ours, "signer.endpoint": ours,
    });
    if let Some(base) = public {
        config["s3.signer.uri"] = json!(base);
        config["signer.uri"] = json!(base);
    }
    config
}

/// The caller's request as sent, asking for vended credentials as PyIceberg always does.
async fn call(g: &Gate, user: &str, method: &str, target: &str, body: &Value) -> crate::fake_upstream::Answer {
    let auth = basic(user);
    let headers = [("authorization", auth.as_str()), ("x-iceberg-access-delegation", "vended-credentials")];
    let body = if body.is_null() { Vec::new() } else { body.to_string().into_bytes() };
    send(g.addr, method, target, &headers, &body).await
}

#[tokio::test]
async fn local_signer_load_table_like_answers_offer_icegates_signer_and_no_credentials() {
    let create = json!({"name": "fresh", "schema": {"type": "struct", "fields": []}});
    let stage = json!({"name": "fresh", "schema": {"type": "struct", "fields": []}, "stage-create": true});
    let register = json!({"name": "copy", "metadata-location": "s3://lake/wh/sales/copy/metadata/1.json"});
    let cases = [
        ("loadTable", "alice", "GET", TABLE, Value::Null, "orders"),
        ("loadTable by a reader", "rita", "GET", TABLE, Value::Null, "orders"),
        ("createTable", "alice", "POST", CREATE, create, "fresh"),
        ("stage-create", "alice", "POST", CREATE, stage, "fresh"),
        ("registerTable", "root", "POST", REGISTER, register, "copy"),
    ];
    for public in [None, Some("https://gate.example/lake")] {
        let upstream = catalog().await;
        let g = local_gate_with(&upstream, OWNED, |c| c.credentials.public_url = public.map(str::to_owned)).await;
        for (label, user, method, target, body, name) in &cases {
            let a = call(&g, user, method, target, body).await;
            assert_eq!(a.status, 200, "{label}: {}", a.text());
            assert_eq!(a.headers.get("cache-control").unwrap(), "no-store", "{label}");
            let v = a.json();
            assert_eq!(v["config"], offered(name, public), "{label}, public url {public:?}");
            assert_eq!(v["storage-credentials"], json!([]), "{label}");
            let ours = format!("v1/prod/namespaces/sales/tables/{name}/sign");
            let mut properties = json!({"s3.signer.endpoint": ours, "signer.endpoint": ours});
            if let Some(base) = public {
                properties["s3.signer.uri"] = json!(base);
                properties["signer.uri"] = json!(base);
            }
            assert_eq!(v["remote-signing-config"], json!({"properties": properties}), "{label}");
            for gone in ["catalog.internal", "AKIA-", "upstream-", "UpstreamSigner", "X-Upstream-Signer"] {
                assert!(!a.text().contains(gone), "{label}: `{gone}` in {}", a.text());
            }
            assert_eq!(v["metadata"]["table-uuid"], "u", "{label}: the rest passes");
            // the upstream is never asked to vend what icegate would remove
            let forwarded = upstream.requests().into_iter().last().unwrap();
            assert_eq!(forwarded.header("x-iceberg-access-delegation"), None, "{label}");
        }
    }
}

#[tokio::test]
async fn local_signer_load_credentials_carries_no_credentials() {
    let upstream = catalog().await;
    let g = local_gate_with(&upstream, OWNED, |_| {}).await;
    for user in ["alice", "rita"] {
        let a = call(&g, user, "GET", &format!("{TABLE}/credentials"), &Value::Null).await;
        assert_eq!(a.status, 200, "{}", a.text());
        assert_eq!(a.json(), json!({"storage-credentials": []}), "{user}");
        assert_eq!(a.headers.get("cache-control").unwrap(), "no-store");
    }
}

#[tokio::test]
async fn local_signer_offers_a_config_where_the_upstream_sent_none_and_nothing_for_a_table_off_s3() {
    let upstream = FakeUpstream::start(|r: &Recorded| match r.target.as_str() {
        TABLE => Reply::raw(
            200,
            r#"{"metadata-location":"m","metadata":{"format-version":2,"location":"s3://lake/wh/sales/orders","properties":{}}}"#,
        ),
        _ => Reply::raw(
            200,
            r#"{"metadata-location":"m","metadata":{"format-version":2,"location":"file:///wh/sales/local","properties":{}},"config":{"s3.access-key-id":"AKIA","client.region":"r"}}"#,
        ),
    })
    .await;
    let g = local_gate_with(&upstream, OWNED, |_| {}).await;
    let a = call(&g, "alice", "GET", TABLE, &Value::Null).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let ours = "v1/prod/namespaces/sales/tables/orders/sign";
    assert_eq!(
        a.json()["config"],
        json!({"s3.remote-signing-enabled": "true", "s3.signer": "S3V4RestSigner",
               "s3.signer.endpoint": ours, "signer.endpoint": ours})
    );
    assert!(a.json().get("storage-credentials").is_none(), "nothing added but the config");
    // a table whose every location is off S3 has nothing icegate could sign: credentials only go
    let a = call(&g, "alice", "GET", "/v1/prod/namespaces/sales/tables/local", &Value::Null).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["config"], json!({"client.region": "r"}));
}

#[tokio::test]
async fn local_signer_the_offered_endpoint_signs_what_the_caller_may_do() {
    let upstream = catalog().await;
    let g = local_gate_with(&upstream, OWNED, |_| {}).await;
    let config = call(&g, "rita", "GET", TABLE, &Value::Null).await.json()["config"].clone();
    // clients without a signer uri sign relative to the catalog uri, which is icegate
    let endpoint = format!("/{}", config["signer.endpoint"].as_str().unwrap());
    assert_eq!(endpoint, SIGN);
    let auth = basic("rita");
    let read =
        send(g.addr, "POST", &endpoint, &[("authorization", &auth)], sign_body("GET", OBJECT).to_string().as_bytes())
            .await;
    assert_eq!(read.status, 200, "{}", read.text());
    assert_verifies_with("GET", &read.json(), (KEY_ID, SECRET));
    // the reader's write is refused, and a key outside the table for anyone
    let write =
        send(g.addr, "POST", &endpoint, &[("authorization", &auth)], sign_body("PUT", OBJECT).to_string().as_bytes())
            .await;
    write.assert_error(403, "ForbiddenException");
    let outside = sign_body("GET", "https://lake.s3.amazonaws.com/wh/sales/other/data/f.parquet");
    sign(&g, &outside).await.assert_error(403, "ForbiddenException");
    assert_eq!(signs_received(&upstream), 0, "no sign request reached the catalog");
}

#[tokio::test]
async fn local_signer_signs_the_writes_of_a_staged_table_that_the_catalog_does_not_hold_yet() {
    // Spark's CREATE TABLE AS stage-creates the table, writes its data files through the signer,
    // and only then commits the create: until then the catalog answers 404 for the table, and its
    // locations are those the stage-create answered (issue 46, found with Spark's S3FileIO).
    let upstream = catalog().await;
    let g = local_gate_with(&upstream, OWNED, |_| {}).await;
    let fresh = "/v1/prod/namespaces/sales/tables/fresh/sign";
    let data = "https://lake.s3.amazonaws.com/wh/sales/fresh/data/f.parquet";
    let sign_as = |user: &'static str, body: Value| {
        let auth = basic(user);
        async move { send(g.addr, "POST", fresh, &[("authorization", &auth)], body.to_string().as_bytes()).await }
    };
    // before any stage-create the table is unknown: nothing is signed
    let unknown = sign_as("alice", sign_body("PUT", data)).await;
    assert_ne!(unknown.status, 200, "{}", unknown.text());
    let stage = json!({"name": "fresh", "schema": {"type": "struct", "fields": []}, "stage-create": true});
    let a = call(&g, "alice", "POST", CREATE, &stage).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let put = sign_as("alice", sign_body("PUT", data)).await;
    assert_eq!(put.status, 200, "{}", put.text());
    assert_verifies_with("PUT", &put.json(), (KEY_ID, SECRET));
    // the staged locations open nothing else: a reader's write, another table's object
    sign_as("rita", sign_body("PUT", data)).await.assert_error(403, "ForbiddenException");
    let other = sign_body("PUT", "https://lake.s3.amazonaws.com/wh/sales/orders/data/f.parquet");
    sign_as("alice", other).await.assert_error(403, "ForbiddenException");
    assert_eq!(signs_received(&upstream), 1, "only the stage-create was a POST to the catalog");
}
