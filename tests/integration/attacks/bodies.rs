//! Inspected request bodies (docs/design.md §7 "parsed strictly"): a body that icegate and the
//! upstream's Jackson could read differently is refused before anything is forwarded, and an
//! allowed body is forwarded as the bytes that were authorized.
//!
//! Covered elsewhere: the unit tables of `iceberg::body::tests` (`duplicate_keys_in_renames_and_transactions`,
//! `strict_json_errors_are_400`, `content_headers_must_say_plain_json`, ...), a chunked body over
//! the cap (`serve::a_chunked_body_over_the_limit_is_413_and_never_forwarded`), and
//! `serve::bad_create_table_bodies_are_refused_and_never_forwarded`.

use super::{Lab, status_of};
use crate::fake_upstream::raw;
use std::time::{Duration, Instant};

const CREATE: &str = "/v1/prod/namespaces/sales/tables";
const RENAME: &str = "/v1/prod/tables/rename";
const COMMIT: &str = "/v1/prod/transactions/commit";
const UPDATE: &str = "/v1/prod/namespaces/sales/tables/orders";
const JSON: (&str, &str) = ("content-type", "application/json");

/// `bodies` sent as `user` to `method target`, each answered `status` with nothing forwarded.
async fn assert_all_refused(lab: &Lab, user: &str, target: &str, status: u16, bodies: &[&str]) {
    for body in bodies {
        let a = lab.call(user, "POST", target, &[JSON], body.as_bytes()).await;
        assert_eq!(a.status, status, "{body} -> {}", a.text());
        assert_eq!(a.json()["error"]["code"], status, "{body}");
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn duplicate_keys_at_any_depth_are_400() {
    let lab = Lab::new().await;
    let ok_source = r#"{"namespace":["sales"],"name":"orders"}"#;
    let hr = r#"{"namespace":["hr"],"name":"payroll"}"#;
    let dest = r#"{"namespace":["sales"],"name":"o2"}"#;
    let renames = [
        format!(r#"{{"source":{ok_source},"source":{hr},"destination":{dest}}}"#),
        format!(r#"{{"source":{hr},"source":{ok_source},"destination":{dest}}}"#),
        format!(r#"{{"source":{{"namespace":["sales"],"name":"orders","name":"x"}},"destination":{dest}}}"#),
        format!(r#"{{"source":{{"namespace":["sales"],"namespace":["hr"],"name":"payroll"}},"destination":{dest}}}"#),
        format!(r#"{{"source":{ok_source},"destination":{dest},"destination":{hr}}}"#),
        format!(
            r#"{{"source":{ok_source},"destination":{{"namespace":["sales"],"name":"a","extra":{{"k":1,"k":2}}}}}}"#
        ),
    ];
    let change = |ident: &str| format!(r#"{{"identifier":{ident},"requirements":[],"updates":[]}}"#);
    let transactions = [
        format!(r#"{{"table-changes":[{{"identifier":{ok_source},"identifier":{hr},"requirements":[],"updates":[]}}]}}"#),
        format!(r#"{{"table-changes":[{}],"table-changes":[{}]}}"#, change(ok_source), change(hr)),
        r#"{"table-changes":[{"identifier":{"namespace":["sales"],"name":"orders","name":"salaries"},"requirements":[],"updates":[]}]}"#.to_owned(),
        format!(
            r#"{{"table-changes":[{{"identifier":{ok_source},"requirements":[],"updates":[{{"action":"set-properties","updates":{{"a":"1","a":"2"}}}}]}}]}}"#
        ),
    ];
    let updates = [
        format!(
            r#"{{"identifier":{ok_source},"requirements":[],"updates":[{{"action":"set-location","action":"set-properties","location":"s3://x","updates":{{}}}}]}}"#
        ),
        format!(
            r#"{{"identifier":{ok_source},"requirements":[],"requirements":[{{"type":"assert-create"}}],"updates":[]}}"#
        ),
        format!(
            r#"{{"identifier":{ok_source},"requirements":[],"updates":[{{"action":"set-properties","updates":{{"write.data.path":"s3://a","write.data.path":"s3://b"}}}}]}}"#
        ),
    ];
    let creates = [
        r#"{"name":"t","name":"u","schema":{"type":"struct","fields":[]}}"#.to_owned(),
        r#"{"name":"t","schema":{"type":"struct","fields":[{"id":1,"name":"a","name":"b","required":false,"type":"int"}]}}"#.to_owned(),
        r#"{"name":"t","schema":{"type":"struct","fields":[]},"properties":{"location":"s3://x","location":"s3://y"}}"#.to_owned(),
        r#"{"name":"t","schema":{"type":"struct","fields":[]},"location":null,"location":"s3://elsewhere"}"#.to_owned(),
    ];
    for (user, target, bodies) in [
        ("alice", RENAME, &renames[..]),
        ("alice", COMMIT, &transactions[..]),
        ("alice", UPDATE, &updates[..]),
        ("bob", CREATE, &creates[..]),
    ] {
        for body in bodies {
            let a = lab.call(user, "POST", target, &[JSON], body.as_bytes()).await;
            let m = a.assert_error(400, "BadRequestException");
            assert!(m.contains("duplicate"), "{body}: {m}");
        }
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn trailing_data_nesting_surrogates_and_non_json_numbers_are_400() {
    let lab = Lab::new().await;
    let ok = r#"{"name":"t","schema":{"type":"struct","fields":[]}}"#;
    let deep = format!(
        r#"{{"name":"t","schema":{{"type":"struct","fields":[]}},"properties":{{"x":{}1{}}}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    let bodies = [
        format!("{ok}{ok}"),
        format!("{ok} x"),
        format!("{ok},"),
        format!("{ok}\u{0}"),
        format!("{ok}]"),
        deep,
        r#"{"name":"\ud800","schema":{"type":"struct","fields":[]}}"#.to_owned(),
        r#"{"name":"t\udfff","schema":{"type":"struct","fields":[]}}"#.to_owned(),
        r#"{"name":"t","schema":{"type":"struct","fields":[]},"properties":{"a":"\ud800\ud800"}}"#.to_owned(),
        r#"{"name":"t","schema":{"type":"struct","schema-id":NaN,"fields":[]}}"#.to_owned(),
        r#"{"name":"t","schema":{"type":"struct","schema-id":Infinity,"fields":[]}}"#.to_owned(),
        r#"{"name":"t","schema":{"type":"struct","schema-id":01,"fields":[]}}"#.to_owned(),
        r#"{"name":"t","schema":{"type":"struct","fields":[],}}"#.to_owned(),
        r#"{'name':'t'}"#.to_owned(),
        r#"{"name":"t" /* c */,"schema":{"type":"struct","fields":[]}}"#.to_owned(),
        r#"{"name":"t\u0000","schema":{"type":"struct","fields":[]}}"#.to_owned(),
    ];
    let refs: Vec<&str> = bodies.iter().map(String::as_str).collect();
    assert_all_refused(&lab, "bob", CREATE, 400, &refs).await;
}

#[tokio::test]
async fn a_legitimately_deep_iceberg_schema_is_forwarded_byte_for_byte() {
    let lab = Lab::new().await;
    // 60 nested structs: 3 JSON levels each (type object, fields array, field object) = 180+
    let mut ty =
        r#"{"type":"struct","fields":[{"id":1000,"name":"leaf","required":false,"type":"string"}]}"#.to_owned();
    for i in 0..60 {
        ty = format!(r#"{{"type":"struct","fields":[{{"id":{i},"name":"f{i}","required":false,"type":{ty}}}]}}"#);
    }
    let body = format!(r#"{{"name":"deep","schema":{ty},"properties":{{"comment":"\ud83d\ude00 ok"}}}}"#);
    let a = lab.call("bob", "POST", CREATE, &[JSON], body.as_bytes()).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(lab.up.only_forwarded().body, body.as_bytes());
}

#[tokio::test]
async fn wrong_content_types_and_encodings_are_refused() {
    let lab = Lab::new().await;
    let ok = br#"{"name":"t","schema":{"type":"struct","fields":[]}}"#;
    for (headers, status) in [
        (vec![("content-type", "text/plain")], 415),
        (vec![("content-type", "application/x-www-form-urlencoded")], 415),
        (vec![("content-type", "application/json; charset=utf-16")], 415),
        (vec![("content-type", "application/json; charset=iso-8859-1")], 415),
        (vec![("content-type", "application/jsonx")], 415),
        (vec![("content-type", "multipart/form-data; boundary=x")], 415),
        (vec![JSON, ("content-encoding", "gzip")], 415),
        (vec![JSON, ("content-encoding", "identity")], 415),
    ] {
        let a = lab.call("bob", "POST", CREATE, &headers, ok).await;
        assert_eq!(a.status, status, "{headers:?} -> {}", a.text());
        a.assert_error(status, "UnsupportedMediaTypeException");
    }
    // bodies that are not UTF-8 JSON: UTF-16, a BOM, Latin-1
    let utf16: Vec<u8> = String::from_utf8_lossy(ok).encode_utf16().flat_map(u16::to_le_bytes).collect();
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend_from_slice(ok);
    for body in [utf16, bom, br#"{"name":"caf\xe9","schema":{"type":"struct","fields":[]}}"#.to_vec()] {
        let a = lab.call("bob", "POST", CREATE, &[JSON], &body).await;
        a.assert_error(400, "BadRequestException");
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn an_oversized_body_is_413_before_it_is_sent() {
    let lab = Lab::with(|_| crate::fake_upstream::Reply::ok(), |c| c.limits.max_body_bytes = 1024).await;
    // only the headers are sent: the answer must come without waiting for 100 MB
    let request = format!(
        "POST {CREATE} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\ncontent-type: application/json\r\ncontent-length: 104857600\r\n\r\n{{",
        crate::fake_upstream::basic("bob")
    );
    let started = Instant::now();
    let out = raw(lab.addr(), request.as_bytes(), Duration::from_secs(3)).await;
    assert_eq!(status_of(&out), 413, "{out}");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert!(out.contains("RequestEntityTooLargeException") || out.contains("\"code\":413"), "{out}");
    // one byte over with a correct length
    let body = format!(
        r#"{{"name":"t","schema":{{"type":"struct","fields":[]}},"properties":{{"p":"{}"}}}}"#,
        "x".repeat(1024)
    );
    let a = lab.call("bob", "POST", CREATE, &[JSON], body.as_bytes()).await;
    assert_eq!(a.status, 413, "{}", a.text());
    lab.up.assert_untouched();
}

#[tokio::test]
async fn a_commit_whose_identifier_differs_from_the_path_is_400() {
    let lab = Lab::new().await;
    for ident in [
        r#"{"namespace":["hr"],"name":"orders"}"#,
        r#"{"namespace":["sales"],"name":"salaries"}"#,
        r#"{"namespace":["sales"],"name":"Orders"}"#,
        r#"{"namespace":["sales","x"],"name":"orders"}"#,
        r#"{"namespace":["sales"],"name":"orders "}"#,
    ] {
        let body = format!(r#"{{"identifier":{ident},"requirements":[],"updates":[]}}"#);
        let a = lab.call("alice", "POST", UPDATE, &[JSON], body.as_bytes()).await;
        let m = a.assert_error(400, "BadRequestException");
        assert!(m.contains("differs from the path"), "{ident}: {m}");
    }
    lab.up.assert_untouched();
    // the same identifier is forwarded as sent
    let body = r#"{"identifier":{"namespace":["sales"],"name":"orders"},"requirements":[],"updates":[]}"#;
    assert_eq!(lab.call("alice", "POST", UPDATE, &[JSON], body.as_bytes()).await.status, 200);
    assert_eq!(lab.up.only().body, body.as_bytes());
}

#[tokio::test]
async fn a_transaction_naming_the_same_table_twice_or_none_is_400() {
    let lab = Lab::new().await;
    let change = |ns: &str, name: &str| {
        format!(r#"{{"identifier":{{"namespace":[{ns}],"name":"{name}"}},"requirements":[],"updates":[]}}"#)
    };
    let bodies = [
        format!(r#"{{"table-changes":[{},{}]}}"#, change(r#""sales""#, "orders"), change(r#""sales""#, "orders")),
        format!(
            r#"{{"table-changes":[{},{},{}]}}"#,
            change(r#""sales""#, "orders"),
            change(r#""sales""#, "o2"),
            change(r#""sales""#, "orders")
        ),
        r#"{"table-changes":[{"requirements":[],"updates":[]}]}"#.to_owned(),
        r#"{"table-changes":[{"identifier":null,"requirements":[],"updates":[]}]}"#.to_owned(),
        format!(r#"{{"table-changes":[{},{}]}}"#, change(r#""sales""#, "orders"), change(r#""hr""#, "payroll")),
    ];
    for (i, body) in bodies.iter().enumerate() {
        let a = lab.call("alice", "POST", COMMIT, &[JSON], body.as_bytes()).await;
        // the last one is well-formed but names a table alice may not modify: one failure
        // rejects the whole transaction
        if i == bodies.len() - 1 {
            a.assert_error(403, "ForbiddenException");
        } else {
            a.assert_error(400, "BadRequestException");
        }
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn finding_a_json_array_body_is_not_read_as_an_object() {
    // serde reads a struct from a JSON array (`[[]]` was an empty transaction, `[src, dst]` a
    // rename); Jackson does not, so icegate authorized what the upstream would read otherwise.
    // Found by the `body` fuzz target.
    let lab = Lab::new().await;
    for (target, body) in [
        (COMMIT, "[[]]"),
        (COMMIT, " \n[[]]"),
        (RENAME, r#"[{"namespace":["sales"],"name":"orders"},{"namespace":["sales"],"name":"o2"}]"#),
        (CREATE, r#"["t",{"type":"struct","fields":[]}]"#),
    ] {
        let user = if target == CREATE { "bob" } else { "alice" };
        let m = lab.call(user, "POST", target, &[JSON], body.as_bytes()).await.assert_error(400, "BadRequestException");
        assert!(m.contains("JSON object"), "{body}: {m}");
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn finding_two_content_types_are_refused() {
    // icegate checked the first Content-Type; an upstream may take the last (415 now)
    let lab = Lab::new().await;
    let ok = br#"{"name":"t","schema":{"type":"struct","fields":[]}}"#;
    for second in ["text/plain", "application/json"] {
        let a = lab.call("bob", "POST", CREATE, &[JSON, ("content-type", second)], ok).await;
        let m = a.assert_error(415, "UnsupportedMediaTypeException");
        assert!(m.contains("application/json, "), "{m}");
    }
    lab.up.assert_untouched();
}
