//! What a signature binds (DESIGN.md §8, issue 28): which headers a sign request may have
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
