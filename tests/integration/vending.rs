//! Credential vending and remote signing through icegate (docs/design.md §8), against a fake catalog
//! that vends decoys: what the client gets, and what reached the upstream.

use crate::fake_upstream::{FakeUpstream, Gate, Recorded, Reply, basic, gate, send};
use icegate::config::credentials::Mode;
use serde_json::{Value, json};

static POLICY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    crate::support::sales_policy(&["{ name: alice, roles: [analyst, editor] }", "{ name: dave, roles: [analyst] }"])
});

const TABLE: &str = "/v1/prod/namespaces/sales/tables/orders";
const METADATA: &str = r#"{"format-version":2,"table-uuid":"u","location":"s3://lake/wh/sales/orders","properties":{"write.data.path":"s3://data/orders"},"schemas":[ {"type":"struct","schema-id":0,"fields":[]} ]}"#;

/// What a vending catalog answers, decoys included.
fn vended_config() -> Value {
    json!({
        "s3.access-key-id": "AKIA-UPSTREAM", "s3.secret-access-key": "upstream-secret", "s3.session-token": "st",
        "S3.Secret-Access-Key": "mixed", "s3.secret-key": "invented", "my.custom.secret": "x",
        "gcs.oauth2.token": "g", "adls.sas-token.acct": "a", "client.access-key-id": "c",
        "token": "upstream-token", "client.region": "eu-west-1", "s3.endpoint": "http://s3.local",
        "client.refresh-credentials-endpoint": "http://upstream/v1/prod/namespaces/sales/tables/orders/credentials",
    })
}

fn storage_credentials() -> Value {
    json!([
        {"prefix": "s3://lake/", "config": {"s3.access-key-id": "BUCKET-ROOT"}},
        {"prefix": "s3://lake/wh/sales/orders", "config": {"s3.access-key-id": "TABLE", "token": "t"}},
        {"prefix": "s3://data/orders/", "config": {"s3.access-key-id": "DATA"}},
    ])
}

fn load_table_body() -> String {
    format!(
        r#"{{"metadata-location":"s3://lake/wh/sales/orders/metadata/1.json","metadata":{METADATA},"config":{},"storage-credentials":{}}}"#,
        vended_config(),
        storage_credentials()
    )
}

/// The fake catalog: loads, credentials and plans vend; signing answers a fixed signature.
fn catalog(r: &Recorded) -> Reply {
    let path = r.target.split('?').next().unwrap_or_default();
    match (r.method.as_str(), path) {
        ("GET", TABLE) | ("POST", "/v1/prod/namespaces/sales/tables") => Reply::raw(200, &load_table_body()),
        ("GET", p) if p == format!("{TABLE}/credentials") => {
            Reply::json(200, json!({"storage-credentials": storage_credentials()}))
        }
        ("POST", p) if p == format!("{TABLE}/plan") => Reply::json(
            200,
            json!({"status": "completed", "plan-id": "p1", "file-scan-tasks": [], "storage-credentials": storage_credentials()}),
        ),
        ("POST", p) if p == format!("{TABLE}/sign") => {
            Reply::json(200, json!({"uri": "signed", "headers": {"Authorization": ["AWS4-HMAC-SHA256 fake"]}}))
        }
        _ => Reply::ok(),
    }
}

async fn setup(mode: Mode, tweak: impl FnOnce(&mut icegate::config::Config)) -> (FakeUpstream, Gate) {
    let upstream = FakeUpstream::start(catalog).await;
    let g = gate(&upstream.url(""), &POLICY, |c| {
        c.credentials.mode = mode;
        tweak(c);
    })
    .await;
    (upstream, g)
}

async fn get(g: &Gate, user: &str, target: &str, roles: Option<&str>) -> Value {
    let auth = basic(user);
    let mut headers = vec![("authorization", auth.as_str()), ("x-iceberg-access-delegation", "vended-credentials")];
    if let Some(r) = roles {
        headers.push(("x-gravitino-active-roles", r));
    }
    let a = send(g.addr, "GET", target, &headers, b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.headers.get("cache-control").unwrap(), "no-store");
    a.json()
}

