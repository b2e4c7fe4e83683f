//! Lakekeeper 0.7.3 as clients and replicas meet it through icegate (issue 45), two warehouses
//! of the recording fake: the profile was written from lakekeeper/lakekeeper's `get_config`
//! (getConfig answers only `?warehouse=<name>`: 400 "No warehouse specified" without it, 404 for
//! a warehouse's id; `overrides.prefix` is the warehouse's id) and its S3 storage profile before
//! 0.9 (`s3.signer.uri = <base>/catalog/v1/<warehouse-id>` in getConfig's overrides only, signed
//! at the default endpoint `v1/aws/s3/sign` under it; a table's config says
//! `s3.remote-signing-enabled = true`, and `s3.signer = S3V4RestSigner` only when vended
//! credentials were asked for from a warehouse without STS; with STS, credentials instead). Its
//! signer signs every header it is given (aws-sigv4 leaves out only `authorization`,
//! `user-agent`, `x-amzn-trace-id` and `transfer-encoding`), `Expect` included. It does not
//! serve the table-scoped sign route.

use crate::fake_upstream::{Answer, FakeUpstream, Gate, Recorded, Reply, basic, gate, send};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

/// `demo` signs (no STS: asked for credentials, it offers signing); `other` vends STS credentials.
const DEMO: &str = "0195c3a1-8f2e-7d41-9a6b-3c5d7e9f1a2b";
const OTHER: &str = "0195c3a1-9999-7d41-9a6b-3c5d7e9f1a2b";

fn warehouse_id(name: &str) -> Option<&'static str> {
    match name {
        "demo" => Some(DEMO),
        "other" => Some(OTHER),
        _ => None,
    }
}

fn error(code: u16, kind: &str, message: &str) -> Reply {
    Reply::json(code, json!({"error": {"message": message, "type": kind, "code": code}}))
}

/// The signature a signer makes over every header it was given, as aws-sigv4 does.
fn signature(request: &Value) -> String {
    let mut names: Vec<String> = request["headers"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k.to_ascii_lowercase())
        .filter(|k| !["authorization", "user-agent", "x-amzn-trace-id", "transfer-encoding"].contains(&k.as_str()))
        .chain(["host".to_owned()])
        .collect();
    names.sort();
    format!("AWS4-HMAC-SHA256 Credential=lakekeeper, SignedHeaders={}, Signature=0", names.join(";"))
}

fn table_config(warehouse: &str, delegation: Option<&str>) -> Value {
    let vended = delegation.is_some_and(|d| d.contains("vended-credentials"));
    match (warehouse, vended) {
        (OTHER, true) => json!({"s3.region": "us-east-1", "client.region": "us-east-1",
                                "s3.access-key-id": "ASIALAKEKEEPER", "s3.secret-access-key": "lakekeeper-secret",
                                "s3.session-token": "lakekeeper-session"}),
        // `insert_pyiceberg_hack`: vended credentials asked for, no STS
        (_, true) => json!({"s3.region": "us-east-1", "client.region": "us-east-1",
                            "s3.signer": "S3V4RestSigner", "s3.remote-signing-enabled": "true"}),
        (_, false) => json!({"s3.region": "us-east-1", "client.region": "us-east-1",
                             "s3.remote-signing-enabled": "true"}),
    }
}

fn load_table(warehouse: &str, table: &str, delegation: Option<&str>) -> Value {
    let location = format!("s3://lake-bucket/{warehouse}/sales/{table}");
    json!({
        "metadata-location": format!("{location}/metadata/00001-u.metadata.json"),
        "metadata": {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
                     "location": location, "last-updated-ms": 1, "properties": {},
                     "schemas": [{"type": "struct", "schema-id": 0, "fields": []}], "current-schema-id": 0},
        "config": table_config(warehouse, delegation),
    })
}

