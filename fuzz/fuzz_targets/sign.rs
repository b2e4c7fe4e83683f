//! Remote signing (docs/design.md §8). The input builds a sign request: an endpoint form (AWS
//! virtual-hosted and path-style hosts, a trailing dot, the China partition, the table's custom
//! endpoint in both styles, a configured IP endpoint, an access point, an unknown host), a
//! bucket, a method, and fuzzed path, query and body. Property: a signature is only ever
//! allowed when what the generator put into the request lies under the table's location
//! `s3://lake/wh/t`: the bucket it named is `lake`, and the key (the percent-decoded path up to
//! the first `?`), or the listing `prefix`, or every `Key` element anywhere in a batch-delete
//! body lies inside `wh/t`. Raw `uri`s are fed too, to find panics.
//!
//! A fourth part gives the request's headers (`name:value` lines). Property (DESIGN.md §8, issue
//! 28): a signature is only ever relayed when every `x-amz-*` header it would sign is on the
//! allow-list (written out here again, not taken from icegate) and, for a batch delete, when it
//! binds the checked body: the check asks for that body's SHA-256, the sign request forwarded
//! carries it as its only `x-amz-content-sha256`, and only an answer that signed that header with
//! that value is accepted.
#![no_main]

use icegate::core::credentials::s3url::Endpoint;
use icegate::core::credentials::sign::{bind, check, headers};
use icegate::core::credentials::storage::TableStorage;
use icegate::core::iceberg::body::SignRequest;
use libfuzzer_sys::fuzz_target;

/// What comes before the fuzzed path: scheme, host and, path-style, the bucket's segment (`{b}`
/// is the bucket). Whether a form may be signed at all is part of the property.
const FORMS: [&str; 10] = [
    "https://{b}.s3.amazonaws.com/",
    "https://{b}.s3.eu-west-1.amazonaws.com/",
    "https://s3.eu-west-1.amazonaws.com/{b}/",
    "https://{b}.s3.cn-north-1.amazonaws.com.cn/",
    "https://{b}.s3.amazonaws.com./",
    "http://{b}.minio.local:9000/",
    "http://minio.local:9000/{b}/",
    "http://127.0.0.1:9000/{b}/",
    "https://{b}-123.s3-accesspoint.us-east-1.amazonaws.com/",
    "http://unknown.local/{b}/",
];
const BUCKETS: [&str; 4] = ["lake", "other", "lake.x", "x.lake"];
const METHODS: [&str; 7] = ["GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "get"];

fn decode(text: &str) -> Option<String> {
    percent_encoding::percent_decode_str(text).decode_utf8().ok().map(|s| s.into_owned())
}

fn inside(path: &str) -> bool {
    path.starts_with("wh/t/") && !path.split('/').any(|s| s == "." || s == "..")
}

fuzz_target!(|data: &[u8]| {
    let table = TableStorage {
        locations: vec!["s3://lake/wh/t".to_owned()],
        endpoint: Endpoint::parse("http://minio.local:9000", false),
        signer: None,
    };
    let configured = [Endpoint::parse("http://127.0.0.1:9000", true).expect("an endpoint")];
    let Some((&selector, rest)) = data.split_first() else { return };
    let Some((&choice, rest)) = rest.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let mut parts = text.splitn(4, '\u{1}');
    let (tail, query, body, header_lines) = (parts.next().unwrap_or(""), parts.next(), parts.next(), parts.next());
    let header_list: Vec<(String, Vec<String>)> = header_lines
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.to_owned(), vec![v.to_owned()]))
        .collect();
    let method = METHODS[usize::from(choice) % METHODS.len()];
    if selector == 255 {
        // a raw `uri`: only that nothing panics
        let sign = SignRequest { headers: header_list, ..request(method, tail, body) };
        let _ = headers::check(&sign.headers, &headers::HeaderRules::default());
        let _ = check(&sign, &table, &configured);
        return;
    }
    let form = FORMS[usize::from(selector) % FORMS.len()];
    let bucket = BUCKETS[usize::from(selector / 16) % BUCKETS.len()];
    let after = match query {
        Some(query) => format!("{tail}?{query}"),
        None => tail.to_owned(),
    };
    let uri = format!("{}{after}", form.replace("{b}", bucket));
    let sign = SignRequest { headers: header_list, ..request(method, &uri, body) };
    if headers::check(&sign.headers, &headers::HeaderRules::default()).is_err() {
        return;
    }
    for (name, values) in &sign.headers {
        assert!(header_allowed(name, values), "a header off the allow-list was signed: {name}: {values:?}");
    }
    let Ok(checked) = check(&sign, &table, &configured) else { return };
    // Allowed: check it against what was generated, not against icegate's own reading.
    assert_eq!(bucket, "lake", "another bucket was signed: {uri}");
    assert!(!form.contains("accesspoint") && !form.contains("unknown"), "an unmappable host was signed: {uri}");
    let (path, query) = after.split_once('?').unwrap_or((&after, ""));
    let key = decode(path).unwrap_or_else(|| panic!("an undecodable key was signed: {uri}"));
    if !key.is_empty() {
        assert!(key == "wh/t" || inside(&key), "a key outside the table was signed: {uri}");
        return;
    }
    let params: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .map(|(n, v)| (decode(n).unwrap_or_default(), decode(v).unwrap_or_default()))
        .collect();
    if method == "POST" {
        assert!(params.iter().any(|(n, _)| n == "delete"), "a bucket POST other than a batch delete: {uri}");
        let xml = body.unwrap_or_default();
        let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("an unreadable delete was signed ({e})"));
        let keys: Vec<String> = doc
            .descendants()
            .filter(|n| n.is_element() && n.tag_name().name() == "Key")
            .map(|k| k.descendants().filter(|n| n.is_text()).filter_map(|n| n.text()).collect())
            .collect();
        assert!(!keys.is_empty(), "a delete of nothing was signed: {xml}");
        assert_bound(xml, checked.body_sha256.as_deref());
        for key in keys {
            assert!(key == "wh/t" || inside(&key), "a delete outside the table was signed: `{key}` in {xml}");
        }
    } else {
        assert_eq!(method, "GET", "a bucket request other than a listing was signed: {uri}");
        let prefix = params.iter().find(|(n, _)| n == "prefix").map(|(_, v)| v.as_str()).unwrap_or_default();
        assert!(inside(prefix), "a listing outside the table was signed: {uri}");
    }
});

