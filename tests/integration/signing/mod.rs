//! Remote signing through icegate (docs/design.md §8), in front of recording fake catalogs: what may
//! be signed, how a `uri` is mapped to its bucket, where an authorized sign request goes (the
//! table-scoped route, or the signer a Lakekeeper-like catalog advertises), and that no upstream
//! signer address, identity header or null member trips a client. Each test asserts the answer
//! and what reached the catalog.

use crate::fake_upstream::{FakeUpstream, Gate, Recorded, Reply, basic, gate, send};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

/// A signer advertised in getConfig only (issue 28, Lakekeeper before 0.9).
mod advertised;
/// What a signature binds and which headers it may sign (issue 28).
mod binds;
/// icegate as the signer, for catalogs that have none (issue 28).
mod local;
/// What loadTable-like answers offer when icegate is the signer (issue 28).
mod local_answers;

const POLICY: &str = r#"
version: 1
metalake: lake
default_catalog: prod
users:
  - { name: alice, roles: [writer] }
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
"#;

const TABLE: &str = "/v1/prod/namespaces/sales/tables/orders";
const SIGN: &str = "/v1/prod/namespaces/sales/tables/orders/sign";
/// The table's objects, virtual-hosted on AWS.
const OBJECT: &str = "https://lake.s3.amazonaws.com/wh/sales/orders/data/f.parquet";
const BUCKET: &str = "https://lake.s3.amazonaws.com/";

/// A loadTable response of the table at `s3://lake/wh/sales/orders` with `config`.
fn load_table(config: &Value) -> String {
    format!(
        r#"{{"metadata-location":"s3://lake/wh/sales/orders/metadata/1.json","metadata":{{"format-version":2,"table-uuid":"u","location":"s3://lake/wh/sales/orders","properties":{{}},"schemas":[]}},"config":{config}}}"#
    )
}

/// A signature that signs the payload hash, so it also binds a batch delete's body.
const SIGNED: &str = "AWS4-HMAC-SHA256 Credential=fake, SignedHeaders=host;x-amz-content-sha256, Signature=0";

/// A catalog that serves the spec's table-scoped sign route.
async fn table_route_catalog(config: Value) -> FakeUpstream {
    FakeUpstream::start(move |r: &Recorded| match (r.method.as_str(), r.target.as_str()) {
        ("GET", TABLE) => Reply::raw(200, &load_table(&config)),
        ("POST", SIGN) => Reply::json(200, json!({"uri": "u", "headers": {"Authorization": [SIGNED]}})),
        _ => Reply::json(404, json!({"error": {"message": "no route", "type": "NotFoundException", "code": 404}})),
    })
    .await
}

fn sign_body(method: &str, uri: &str) -> Value {
    json!({"region": "us-east-1", "method": method, "uri": uri, "headers": {"User-Agent": ["test"]}})
}

async fn sign(g: &Gate, body: &Value) -> crate::fake_upstream::Answer {
    let auth = basic("alice");
    send(g.addr, "POST", SIGN, &[("authorization", &auth)], body.to_string().as_bytes()).await
}

fn signs_received(upstream: &FakeUpstream) -> usize {
    upstream.requests().iter().filter(|r| r.method == "POST").count()
}

/// Each of `refused` is 403 and never reaches the catalog; each of `signed` reaches it.
async fn assert_signed_only(g: &Gate, upstream: &FakeUpstream, signed: &[Value], refused: &[Value]) {
    for body in refused {
        let before = signs_received(upstream);
        let a = sign(g, body).await;
        a.assert_error(403, "ForbiddenException");
        assert_eq!(signs_received(upstream), before, "{body} reached the catalog");
    }
    for body in signed {
        let before = signs_received(upstream);
        let a = sign(g, body).await;
        assert_eq!(a.status, 200, "{body}: {}", a.text());
        assert_eq!(signs_received(upstream), before + 1, "{body} did not reach the catalog");
    }
}

