//! Remote signing (DESIGN.md §8). The input builds a sign request: an endpoint form (AWS
//! virtual-hosted and path-style hosts, a trailing dot, the China partition, the table's custom
//! endpoint in both styles, a configured IP endpoint, an access point, an unknown host), a
//! bucket, a method, and fuzzed path, query and body. Property: a signature is only ever
//! allowed when what the generator put into the request lies under the table's location
//! `s3://lake/wh/t`: the bucket it named is `lake`, and the key (the percent-decoded path up to
//! the first `?`), or the listing `prefix`, or every `Key` element anywhere in a batch-delete
//! body lies inside `wh/t`. Raw `uri`s are fed too, to find panics.
#![no_main]

use icegate::core::credentials::s3url::Endpoint;
use icegate::core::credentials::sign::check;
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
    let mut parts = text.splitn(3, '\u{1}');
    let (tail, query, body) = (parts.next().unwrap_or(""), parts.next(), parts.next());
    let method = METHODS[usize::from(choice) % METHODS.len()];
    if selector == 255 {
        // a raw `uri`: only that nothing panics
        let sign = request(method, tail, body);
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
    let sign = request(method, &uri, body);
    if check(&sign, &table, &configured).is_err() {
        return;
    }
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
        for key in keys {
            assert!(key == "wh/t" || inside(&key), "a delete outside the table was signed: `{key}` in {xml}");
        }
    } else {
        assert_eq!(method, "GET", "a bucket request other than a listing was signed: {uri}");
        let prefix = params.iter().find(|(n, _)| n == "prefix").map(|(_, v)| v.as_str()).unwrap_or_default();
        assert!(inside(prefix), "a listing outside the table was signed: {uri}");
    }
});

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