/// Lakekeeper 0.7.3 at `/catalog` of the fake's origin.
async fn lakekeeper() -> FakeUpstream {
    let own: Arc<OnceLock<String>> = Arc::default();
    let url = Arc::clone(&own);
    let server = FakeUpstream::start(move |r: &Recorded| {
        let own = url.get().map_or("", String::as_str);
        if !r.header("authorization").is_some_and(|a| a.starts_with("Basic ")) {
            return error(401, "NotAuthorizedException", "not authenticated");
        }
        let Some(rest) = r.target.strip_prefix("/catalog") else { return Reply::raw(404, "") };
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        if path == "/v1/config" {
            let warehouse = query.split('&').find_map(|q| q.strip_prefix("warehouse="));
            return match warehouse.map(|w| (w, warehouse_id(w))) {
                None => error(
                    400,
                    "BadRequestException",
                    "No warehouse specified. Please specify the 'warehouse' parameter in the GET /config request.",
                ),
                Some((_, Some(id))) => Reply::json(
                    200,
                    json!({
                        "defaults": {"s3.delete-enabled": "false"},
                        "overrides": {"prefix": id, "uri": format!("{own}/catalog"),
                                      "s3.signer.uri": format!("{own}/catalog/v1/{id}")},
                    }),
                ),
                Some((w, None)) => error(404, "WarehouseNotFound", &format!("Warehouse {w} not found")),
            };
        }
        let Some((id, route)) = path.strip_prefix("/v1/").and_then(|p| p.split_once('/')) else {
            return Reply::raw(404, "");
        };
        if ![DEMO, OTHER].contains(&id) {
            return Reply::raw(404, "");
        }
        if (r.method.as_str(), route) == ("POST", "v1/aws/s3/sign") {
            let request: Value = serde_json::from_slice(&r.body).unwrap();
            return Reply::json(
                200,
                json!({"uri": request["uri"], "headers": {"Authorization": [signature(&request)]}}),
            );
        }
        match (r.method.as_str(), route.strip_prefix("namespaces/sales/tables/")) {
            ("GET", Some(table)) if !table.contains('/') => {
                Reply::json(200, load_table(id, table, r.header("x-iceberg-access-delegation")))
            }
            // the table-scoped sign route is not served: axum's empty 404
            _ => Reply::raw(404, ""),
        }
    })
    .await;
    own.set(server.url("")).unwrap();
    server
}

const POLICY: &str = r#"
version: 1
metalake: lake
catalogs:
  - { prefix: "0195c3a1-8f2e-7d41-9a6b-3c5d7e9f1a2b", name: lake }
  - { prefix: "0195c3a1-9999-7d41-9a6b-3c5d7e9f1a2b", name: other }
users:
  - { name: alice, roles: [analyst, editor] }
roles:
  - name: analyst
    securableObjects:
      - { type: CATALOG, fullName: lake, privileges: [{ name: USE_CATALOG, condition: ALLOW }, { name: USE_SCHEMA, condition: ALLOW }, { name: SELECT_TABLE, condition: ALLOW }] }
      - { type: CATALOG, fullName: other, privileges: [{ name: USE_CATALOG, condition: ALLOW }, { name: USE_SCHEMA, condition: ALLOW }, { name: SELECT_TABLE, condition: ALLOW }] }
  - name: editor
    securableObjects:
      - { type: CATALOG, fullName: lake, privileges: [{ name: USE_CATALOG, condition: ALLOW }, { name: USE_SCHEMA, condition: ALLOW }, { name: MODIFY_TABLE, condition: ALLOW }] }
      - { type: CATALOG, fullName: other, privileges: [{ name: USE_CATALOG, condition: ALLOW }, { name: USE_SCHEMA, condition: ALLOW }, { name: MODIFY_TABLE, condition: ALLOW }] }
"#;

fn object(warehouse: &str) -> String {
    format!("https://lake-bucket.s3.us-east-1.amazonaws.com/{warehouse}/sales/orders/data/00000-0-f.parquet")
}