#[tokio::test]
async fn finding_bucket_requests_with_a_prefix_under_the_table_are_not_signed() {
    let upstream = table_route_catalog(json!({})).await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    let prefix = "prefix=wh%2Fsales%2Forders%2F";
    let refused: Vec<Value> = [
        ("PUT", "policy"),
        ("PUT", "lifecycle"),
        ("DELETE", ""),
        ("GET", "acl"),
        ("PUT", "acl"),
        ("GET", "policy"),
        ("PUT", "tagging"),
        ("PUT", "cors"),
        ("PUT", "versioning"),
        ("PUT", "website"),
        ("PUT", "replication"),
        ("PUT", "encryption"),
        ("PUT", "notification"),
        ("PUT", "logging"),
        ("PUT", "object-lock"),
        ("GET", "versions"),
        ("GET", "uploads"),
        ("PUT", ""),
        ("HEAD", ""),
    ]
    .iter()
    .map(|(method, sub)| {
        let query = if sub.is_empty() { prefix.to_owned() } else { format!("{sub}&{prefix}") };
        sign_body(method, &format!("{BUCKET}?{query}"))
    })
    .collect();
    let listing = sign_body("GET", &format!("{BUCKET}?list-type=2&{prefix}data%2F&delimiter=%2F"));
    assert_signed_only(&g, &upstream, &[listing], &refused).await;
}

#[tokio::test]
async fn finding_object_sub_resources_are_not_signed() {
    let upstream = table_route_catalog(json!({})).await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    let refused: Vec<Value> = [
        ("GET", "acl"),
        ("PUT", "acl"),
        ("PUT", "retention"),
        ("PUT", "legal-hold"),
        ("POST", "restore"),
        ("POST", "select&select-type=2"),
        ("GET", "torrent"),
        ("GET", "attributes"),
        ("GET", "uploadId=u"),
    ]
    .iter()
    .map(|(method, sub)| sign_body(method, &format!("{OBJECT}?{sub}")))
    .collect();
    let signed: Vec<Value> = [
        ("GET", ""),
        ("HEAD", ""),
        ("PUT", ""),
        ("PUT", "?partNumber=1&uploadId=u"),
        ("POST", "?uploads"),
        ("POST", "?uploadId=u"),
        ("DELETE", "?uploadId=u"),
        ("DELETE", ""),
        ("PUT", "?tagging"),
    ]
    .iter()
    .map(|(method, query)| sign_body(method, &format!("{OBJECT}{query}")))
    .collect();
    assert_signed_only(&g, &upstream, &signed, &refused).await;
}

#[tokio::test]
async fn finding_virtual_hosted_urls_are_mapped_as_their_endpoint_reads_them() {
    // The table's config names a custom endpoint that also serves virtual-hosted buckets.
    let upstream = table_route_catalog(json!({"s3.endpoint": "http://minio.local:9000"})).await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    // Each names bucket `other`, its path beginning with the table's bucket and location.
    let refused: Vec<Value> = [
        "https://other.s3.cn-north-1.amazonaws.com.cn/lake/wh/sales/orders/f",
        "https://other.s3.amazonaws.com./lake/wh/sales/orders/f",
        "http://other.minio.local:9000/lake/wh/sales/orders/f",
        // a host icegate cannot map with certainty
        "http://unknown.local:9000/lake/wh/sales/orders/f",
        "https://ap-1.s3-accesspoint.us-east-1.amazonaws.com/wh/sales/orders/f",
    ]
    .iter()
    .map(|uri| sign_body("GET", uri))
    .collect();
    let signed: Vec<Value> = [
        "https://lake.s3.cn-north-1.amazonaws.com.cn/wh/sales/orders/f",
        "https://lake.s3.amazonaws.com./wh/sales/orders/f",
        "http://lake.minio.local:9000/wh/sales/orders/f",
        "http://minio.local:9000/lake/wh/sales/orders/f",
        "https://s3.dualstack.eu-west-1.amazonaws.com/lake/wh/sales/orders/f",
    ]
    .iter()
    .map(|uri| sign_body("GET", uri))
    .collect();
    assert_signed_only(&g, &upstream, &signed, &refused).await;
}

