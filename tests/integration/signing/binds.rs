//! What a signature binds (docs/design.md §8, issue 28): which headers a sign request may have
//! signed, a batch delete's body bound by its hash, and sign answers never cached. Each test
//! asserts the answer and what reached the catalog.

use super::*;

fn with_headers(method: &str, headers: Value) -> Value {
    json!({"region": "us-east-1", "method": method, "uri": OBJECT, "headers": headers})
}

#[tokio::test]
async fn finding_headers_that_widen_access_or_outlive_the_policy_are_never_signed() {
    let upstream = table_route_catalog(json!({})).await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    for (name, value) in [
        ("x-amz-acl", "public-read"),
        ("X-Amz-Acl", "authenticated-read"),
        ("x-amz-grant-read", "uri=\"http://acs.amazonaws.com/groups/global/AllUsers\""),
        ("x-amz-grant-full-control", "id=123"),
        ("x-amz-object-lock-mode", "COMPLIANCE"),
        ("x-amz-object-lock-retain-until-date", "2099-01-01T00:00:00Z"),
        ("x-amz-object-lock-legal-hold", "ON"),
        ("x-amz-bypass-governance-retention", "true"),
        ("x-amz-mfa", "serial 123456"),
        ("x-amz-website-redirect-location", "https://elsewhere.example/"),
        ("x-amz-server-side-encryption-customer-algorithm", "AES256"),
        ("x-amz-server-side-encryption-customer-key", "a2V5LW9ubHktdGhlLXdyaXRlci1rbm93cw=="),
        ("Authorization", "AWS4-HMAC-SHA256 Credential=AKIA/x, SignedHeaders=host, Signature=0"),
        ("X-Amz-Security-Token", "the-callers-own-session"),
        ("x-amz-some-future-header", "1"),
    ] {
        let a = sign(&g, &with_headers("PUT", json!({name: [value], "User-Agent": ["test"]}))).await;
        let message = a.assert_error(403, "ForbiddenException");
        assert!(message.contains(&format!("`{}`", name.to_ascii_lowercase())), "{name}: {message}");
        assert!(!message.contains(value), "the value is not quoted: {message}");
    }
    // refused before the table is even loaded: nothing reached the catalog
    upstream.assert_untouched();

    // what the SDKs send is signed, and reaches the catalog's signer as it came
    let allowed = with_headers(
        "PUT",
        json!({"X-Amz-Acl": ["bucket-owner-full-control"], "x-amz-content-sha256": ["UNSIGNED-PAYLOAD"],
               "x-amz-date": ["20261204T000000Z"], "x-amz-checksum-crc32": ["AAAAAA=="], "x-amz-meta-a": ["b"],
               "x-amz-server-side-encryption": ["aws:kms"], "x-amz-storage-class": ["STANDARD_IA"],
               "x-amz-tagging": ["a=b"], "Content-MD5": ["x"], "amz-sdk-invocation-id": ["u"]}),
    );
    let a = sign(&g, &allowed).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let forwarded = upstream.requests().into_iter().find(|r| r.method == "POST").unwrap();
    assert_eq!(forwarded.target, SIGN);
    assert_eq!(serde_json::from_slice::<Value>(&forwarded.body).unwrap(), allowed);
}

#[tokio::test]
async fn storage_classes_tags_sse_c_and_kms_keys_follow_the_configuration() {
    let upstream = table_route_catalog(json!({})).await;
    let g = gate(&upstream.url(""), POLICY, |c| {
        let signing = &mut c.credentials.signing;
        signing.allow_storage_class = false;
        signing.allow_tagging = false;
        signing.allow_sse_c = true;
        signing.kms_key_id = Some("arn:aws:kms:us-east-1:1:key/ours".into());
    })
    .await;
    for (name, value) in [
        ("x-amz-storage-class", "GLACIER"),
        ("X-Amz-Tagging", "expire=now"),
        ("x-amz-server-side-encryption-aws-kms-key-id", "arn:aws:kms:us-east-1:2:key/theirs"),
    ] {
        let message =
            sign(&g, &with_headers("PUT", json!({name: [value]}))).await.assert_error(403, "ForbiddenException");
        assert!(message.contains(&format!("`{}`", name.to_ascii_lowercase())), "{message}");
    }
    upstream.assert_untouched();
    for (name, value) in [
        ("x-amz-server-side-encryption-customer-key", "a2V5"),
        ("x-amz-server-side-encryption-aws-kms-key-id", "arn:aws:kms:us-east-1:1:key/ours"),
    ] {
        let a = sign(&g, &with_headers("PUT", json!({name: [value]}))).await;
        assert_eq!(a.status, 200, "{name}: {}", a.text());
    }
    assert_eq!(signs_received(&upstream), 2);
}

/// A signature that signs the payload hash, as a signer that binds bodies answers.
const SIGNED_WITH_HASH: &str = "AWS4-HMAC-SHA256 Credential=AKIA/20261204/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=good";