async fn sign(g: &Gate, warehouse: &str, headers: Value) -> Answer {
    let body = json!({"region": "us-east-1", "method": "PUT", "uri": object(warehouse), "headers": headers});
    let target = format!("/v1/{warehouse}/namespaces/sales/tables/orders/sign");
    send(g.addr, "POST", &target, &[("authorization", &basic("alice"))], body.to_string().as_bytes()).await
}

fn targets(upstream: &FakeUpstream) -> Vec<String> {
    upstream.requests().into_iter().map(|r| r.target).collect()
}

#[tokio::test]
async fn lakekeeper_073_a_narrowed_reader_is_offered_the_whole_signer_and_a_table_without_one_nothing() {
    let upstream = lakekeeper().await;
    let g = gate(&upstream.url("/catalog"), POLICY, |_| {}).await;
    let auth = basic("alice");
    let vended = ("x-iceberg-access-delegation", "vended-credentials");
    for warehouse in [DEMO, OTHER] {
        let target = format!("/v1/{warehouse}/namespaces/sales/tables/orders");
        // narrowed to a reader: no credentials are asked for, so Lakekeeper sends no `s3.signer`
        let narrowed = [("authorization", auth.as_str()), vended, ("x-gravitino-active-roles", "analyst")];
        let a = send(g.addr, "GET", &target, &narrowed, b"").await;
        assert_eq!(a.status, 200, "{}", a.text());
        assert_eq!(upstream.requests().last().unwrap().header("x-iceberg-access-delegation"), None);
        let config = &a.json()["config"];
        let ours = format!("{}/sign", target.trim_start_matches('/'));
        assert_eq!(config["s3.remote-signing-enabled"], "true", "{config}");
        assert_eq!(config["s3.signer"], "S3V4RestSigner", "PyIceberg signs only with it: {config}");
        assert_eq!((&config["s3.signer.endpoint"], &config["signer.endpoint"]), (&json!(ours), &json!(ours)));
        assert!(config.get("s3.signer.uri").is_none() && config.get("signer.uri").is_none(), "{config}");
        assert!(config.get("s3.access-key-id").is_none(), "{config}");
    }
    // at full scope the STS warehouse vends credentials: the table has no signer, none is offered
    let full = send(
        g.addr,
        "GET",
        &format!("/v1/{OTHER}/namespaces/sales/tables/orders"),
        &[("authorization", &auth), vended],
        b"",
    )
    .await;
    let config = &full.json()["config"];
    assert_eq!(config["s3.access-key-id"], "ASIALAKEKEEPER", "{config}");
    for key in ["s3.signer", "s3.remote-signing-enabled", "s3.signer.endpoint", "signer.endpoint"] {
        assert!(config.get(key).is_none(), "{key} offered for a table without a signer: {config}");
    }
}

#[tokio::test]
async fn lakekeeper_073_a_fresh_replica_finds_each_warehouses_signer_from_the_configured_warehouses() {
    let upstream = lakekeeper().await;
    let g =
        gate(&upstream.url("/catalog"), POLICY, |c| c.upstream.warehouses = vec!["demo".into(), "other".into()]).await;
    // no client's getConfig has passed through this process
    let a = sign(&g, DEMO, json!({"Content-Length": ["10"]})).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let b = sign(&g, OTHER, json!({"Content-Length": ["10"]})).await;
    assert_eq!(b.status, 200, "{}", b.text());
    let table = |w: &str| format!("/catalog/v1/{w}/namespaces/sales/tables/orders");
    let signer = |w: &str| format!("/catalog/v1/{w}/v1/aws/s3/sign");
    assert_eq!(
        targets(&upstream),
        [
            table(DEMO),
            "/catalog/v1/config?warehouse=demo".to_owned(),
            signer(DEMO),
            // `demo` is known to be another warehouse: only `other` is asked
            table(OTHER),
            "/catalog/v1/config?warehouse=other".to_owned(),
            signer(OTHER),
        ]
    );
    let signed = upstream.requests().pop().unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&signed.body).unwrap()["uri"], json!(object(OTHER)));
    // remembered: the next sign requests ask nothing more of getConfig
    assert_eq!(sign(&g, DEMO, json!({})).await.status, 200);
    assert_eq!(targets(&upstream).last().unwrap(), &signer(DEMO));
    assert_eq!(targets(&upstream).iter().filter(|t| t.contains("/config")).count(), 2);
}