#[tokio::test]
async fn finding_a_host_header_naming_another_bucket_is_not_signed() {
    let upstream = table_route_catalog(json!({})).await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    let with_host =
        |hosts: &[&str]| json!({"region": "us-east-1", "method": "GET", "uri": OBJECT, "headers": {"Host": hosts}});
    // A signer signs the `Host` it is given, and S3 reads the bucket from the host it is sent.
    let refused = [
        with_host(&["other.s3.amazonaws.com"]),
        with_host(&["lake.s3.amazonaws.com", "other.s3.amazonaws.com"]),
        json!({"region": "us-east-1", "method": "GET", "uri": OBJECT, "headers": {"host": ["other.s3.amazonaws.com"]}}),
    ];
    let signed = [with_host(&["lake.s3.amazonaws.com"]), with_host(&["Lake.S3.amazonaws.com:443"])];
    assert_signed_only(&g, &upstream, &signed, &refused).await;
}

fn delete_body(objects: &str) -> Value {
    let xml = format!(r#"<?xml version="1.0" encoding="UTF-8"?><Delete>{objects}<Quiet>true</Quiet></Delete>"#);
    json!({"region": "us-east-1", "method": "POST", "uri": format!("{BUCKET}?delete"), "headers": {}, "body": xml})
}

#[tokio::test]
async fn finding_a_batch_delete_is_checked_on_every_key_of_every_object() {
    let upstream = table_route_catalog(json!({})).await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    let inside = "<Object><Key>wh/sales/orders/data/a</Key></Object>";
    let refused = [
        delete_body("<Object><Key>wh/sales/orders/data/a</Key><Key>wh/sales/salaries/data/b</Key></Object>"),
        delete_body(&format!("{inside}<Object><Key>wh/sales/salaries/data/b</Key></Object>")),
        json!({"region": "us-east-1", "method": "POST", "uri": format!("{BUCKET}?delete"), "headers": {},
               "body": r#"<!DOCTYPE Delete [<!ENTITY k "wh/sales/salaries/x">]><Delete><Object><Key>&k;</Key></Object></Delete>"#}),
    ];
    let signed = [delete_body(&format!("{inside}<Object><Key>wh/sales/orders/data/b</Key></Object>"))];
    assert_signed_only(&g, &upstream, &signed, &refused).await;
}

/// A catalog that behaves as Lakekeeper does: it advertises its signer in the table's config
/// (`s3.signer.uri` on its own origin, `s3.signer.endpoint`) and serves no table-scoped route.
async fn lakekeeper_like(signer_uri: impl Fn(&str) -> String + Send + Sync + 'static) -> FakeUpstream {
    let own: Arc<OnceLock<String>> = Arc::default();
    let url = Arc::clone(&own);
    let upstream = FakeUpstream::start(move |r: &Recorded| {
        let config = json!({
            "s3.remote-signing-enabled": "true",
            "s3.signer.uri": signer_uri(url.get().unwrap()),
            "s3.signer.endpoint": "v1/wh-1/v1/aws/s3/sign",
        });
        match (r.method.as_str(), r.target.as_str()) {
            ("GET", TABLE) => Reply::raw(200, &load_table(&config)),
            ("POST", "/catalog/v1/wh-1/v1/aws/s3/sign") => {
                Reply::json(200, json!({"uri": "u", "headers": {"Authorization": [SIGNED]}}))
            }
            _ => Reply::json(404, json!({"error": {"message": "no route", "type": "NotFoundException", "code": 404}})),
        }
    })
    .await;
    own.set(upstream.url("")).unwrap();
    upstream
}

#[tokio::test]
async fn a_sign_request_goes_to_the_signer_the_upstream_advertises() {
    let upstream = lakekeeper_like(|own| format!("{own}/catalog/")).await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    let body = sign_body("GET", OBJECT);
    let a = sign(&g, &body).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["headers"]["Authorization"][0], SIGNED);
    let requests = upstream.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    // the table is loaded asking for remote signing, so that the catalog names its signer
    assert_eq!((requests[0].method.as_str(), requests[0].target.as_str()), ("GET", TABLE));
    assert_eq!(requests[0].header("x-iceberg-access-delegation"), Some("remote-signing"));
    let signed = &requests[1];
    assert_eq!(signed.target, "/catalog/v1/wh-1/v1/aws/s3/sign");
    assert_eq!(serde_json::from_slice::<Value>(&signed.body).unwrap(), body, "the same body");
    assert_eq!(signed.header("authorization"), Some(basic("alice").as_str()));
    // refused requests still go nowhere
    let before = upstream.requests().len();
    sign(&g, &sign_body("PUT", &format!("{BUCKET}?policy&prefix=wh%2Fsales%2Forders%2F")))
        .await
        .assert_error(403, "ForbiddenException");
    assert_eq!(upstream.requests().len(), before);
}

#[tokio::test]
async fn a_sign_request_goes_to_the_table_route_when_no_signer_is_advertised() {
    let upstream = table_route_catalog(json!({"s3.remote-signing-enabled": "true"})).await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    let a = sign(&g, &sign_body("GET", OBJECT)).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let targets: Vec<String> = upstream.requests().into_iter().map(|r| r.target).collect();
    // neither the table nor getConfig (asked once, its answer kept) advertises a signer
    assert_eq!(targets, [TABLE, "/v1/config", SIGN]);
    assert_eq!(sign(&g, &sign_body("GET", OBJECT)).await.status, 200);
    assert_eq!(upstream.requests().len(), 4, "the second is the sign request only");
}

#[tokio::test]
async fn an_advertised_signer_elsewhere_is_502_unless_the_configuration_names_its_origin() {
    let signer = FakeUpstream::start(|_: &Recorded| {
        Reply::json(200, json!({"uri": "u", "headers": {"Authorization": [SIGNED]}}))
    })
    .await;
    let elsewhere = signer.url("/catalog");
    let upstream = lakekeeper_like(move |_| elsewhere.clone()).await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    let message = sign(&g, &sign_body("GET", OBJECT)).await.assert_error(502, "BadGatewayException");
    assert!(!message.contains("127.0.0.1"), "the upstream's address is not quoted: {message}");
    signer.assert_untouched();
    assert_eq!(upstream.requests().len(), 1, "only the table's load");

    let origin = signer.url("");
    let g = gate(&upstream.url(""), POLICY, |c| c.credentials.signing.signer_origins = vec![origin]).await;
    let a = sign(&g, &sign_body("GET", OBJECT)).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(signer.only().target, "/catalog/v1/wh-1/v1/aws/s3/sign");
    assert_eq!(signer.only().header("authorization"), Some(basic("alice").as_str()));
}

#[tokio::test]
async fn a_configured_endpoint_maps_hosts_the_table_does_not_name() {
    let upstream = table_route_catalog(json!({})).await;
    let uri = "http://127.0.0.1:9000/lake/wh/sales/orders/f";
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    sign(&g, &sign_body("GET", uri)).await.assert_error(403, "ForbiddenException");
    let g = gate(&upstream.url(""), POLICY, |c| {
        c.credentials.signing.endpoints = vec![icegate::config::credentials::SigningEndpoint {
            url: "http://127.0.0.1:9000".into(),
            path_style: true,
        }];
    })
    .await;
    assert_eq!(sign(&g, &sign_body("GET", uri)).await.status, 200);
    assert_eq!(signs_received(&upstream), 1);
}

#[tokio::test]
async fn finding_get_config_never_carries_signer_addresses_or_identity_headers() {
    let upstream = FakeUpstream::start(|_: &Recorded| {
        Reply::json(
            200,
            json!({
                "defaults": {"s3.signer.uri": "http://catalog.internal/catalog", "s3.signer.endpoint": "v1/aws/s3/sign",
                             "header.X-Gravitino-Active-Roles": "admin", "header.authorization": "Basic cm9vdDp4",
                             "header.X-Custom": "kept", "warehouse": "w"},
                "overrides": {"signer.uri": "http://catalog.internal", "signer.endpoint": "v1/sign",
                              "header.X-Forwarded-User": "root", "prefix": "prod"},
            }),
        )
    })
    .await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    let a = send(g.addr, "GET", "/v1/config", &[("authorization", &basic("alice"))], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(
        a.json(),
        json!({"defaults": {"header.X-Custom": "kept", "warehouse": "w"}, "overrides": {"prefix": "prod"}})
    );
    assert_eq!(upstream.only().target, "/v1/config");
}

#[tokio::test]
async fn load_table_never_carries_the_upstreams_signer_address() {
    let config = json!({"s3.remote-signing-enabled": "true", "s3.signer": "S3V4RestSigner",
                        "s3.signer.uri": "http://catalog.internal:8181/catalog/", "s3.signer.endpoint": "v1/wh-1/v1/aws/s3/sign",
                        "signer.uri": "http://catalog.internal:8181/catalog/", "signer.endpoint": "v1/wh-1/v1/aws/s3/sign"});
    let upstream = table_route_catalog(config).await;
    for public in [None, Some("https://gate.example/lake")] {
        let g = gate(&upstream.url(""), POLICY, |c| c.credentials.public_url = public.map(str::to_owned)).await;
        let a = send(g.addr, "GET", TABLE, &[("authorization", &basic("alice"))], b"").await;
        assert_eq!(a.status, 200, "{}", a.text());
        assert!(!a.text().contains("catalog.internal"), "{}", a.text());
        let config = &a.json()["config"];
        let ours = "v1/prod/namespaces/sales/tables/orders/sign";
        assert_eq!((&config["s3.signer.endpoint"], &config["signer.endpoint"]), (&json!(ours), &json!(ours)));
        assert_eq!(config["s3.signer"], "S3V4RestSigner");
        let uri = public.map_or(Value::Null, |p| json!(p));
        assert_eq!((&config["s3.signer.uri"], &config["signer.uri"]), (&uri, &uri), "{config}");
    }
}

#[tokio::test]
async fn finding_a_tables_config_cannot_set_headers_icegate_reads() {
    // PyIceberg's signer sends a table's `header.*` config as headers of its sign requests, to
    // icegate: the upstream could choose the caller's identity or active roles there.
    let config = json!({"header.Authorization": "Basic cm9vdDp4", "header.x-gravitino-active-roles": "admin",
                        "HEADER.X-Forwarded-User": "root", "header.X-Custom": "kept", "s3.endpoint": "http://minio:9000"});
    let body = format!(
        r#"{{"metadata-location":"m","metadata":{{"location":"s3://lake/wh/sales/orders"}},"config":{config},"storage-credentials":[{{"prefix":"s3://lake/wh/sales/orders","config":{config}}}]}}"#
    );
    let upstream = FakeUpstream::start(move |_: &Recorded| Reply::raw(200, &body)).await;
    let g =
        gate(&upstream.url(""), POLICY, |c| c.credentials.mode = icegate::config::credentials::Mode::Passthrough).await;
    let a = send(g.addr, "GET", TABLE, &[("authorization", &basic("alice"))], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    let kept = json!({"header.X-Custom": "kept", "s3.endpoint": "http://minio:9000"});
    assert_eq!(a.json()["config"], kept);
    assert_eq!(a.json()["storage-credentials"][0]["config"], kept);
    assert_eq!(upstream.only().target, TABLE);
}

#[tokio::test]
async fn finding_null_storage_credentials_and_config_are_read_as_absent() {
    let metadata = r#"{"format-version":2,"table-uuid":"u","location":"s3://lake/wh/sales/orders","properties":null}"#;
    let table =
        format!(r#"{{"metadata-location":"m","metadata":{metadata},"config":null,"storage-credentials":null}}"#);
    let entry = format!(
        r#"{{"metadata-location":"m","metadata":{metadata},"storage-credentials":[{{"prefix":"s3://lake/wh/sales/orders","config":null}}]}}"#
    );
    for body in [table, entry] {
        let answer = body.clone();
        // no namespace is named like the table that is created (docs/design.md §4's collision check)
        let upstream = FakeUpstream::start(move |r: &Recorded| match r.method.as_str() {
            "HEAD" => Reply::raw(404, ""),
            _ => Reply::raw(200, &answer),
        })
        .await;
        let g = gate(&upstream.url(""), POLICY, |_| {}).await;
        let auth = basic("alice");
        let a = send(g.addr, "GET", TABLE, &[("authorization", &auth)], b"").await;
        assert_eq!(a.status, 200, "{body}: {}", a.text());
        assert_eq!(a.json()["metadata"]["location"], "s3://lake/wh/sales/orders");
        // a createTable the upstream has carried out is answered, not a 502
        let create = json!({"name": "orders", "schema": {"type": "struct", "fields": []}}).to_string();
        let a =
            send(g.addr, "POST", "/v1/prod/namespaces/sales/tables", &[("authorization", &auth)], create.as_bytes())
                .await;
        assert_eq!(a.status, 200, "{body}: {}", a.text());
        let creates = upstream.requests().iter().filter(|r| r.method == "POST").count();
        assert_eq!(creates, 1);
    }
}

#[tokio::test]
async fn finding_a_502_for_a_malformed_credential_response_quotes_nothing_of_it() {
    let metadata = r#"{"location":"s3://lake/wh/sales/orders"}"#;
    for body in [
        format!(r#"{{"metadata":{metadata},"config":"AKIA-SECRET-VALUE"}}"#),
        format!(
            r#"{{"metadata":{metadata},"storage-credentials":[{{"prefix":"s3://lake/wh/sales/orders","config":"AKIA-SECRET-VALUE"}}]}}"#
        ),
        format!(r#"{{"metadata":{metadata},"storage-credentials":"AKIA-SECRET-VALUE"}}"#),
        r#"{"metadata":{"location":["AKIA-SECRET-VALUE"]}}"#.to_owned(),
        format!(r#"{{"metadata":{metadata},"AKIA-SECRET-VALUE":1,"AKIA-SECRET-VALUE":2}}"#),
    ] {
        let answer = body.clone();
        let upstream = FakeUpstream::start(move |_: &Recorded| Reply::raw(200, &answer)).await;
        let g = gate(&upstream.url(""), POLICY, |_| {}).await;
        let a = send(g.addr, "GET", TABLE, &[("authorization", &basic("alice"))], b"").await;
        let message = a.assert_error(502, "BadGatewayException");
        assert!(!a.text().contains("AKIA-SECRET-VALUE"), "{body}: {message}");
        assert_eq!(upstream.only().target, TABLE);
    }
}

/// The differential check of the mapping: for every endpoint form, the URL botocore forms for a
/// bucket and key (tests/data/s3-urls.json; tests/e2e/s3_urls.py regenerates it and, in the
/// signing e2e, checks it against the pinned botocore) maps back to that bucket and key.
#[test]
fn every_url_botocore_forms_maps_back_to_its_bucket_and_key() {
    use icegate::core::credentials::s3url::{Endpoint, map};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/s3-urls.json");
    let entries: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(entries.len() > 2000, "{}", entries.len());
    for e in &entries {
        let (url, bucket, key) =
            (e["url"].as_str().unwrap(), e["bucket"].as_str().unwrap(), e["key"].as_str().unwrap());
        let endpoints: Vec<Endpoint> = e["endpoint"]
            .as_object()
            .map(|c| Endpoint::parse(c["url"].as_str().unwrap(), c["path_style"].as_bool().unwrap()).unwrap())
            .into_iter()
            .collect();
        let t = map(url, &endpoints).unwrap_or_else(|err| panic!("{e}: {err}"));
        assert_eq!(t.bucket, bucket, "{e}");
        match e["operation"].as_str().unwrap() {
            "ListObjectsV2" => assert_eq!((t.key.as_str(), t.get("prefix")), ("", Some(key)), "{e}"),
            "DeleteObjects" => assert!(t.key.is_empty() && t.has("delete"), "{e}"),
            _ => assert_eq!(t.key, key, "{e}"),
        }
        // A custom endpoint's URL is read only when the endpoint is known.
        if !endpoints.is_empty() {
            assert!(map(url, &[]).is_err(), "{e}");
        }
    }
}