/// The allow-list of DESIGN.md §8 with the default configuration, written out again.
fn header_allowed(name: &str, values: &[String]) -> bool {
    let n = name.to_ascii_lowercase();
    if n == "authorization" || n == "x-amz-security-token" {
        return false;
    }
    if !n.starts_with("x-amz-") {
        return true;
    }
    let exact = [
        "x-amz-content-sha256",
        "x-amz-date",
        "x-amz-sdk-checksum-algorithm",
        "x-amz-trailer",
        "x-amz-decoded-content-length",
        "x-amz-copy-source",
        "x-amz-copy-source-range",
        "x-amz-server-side-encryption",
        "x-amz-server-side-encryption-aws-kms-key-id",
        "x-amz-server-side-encryption-context",
        "x-amz-server-side-encryption-bucket-key-enabled",
        "x-amz-expected-bucket-owner",
        "x-amz-request-payer",
        "x-amz-storage-class",
        "x-amz-tagging",
    ];
    let prefixes = ["x-amz-checksum-", "x-amz-meta-", "x-amz-copy-source-if-"];
    (n == "x-amz-acl" && values.iter().all(|v| v.trim() == "bucket-owner-full-control"))
        || exact.contains(&n.as_str())
        || prefixes.iter().any(|p| n.starts_with(p))
}

/// A batch delete's signature binds its body: the hash asked for is the body's, the forwarded
/// request carries exactly it, and an answer is accepted only when it signed it.
fn assert_bound(xml: &str, hash: Option<&str>) {
    use sha2::Digest;
    let expected: String = sha2::Sha256::digest(xml.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hash, Some(expected.as_str()), "a batch delete was not bound to its body");
    let request = serde_json::json!({"region": "r", "method": "POST", "uri": "u", "body": xml,
        "headers": {"X-Amz-Content-Sha256": ["UNSIGNED-PAYLOAD"]}});
    let bound: serde_json::Value = serde_json::from_slice(
        &bind::forwarded_request(request.to_string().as_bytes(), &[], Some(&expected)).expect("bound"),
    )
    .expect("json");
    assert_eq!(bound["headers"], serde_json::json!({"x-amz-content-sha256": [expected]}));
    let answer = |signed: &str, value: &str| {
        serde_json::json!({"uri": "u", "headers": {"Authorization": [format!("AWS4-HMAC-SHA256 Credential=a, SignedHeaders={signed}, Signature=s")], "x-amz-content-sha256": [value]}}).to_string()
    };
    assert!(bind::check_answer(answer("host;x-amz-content-sha256", &expected).as_bytes(), &expected).is_ok());
    assert!(bind::check_answer(answer("host", &expected).as_bytes(), &expected).is_err());
    assert!(bind::check_answer(answer("host;x-amz-content-sha256", "UNSIGNED-PAYLOAD").as_bytes(), &expected).is_err());
}

fn request(method: &str, uri: &str, body: Option<&str>) -> SignRequest {
    SignRequest {
        region: "us-east-1".to_owned(),
        method: method.to_owned(),
        uri: uri.to_owned(),
        provider: None,
        body: body.map(str::to_owned),
        ..SignRequest::default()
    }
}