#[tokio::test]
async fn lakekeeper_073_a_signer_that_cannot_be_learnt_is_a_502_and_never_another_warehouses() {
    let upstream = lakekeeper().await;
    let g = gate(&upstream.url("/catalog"), POLICY, |_| {}).await;
    // nothing configured, no getConfig relayed: Lakekeeper refuses getConfig without a warehouse
    let message = sign(&g, DEMO, json!({})).await.assert_error(502, "BadGatewayException");
    assert!(message.contains("cannot be learnt") && message.contains("`warehouses`"), "{message}");
    assert!(message.contains("400"), "{message}");
    assert!(!message.contains("127.0.0.1"), "the upstream's address is not quoted: {message}");
    assert!(targets(&upstream).iter().all(|t| !t.ends_with("/sign")), "no guess: {:?}", targets(&upstream));

    // a client's getConfig for `demo` teaches `demo`'s signer, and nothing of `other`'s
    let config = send(g.addr, "GET", "/v1/config?warehouse=demo", &[("authorization", &basic("alice"))], b"").await;
    assert_eq!(config.status, 200, "{}", config.text());
    assert_eq!(sign(&g, DEMO, json!({})).await.status, 200);
    assert_eq!(targets(&upstream).last().unwrap(), &format!("/catalog/v1/{DEMO}/v1/aws/s3/sign"));
    let before = upstream.requests().len();
    sign(&g, OTHER, json!({})).await.assert_error(502, "BadGatewayException");
    let asked: Vec<String> = targets(&upstream).split_off(before);
    assert!(asked.iter().all(|t| !t.ends_with("/sign")), "{asked:?}");
    assert!(!asked.contains(&"/catalog/v1/config?warehouse=demo".to_owned()), "another warehouse's query: {asked:?}");

    // a warehouse configured by its id: Lakekeeper's 404, and still a 502 that says so
    let g = gate(&upstream.url("/catalog"), POLICY, |c| c.upstream.warehouses = vec![OTHER.into()]).await;
    let message = sign(&g, OTHER, json!({})).await.assert_error(502, "BadGatewayException");
    assert!(message.contains(&format!("with `warehouse={OTHER}` answered 404")), "{message}");
}

#[tokio::test]
async fn lakekeeper_073_sign_requests_reach_its_signer_without_hop_by_hop_headers() {
    let upstream = lakekeeper().await;
    let g = gate(&upstream.url("/catalog"), POLICY, |_| {}).await;
    // the client's getConfig tells icegate the warehouse's signer
    let config = send(g.addr, "GET", "/v1/config?warehouse=demo", &[("authorization", &basic("alice"))], b"").await;
    assert_eq!(config.status, 200, "{}", config.text());
    let headers = json!({"Expect": ["100-continue"], "Connection": ["keep-alive"], "Content-Length": ["10"],
                         "x-amz-content-sha256": ["UNSIGNED-PAYLOAD"], "Keep-Alive": ["timeout=5"]});
    let a = sign(&g, DEMO, headers).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let authorization = a.json()["headers"]["Authorization"][0].as_str().unwrap().to_owned();
    assert!(authorization.contains("SignedHeaders=content-length;host;x-amz-content-sha256,"), "{authorization}");
    let signed = upstream.requests().pop().unwrap();
    let forwarded: Value = serde_json::from_slice(&signed.body).unwrap();
    assert_eq!(
        forwarded["headers"],
        json!({"Content-Length": ["10"], "x-amz-content-sha256": ["UNSIGNED-PAYLOAD"]}),
        "what the signer was given"
    );
    assert_eq!(signed.header("content-length"), Some(signed.body.len().to_string().as_str()));
}