/// A catalog whose table-scoped signer answers with `authorization` and, echoing the request,
/// the `x-amz-content-sha256` it was sent (or `echo` instead, when given).
async fn signing_catalog(authorization: &'static str, echo: Option<&'static str>) -> FakeUpstream {
    FakeUpstream::start(move |r: &Recorded| match (r.method.as_str(), r.target.as_str()) {
        ("GET", TABLE) => Reply::raw(200, &load_table(&json!({}))),
        ("POST", SIGN) => {
            let request: Value = serde_json::from_slice(&r.body).unwrap();
            let sent = request["headers"]["x-amz-content-sha256"].clone();
            let hash = echo.map_or(sent, |e| json!([e]));
            Reply::json(200, json!({"uri": request["uri"], "headers": {"Authorization": [authorization], "x-amz-content-sha256": hash}}))
        }
        _ => Reply::json(404, json!({"error": {"message": "no route", "type": "NotFoundException", "code": 404}})),
    })
    .await
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// A batch delete of a key inside the table, sent as Iceberg's S3FileIO does
/// (`UNSIGNED-PAYLOAD`).
fn unsigned_delete() -> (Value, String) {
    let mut body = delete_body("<Object><Key>wh/sales/orders/data/a</Key></Object>");
    body["headers"] = json!({"X-Amz-Content-SHA256": ["UNSIGNED-PAYLOAD"], "Content-MD5": ["bQ=="]});
    let xml = body["body"].as_str().unwrap().to_owned();
    (body, xml)
}

#[tokio::test]
async fn finding_a_batch_delete_is_forwarded_with_its_bodys_hash() {
    let upstream = signing_catalog(SIGNED_WITH_HASH, None).await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    let (body, xml) = unsigned_delete();
    let a = sign(&g, &body).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["headers"]["Authorization"][0], SIGNED_WITH_HASH);
    assert_eq!(a.headers.get("cache-control").map(|v| v.to_str().unwrap()), Some("no-store"));
    // the catalog's signer was asked to sign the hash of the body icegate checked, in one spelling
    let forwarded = upstream.requests().into_iter().find(|r| r.method == "POST").unwrap();
    let forwarded: Value = serde_json::from_slice(&forwarded.body).unwrap();
    assert_eq!(forwarded["headers"], json!({"Content-MD5": ["bQ=="], "x-amz-content-sha256": [sha256_hex(&xml)]}));
    assert_eq!((&forwarded["body"], &forwarded["uri"]), (&body["body"], &body["uri"]));
}

#[tokio::test]
async fn finding_a_signer_that_does_not_bind_a_batch_delete_is_502_and_its_signature_never_relayed() {
    let unbound = "AWS4-HMAC-SHA256 Credential=AKIA/x, SignedHeaders=host;x-amz-date, Signature=unbound";
    for (authorization, echo) in [(unbound, None), (SIGNED_WITH_HASH, Some("UNSIGNED-PAYLOAD"))] {
        let upstream = signing_catalog(authorization, echo).await;
        let g = gate(&upstream.url(""), POLICY, |_| {}).await;
        let a = sign(&g, &unsigned_delete().0).await;
        let message = a.assert_error(502, "BadGatewayException");
        assert!(message.contains("does not bind batch deletes"), "{message}");
        assert!(!a.text().contains("Signature="), "the signature is not relayed: {}", a.text());
        assert_eq!(signs_received(&upstream), 1, "the signer was asked once");
    }
}

#[tokio::test]
async fn finding_sign_answers_for_anything_but_reads_are_never_cached() {
    let upstream = table_route_catalog(json!({})).await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    for (method, query, cached) in
        [("PUT", "", false), ("DELETE", "", false), ("POST", "?uploads", false), ("GET", "", true), ("HEAD", "", true)]
    {
        let a = sign(&g, &sign_body(method, &format!("{OBJECT}{query}"))).await;
        assert_eq!(a.status, 200, "{method}: {}", a.text());
        let control = a.headers.get("cache-control").map(|v| v.to_str().unwrap());
        assert_eq!(control == Some("no-store"), !cached, "{method}: {control:?}");
    }
    assert_eq!(signs_received(&upstream), 5);
}

#[tokio::test]
async fn finding_remote_signing_config_headers_cannot_set_headers_icegate_reads() {
    // Iceberg 1.11+ clients send `remote-signing-config.headers` with every request to the
    // signer, which is icegate: the upstream could choose the caller's identity or roles there.
    let body = r#"{"metadata-location":"m","metadata":{"location":"s3://lake/wh/sales/orders"},"config":{"s3.remote-signing-enabled":"true","s3.signer.uri":"http://catalog.internal/","s3.signer.endpoint":"v1/wh/sign"},"remote-signing-config":{"headers":{"Authorization":["Basic cm9vdDp4"],"X-Gravitino-Active-Roles":["admin"],"x_gravitino_active_roles":["admin"],"X-Custom":["kept"]},"properties":{"warehouse":"w","signer.uri":"http://catalog.internal/","token":"t"}}}"#.to_owned();
    let upstream = FakeUpstream::start(move |_: &Recorded| Reply::raw(200, &body)).await;
    let g = gate(&upstream.url(""), POLICY, |c| c.credentials.public_url = Some("https://gate.example".into())).await;
    let a = send(g.addr, "GET", TABLE, &[("authorization", &basic("alice"))], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert!(!a.text().contains("catalog.internal"), "{}", a.text());
    let ours = "v1/prod/namespaces/sales/tables/orders/sign";
    let signing = &a.json()["remote-signing-config"];
    assert_eq!(signing["headers"], json!({"X-Custom": ["kept"]}));
    assert_eq!(
        signing["properties"],
        json!({"warehouse": "w", "signer.uri": "https://gate.example", "signer.endpoint": ours,
               "s3.signer.uri": "https://gate.example", "s3.signer.endpoint": ours})
    );
    // Iceberg 1.12 reads only `signer.*`: written beside the `s3.signer.*` the upstream used
    let config = &a.json()["config"];
    assert_eq!((&config["signer.endpoint"], &config["signer.uri"]), (&json!(ours), &json!("https://gate.example")));
    assert_eq!(upstream.only().target, TABLE);
}