fn prefixes(v: &Value) -> Vec<&str> {
    v["storage-credentials"].as_array().unwrap().iter().map(|c| c["prefix"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn a_writer_keeps_the_upstreams_credentials_without_token_or_foreign_prefixes() {
    let (upstream, g) = setup(Mode::StripBroader, |_| {}).await;
    let v = get(&g, "alice", TABLE, None).await;
    assert_eq!(v["config"]["s3.access-key-id"], "AKIA-UPSTREAM");
    assert!(v["config"].get("token").is_none());
    assert_eq!(
        v["config"]["client.refresh-credentials-endpoint"],
        "v1/prod/namespaces/sales/tables/orders/credentials"
    );
    assert_eq!(prefixes(&v), ["s3://lake/wh/sales/orders", "s3://data/orders/"]);
    assert!(v["storage-credentials"][0]["config"].get("token").is_none());
    assert_eq!(upstream.only().header("x-iceberg-access-delegation"), Some("vended-credentials"));
}

#[tokio::test]
async fn a_reader_narrowed_from_a_writer_gets_no_credential_under_any_name() {
    let (upstream, g) = setup(Mode::StripBroader, |_| {}).await;
    let v = get(&g, "alice", TABLE, Some("analyst")).await;
    assert_eq!(v["config"], json!({"client.region": "eu-west-1", "s3.endpoint": "http://s3.local"}));
    assert_eq!(v["storage-credentials"], json!([]));
    assert_eq!(upstream.only().header("x-iceberg-access-delegation"), None);
    // the metadata is the upstream's, byte for byte
    let a = send(g.addr, "GET", TABLE, &[("authorization", &basic("alice"))], b"").await;
    assert!(a.text().contains(&format!(r#""metadata":{METADATA}"#)), "{}", a.text());
}

#[tokio::test]
async fn a_reader_who_holds_only_read_keeps_what_the_upstream_vends_for_them() {
    let (_upstream, g) = setup(Mode::StripBroader, |_| {}).await;
    let v = get(&g, "dave", TABLE, None).await;
    assert_eq!(v["config"]["s3.access-key-id"], "AKIA-UPSTREAM");
}

#[tokio::test]
async fn strip_mode_and_service_auth_remove_even_an_unnarrowed_readers_credentials() {
    let (_u, g) = setup(Mode::Strip, |_| {}).await;
    let v = get(&g, "alice", TABLE, None).await;
    assert_eq!(v["storage-credentials"], json!([]));
    assert!(v["config"].get("s3.access-key-id").is_none());

    let (_u, g) = setup(Mode::StripBroader, |c| {
        c.upstream.auth = icegate::config::UpstreamAuth::Service;
        c.upstream.service_authorization = Some("Bearer icegate".into());
    })
    .await;
    assert_eq!(get(&g, "dave", TABLE, None).await["storage-credentials"], json!([]));
    assert_eq!(get(&g, "alice", TABLE, None).await["config"]["s3.access-key-id"], "AKIA-UPSTREAM");
}

#[tokio::test]
async fn oauth2_upstream_auth_is_a_service_credential_too() {
    // the catalog authenticates icegate, not dave: what it vends is taken as WRITE
    let idp = crate::upstream_oauth2::Idp::start(3600, std::time::Duration::ZERO).await;
    let dir = crate::support::TempDir::new("vend-oauth2");
    let (upstream, g) = setup(Mode::StripBroader, |c| crate::upstream_oauth2::oauth2_config(c, &idp, &dir)).await;
    assert_eq!(get(&g, "dave", TABLE, None).await["storage-credentials"], json!([]));
    assert_eq!(upstream.only().header("authorization"), Some("Bearer tok-1-opaque"));
}

#[tokio::test]
async fn passthrough_keeps_credentials_for_a_narrowed_caller() {
    let (upstream, g) = setup(Mode::Passthrough, |_| {}).await;
    let v = get(&g, "alice", TABLE, Some("analyst")).await;
    assert_eq!(v["config"]["s3.access-key-id"], "AKIA-UPSTREAM");
    assert!(v["config"].get("token").is_none());
    assert_eq!(upstream.only().header("x-iceberg-access-delegation"), Some("vended-credentials"));
    assert_eq!(upstream.only().header("x-gravitino-active-roles"), Some("analyst"));
}

#[tokio::test]
async fn load_credentials_is_filtered_by_the_locations_of_the_table_loaded_once() {
    let (upstream, g) = setup(Mode::StripBroader, |_| {}).await;
    let target = format!("{TABLE}/credentials?planId=p1");
    for _ in 0..2 {
        let v = get(&g, "alice", &target, None).await;
        assert_eq!(prefixes(&v), ["s3://lake/wh/sales/orders", "s3://data/orders/"]);
    }
    let loads = upstream.requests().iter().filter(|r| r.target == TABLE).count();
    assert_eq!(loads, 1, "the locations are cached");
    let narrowed = get(&g, "alice", &target, Some("analyst")).await;
    assert_eq!(narrowed, json!({"storage-credentials": []}));
}

#[tokio::test]
async fn scan_planning_results_lose_credentials_like_loads() {
    let (_u, g) = setup(Mode::StripBroader, |_| {}).await;
    let auth = basic("alice");
    let plan = format!("{TABLE}/plan");
    let a = send(g.addr, "POST", &plan, &[("authorization", &auth)], b"{}").await;
    assert_eq!(prefixes(&a.json()), ["s3://lake/wh/sales/orders", "s3://data/orders/"]);
    let narrowed = [("authorization", auth.as_str()), ("x-gravitino-active-roles", "analyst")];
    let a = send(g.addr, "POST", &plan, &narrowed, b"{}").await;
    assert_eq!(a.json()["storage-credentials"], json!([]));
    assert_eq!(a.json()["plan-id"], "p1");
}

#[tokio::test]
async fn signer_keys_point_at_icegates_table_endpoint() {
    let upstream = FakeUpstream::start(|r: &Recorded| {
        let body = format!(
            r#"{{"metadata-location":"m","metadata":{METADATA},"config":{{"s3.remote-signing-enabled":"true","s3.signer.uri":"http://upstream","s3.signer.endpoint":"v1/aws/s3/sign"}}}}"#
        );
        if r.method == "GET" { Reply::raw(200, &body) } else { Reply::ok() }
    })
    .await;
    let g =
        gate(&upstream.url(""), &POLICY, |c| c.credentials.public_url = Some("https://gate.example/iceberg".into()))
            .await;
    let v = get(&g, "alice", TABLE, Some("analyst")).await;
    assert_eq!(
        v["config"],
        json!({"s3.remote-signing-enabled": "true", "s3.signer": "S3V4RestSigner",
               "s3.signer.uri": "https://gate.example/iceberg",
               "s3.signer.endpoint": "v1/prod/namespaces/sales/tables/orders/sign",
               // Iceberg 1.12 reads only these (issue 28)
               "signer.uri": "https://gate.example/iceberg",
               "signer.endpoint": "v1/prod/namespaces/sales/tables/orders/sign"})
    );
}

fn sign_body(method: &str, uri: &str) -> Vec<u8> {
    json!({"region": "us-east-1", "method": method, "uri": uri, "headers": {"User-Agent": ["test"]}})
        .to_string()
        .into_bytes()
}

#[tokio::test]
async fn sign_requests_are_authorized_by_method_and_by_the_tables_locations() {
    let (upstream, g) = setup(Mode::StripBroader, |_| {}).await;
    let sign = format!("{TABLE}/sign");
    let auth = |u: &str| basic(u);
    let inside = "https://lake.s3.amazonaws.com/wh/sales/orders/data/f.parquet";
    let cases: [(&str, Option<&str>, &str, &str, u16); 7] = [
        ("dave", None, "GET", inside, 200),
        ("dave", None, "PUT", inside, 403),
        ("alice", Some("analyst"), "PUT", inside, 403),
        ("alice", None, "PUT", inside, 200),
        ("alice", None, "PUT", "http://s3.local/data/orders/x", 200),
        ("alice", None, "GET", "https://lake.s3.amazonaws.com/wh/sales/other/f", 403),
        ("alice", None, "GET", "https://lake.s3.amazonaws.com/wh/sales/orders/../other/f", 403),
    ];
    for (user, roles, method, uri, status) in cases {
        let a_auth = auth(user);
        let mut headers = vec![("authorization", a_auth.as_str())];
        if let Some(r) = roles {
            headers.push(("x-gravitino-active-roles", r));
        }
        let before = upstream.requests().iter().filter(|r| r.target == sign).count();
        let a = send(g.addr, "POST", &sign, &headers, &sign_body(method, uri)).await;
        assert_eq!(a.status, status, "{user} {method} {uri}: {}", a.text());
        let after = upstream.requests().iter().filter(|r| r.target == sign).count();
        assert_eq!(after - before, usize::from(status == 200), "{user} {method} {uri}");
        if status == 403 {
            a.assert_error(403, "ForbiddenException");
        }
    }
    let loads = upstream.requests().iter().filter(|r| r.target == TABLE).count();
    assert_eq!(loads, 1, "the table's locations are loaded once and cached");
    let legacy =
        send(g.addr, "POST", "/v1/aws/s3/sign", &[("authorization", &auth("alice"))], &sign_body("GET", inside)).await;
    legacy.assert_error(403, "ForbiddenException");
}

#[tokio::test]
async fn a_sign_request_for_a_missing_table_is_404_and_an_unloadable_one_502() {
    let upstream = FakeUpstream::start(|r: &Recorded| match r.method.as_str() {
        "GET" if r.target.ends_with("/missing") => {
            Reply::json(404, json!({"error": {"message": "no", "type": "NoSuchTableException", "code": 404}}))
        }
        "GET" => Reply::raw(200, "not json"),
        _ => Reply::ok(),
    })
    .await;
    let g = gate(&upstream.url(""), &POLICY, |_| {}).await;
    let body = sign_body("GET", "https://lake.s3.amazonaws.com/wh/sales/orders/f");
    let a = send(
        g.addr,
        "POST",
        "/v1/prod/namespaces/sales/tables/missing/sign",
        &[("authorization", &basic("alice"))],
        &body,
    )
    .await;
    a.assert_error(404, "NoSuchTableException");
    let a = send(g.addr, "POST", &format!("{TABLE}/sign"), &[("authorization", &basic("alice"))], &body).await;
    a.assert_error(502, "BadGatewayException");
    assert!(upstream.requests().iter().all(|r| !r.target.ends_with("/sign")));
}

#[tokio::test]
async fn a_malformed_or_ambiguous_credential_response_is_502() {
    for body in [
        r#"{"metadata":{"location":"s3://lake/t"},"config":{"s3.access-key-id":"a"},"config":{}}"#,
        r#"{"metadata":{"location":"s3://lake/t"]}"#,
        r#"{"metadata":{},"storage-credentials":{"prefix":"s3://lake/t"}}"#,
        "[]",
        // a key twice in a `config` map: clients differ on which value they read
        r#"{"metadata":{"location":"s3://lake/t"},"config":{"token":"t","client.region":"r","token":"t2"}}"#,
        r#"{"metadata":{"location":"s3://lake/t"},"config":{"s3.access-key-id":"a","s3.access-key-\u0069d":"b"}}"#,
        r#"{"metadata":{"location":"s3://lake/t"},"storage-credentials":[{"prefix":"s3://lake/t","config":{"s3.access-key-id":"a","s3.access-key-id":"b"}}]}"#,
    ] {
        let upstream = FakeUpstream::start(move |_: &Recorded| Reply::raw(200, body)).await;
        let g = gate(&upstream.url(""), &POLICY, |_| {}).await;
        let a = send(g.addr, "GET", TABLE, &[("authorization", &basic("alice"))], b"").await;
        let message = a.assert_error(502, "BadGatewayException");
        assert!(!message.contains("AKIA") && !a.text().contains("access-key"), "{message}");
    }
}

/// icegate resumes the scan of an answer whose bytes up to the end of `metadata` equal the
/// last answer's for the table (issue 33): each later answer is still rewritten from its own
/// credentials, refused when what follows the metadata is broken, and read anew when the
/// metadata changed.
#[tokio::test]
async fn repeated_loads_of_an_unchanged_table_are_each_rewritten_and_checked_in_full() {
    let moved = METADATA.replace("s3://data/orders", "s3://moved/orders");
    let answers: Vec<(String, u16)> = vec![
        (load_table_body(), 200),
        (load_table_body().replace("AKIA-UPSTREAM", "AKIA-SECOND"), 200),
        (load_table_body().replace(r#","config":"#, r#","metadata":{},"config":"#), 502),
        (load_table_body().trim_end_matches('}').to_owned(), 502),
        (format!("{} x", load_table_body()), 502),
        (load_table_body().replace(METADATA, &moved).replace("s3://data/orders/", "s3://moved/orders/"), 200),
    ];
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let script = {
        let (answers, served) = (answers.clone(), served.clone());
        move |_: &Recorded| {
            let n = served.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Reply::raw(200, &answers[n.min(answers.len() - 1)].0)
        }
    };
    let upstream = FakeUpstream::start(script).await;
    let g = gate(&upstream.url(""), &POLICY, |c| c.credentials.mode = Mode::StripBroader).await;
    let mut seen = Vec::new();
    for (i, (_, status)) in answers.iter().enumerate() {
        let auth = basic("alice");
        let a = send(g.addr, "GET", TABLE, &[("authorization", &auth)], b"").await;
        assert_eq!(a.status, *status, "answer {i}: {}", a.text());
        if *status == 200 {
            seen.push(a.json());
        } else {
            a.assert_error(502, "BadGatewayException");
        }
    }
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), answers.len());
    assert_eq!(seen[0]["config"]["s3.access-key-id"], "AKIA-UPSTREAM");
    assert_eq!(seen[1]["config"]["s3.access-key-id"], "AKIA-SECOND");
    assert_eq!(seen[1]["metadata"], seen[0]["metadata"]);
    assert_eq!(seen[2]["metadata"]["properties"]["write.data.path"], "s3://moved/orders");
    assert_eq!(prefixes(&seen[2]), ["s3://lake/wh/sales/orders", "s3://moved/orders/"]);
}
