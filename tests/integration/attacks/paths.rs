//! Request targets (docs/design.md §7 "Paths are canonicalized once"): everything the upstream's Java
//! stack could read differently from icegate is 400 and never forwarded; what is accepted is
//! forwarded as its canonical re-encoding, and authorized as exactly that.
//!
//! Covered elsewhere: absolute-form targets (`serve::an_absolute_form_target_is_400_and_never_forwarded`),
//! `+` and `%63at` re-encoded (`serve::the_forwarded_path_is_the_canonical_re_encoding`), and
//! the decoder's unit table (`iceberg::path::tests::attack_inputs_are_refused`).

use super::{Lab, ORDERS, raw_request, status_of};
use crate::fake_upstream::raw;
use std::time::Duration;

/// Sends `target` raw (bytes as given, so the client library cannot clean it up) as alice.
async fn probe(lab: &Lab, target: &str) -> String {
    let request = raw_request(&format!("GET {target} HTTP/1.1"), "", "");
    raw(lab.addr(), request.as_bytes(), Duration::from_secs(2)).await
}

/// Every target is refused with `status` and the Iceberg error `kind`; nothing is forwarded.
async fn assert_refused(lab: &Lab, status: u16, kind: &str, targets: &[&str]) {
    for target in targets {
        let out = probe(lab, target).await;
        assert_eq!(status_of(&out), status, "{target:?} -> {out}");
        if !out.is_empty() && status != 400 || out.contains("application/json") {
            assert!(out.contains(&format!("\"type\":\"{kind}\"")), "{target:?} -> {out}");
        }
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn dot_segments_in_every_encoding_are_400() {
    let lab = Lab::new().await;
    let mut targets = Vec::new();
    for dot in [".", "..", "%2e", "%2E", "%2e%2e", "%2E%2E", ".%2e", "%2e.", "%2E."] {
        targets.push(format!("/v1/prod/namespaces/sales/tables/{dot}"));
        targets.push(format!("/v1/prod/namespaces/{dot}/tables/orders"));
        targets.push(format!("/v1/prod/namespaces/sales%1F{dot}/tables/orders"));
        targets.push(format!("/v1/{dot}/namespaces/sales/tables/orders"));
    }
    targets.push("/v1/prod/namespaces/hr/../sales/tables/orders".into());
    targets.push("/v1/prod/namespaces/sales/tables/salaries/../orders".into());
    targets.push("/v1/prod/./namespaces/sales/tables/orders".into());
    targets.push("/v1/prod/namespaces/sales/tables/%C0%AE%C0%AE".into());
    let refs: Vec<&str> = targets.iter().map(String::as_str).collect();
    assert_refused(&lab, 400, "BadRequestException", &refs).await;
}

#[tokio::test]
async fn encoded_separators_matrix_parameters_and_double_encoding_are_400() {
    let lab = Lab::new().await;
    assert_refused(
        &lab,
        400,
        "BadRequestException",
        &[
            "/v1/prod/namespaces/sales/tables/salaries%2F..%2Forders",
            "/v1/prod/namespaces/sales%2Fhr/tables/orders",
            "/v1/prod/namespaces/sales/tables/a%2fb",
            "/v1/prod/namespaces/sales/tables/a%5Cb",
            "/v1/prod/namespaces/sales/tables/a%5cb",
            "/v1/prod/namespaces/sales/tables/a\\b",
            "/v1/prod/namespaces/sales/tables/orders;jsessionid=1",
            "/v1/prod/namespaces/sales;x=1/tables/orders",
            "/v1/prod;v=1/namespaces/sales/tables/orders",
            "/v1/prod/namespaces/sales/tables/orders%3B",
            "/v1/prod/namespaces/sales/tables/orders%252F",
            "/v1/prod/namespaces/sales/tables/%252e%252e",
            "/v1/prod/namespaces/sales%25/tables/orders",
            "/v1/prod/namespaces/sales/tables/or%",
            "/v1/prod/namespaces/sales/tables/or%zzders",
        ],
    )
    .await;
}

#[tokio::test]
async fn empty_segments_and_trailing_slashes_are_400() {
    let lab = Lab::new().await;
    assert_refused(
        &lab,
        400,
        "BadRequestException",
        &[
            "/v1/prod/namespaces//tables/orders",
            "/v1/prod//namespaces/sales/tables/orders",
            "/v1//namespaces/sales/tables/orders",
            "/v1/prod/namespaces/sales/tables/orders/",
            "/v1/prod/namespaces/sales/tables/orders//",
            "/v1/prod/namespaces/sales%1F/tables/orders",
            "/v1/prod/namespaces/%1Fsales/tables/orders",
        ],
    )
    .await;
    // a leading `//` is not an authority: still a malformed path, never another host
    let out = probe(&lab, "//evil.example/v1/prod/namespaces/sales/tables/orders").await;
    assert!(matches!(status_of(&out), 400 | 403), "{out}");
    lab.up.assert_untouched();
}

#[tokio::test]
async fn control_characters_hash_and_lower_case_separators_are_400() {
    let lab = Lab::new().await;
    assert_refused(
        &lab,
        400,
        "BadRequestException",
        &[
            "/v1/prod/namespaces/sales%1fhr/tables/orders",
            "/v1/prod/namespaces/sales/tables/orders%00",
            "/v1/prod/namespaces/sales/tables/orders%0D%0Ax-forwarded-user:%20root",
            "/v1/prod/namespaces/sales/tables/orders%0A",
            "/v1/prod/namespaces/sales/tables/orders%09",
            "/v1/prod/namespaces/sales/tables/orders%7F",
            "/v1/prod/namespaces/sales/tables/orders%C2%85",
            "/v1/prod/namespaces/sales/tables/orders%01",
            "/v1/prod/namespaces/sales/tables/orders%1F",
            "/v1/prod/namespaces/sales/tables/orders%23x",
            "/v1/prod/namespaces/sales/tables/orders%FF",
            "/v1/prod/namespaces/sales/tables/orders%C3",
            "/v1/prod/namespaces/sales/tables/orders%EF%BF%BD%ED%A0%80",
            "/v1/prod/namespaces/sales/tables/caf\u{e9}",
            "/v1/prod/namespaces/sales/tables/a|b",
            "/v1/prod/namespaces/sa:les/tables/orders",
            "/v1/prod/namespaces/sa%3Ales/tables/orders",
            "/v1/prod/namespaces/sa.les/tables/orders",
            "/v1/prod/namespaces/sa%2Eles/tables/orders",
        ],
    )
    .await;
    lab.up.assert_untouched();
}

#[tokio::test]
async fn a_raw_fragment_is_dropped_before_icegate_and_never_forwarded() {
    // The HTTP parser (the `http` crate's URI) drops a raw `#` and all after it before icegate
    // sees the target, so §7's 400 for `#` cannot be given; what is authorized is still exactly
    // what is forwarded: the part before `#`, never the part after it.
    let lab = Lab::new().await;
    let out = probe(&lab, "/v1/prod/namespaces/sales/tables/orders#/../salaries").await;
    assert!(matches!(status_of(&out), 200 | 400), "{out}");
    let out = raw(
        lab.addr(),
        format!(
            "GET /v1/prod/namespaces/sales/tables/salaries#/../orders HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\nconnection: close\r\n\r\n",
            crate::fake_upstream::basic("dave")
        )
        .as_bytes(),
        Duration::from_secs(2),
    )
    .await;
    assert!(matches!(status_of(&out), 403 | 400), "dave may not read salaries however it is spelled: {out}");
    for target in lab.targets() {
        assert_eq!(target, ORDERS);
    }
}

#[tokio::test]
async fn route_literals_are_case_sensitive_and_never_encoded() {
    let lab = Lab::new().await;
    assert_refused(
        &lab,
        403,
        "ForbiddenException",
        &[
            "/V1/prod/namespaces/sales/tables/orders",
            "/v1/prod/Namespaces/sales/tables/orders",
            "/v1/prod/namespaces/sales/TABLES/orders",
            "/v1/prod/namespaces/sales/Tables/orders",
            "/v1/PROD/NAMESPACES/SALES/TABLES/ORDERS",
        ],
    )
    .await;
    assert_refused(
        &lab,
        400,
        "BadRequestException",
        &[
            "/v1/prod/n%61mespaces/sales/tables/orders",
            "/v1/prod/namespaces/sales/t%61bles/orders",
            "/%761/prod/namespaces/sales/tables/orders",
        ],
    )
    .await;
}

#[tokio::test]
async fn other_request_target_forms_are_refused() {
    let lab = Lab::new().await;
    for line in [
        "OPTIONS * HTTP/1.1".to_owned(),
        "CONNECT evil.example:443 HTTP/1.1".to_owned(),
        format!("GET https://evil.example{ORDERS} HTTP/1.1"),
        format!("GET http://x{ORDERS} HTTP/1.1"),
        format!("GET {ORDERS}?pageToken=a&pageToken=b HTTP/1.1"),
        format!("get {ORDERS} HTTP/1.1"),
        format!("DELETE\t{ORDERS} HTTP/1.1"),
        format!("GET {ORDERS} HTTP/1.1 x"),
        format!("GET {ORDERS} HTTP/2.0"),
        format!("GET  {ORDERS} HTTP/1.1"),
    ] {
        let out = raw(lab.addr(), raw_request(&line, "", "").as_bytes(), Duration::from_secs(2)).await;
        assert!(matches!(status_of(&out), 400 | 403 | 405), "{line:?} -> {out}");
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn encoded_unreserved_and_plus_are_authorized_as_what_they_decode_to() {
    let lab = Lab::new().await;
    // `sale%73` is `sales`: allowed, and forwarded as the canonical spelling
    assert_eq!(lab.get("dave", "/v1/prod/namespaces/sale%73/tables/%6Frders").await.status, 200);
    // `salari%65s` is the denied `salaries`, whatever its spelling
    for target in [
        "/v1/prod/namespaces/sales/tables/salari%65s",
        "/v1/prod/namespaces/sales/tables/%73%61%6C%61%72%69%65%73",
        "/v1/pro%64/namespaces/sales/tables/salaries",
    ] {
        lab.get("dave", target).await.assert_error(403, "ForbiddenException");
    }
    // `+` is a space (form decoding, as RESTUtil does): `sa+les` is not `sales`
    lab.get("dave", "/v1/prod/namespaces/sa+les/tables/orders").await.assert_error(403, "ForbiddenException");
    // `%2B` is a literal `+`, forwarded encoded so the upstream cannot read a space
    assert_eq!(lab.get("dave", "/v1/prod/namespaces/sales/tables/a%2Bb").await.status, 200);
    assert_eq!(lab.targets(), [ORDERS, "/v1/prod/namespaces/sales/tables/a%2Bb"]);
}

#[tokio::test]
async fn a_catalog_named_namespaces_or_tables_reads_the_form_without_a_prefix() {
    let lab = Lab::new().await;
    // `/v1/namespaces/namespaces/tables` fits both listTables of `prod.namespaces` and
    // loadNamespaceMetadata of catalog `namespaces`, schema `tables`: the form without a prefix is
    // read (§7), which nina may not list, so nothing reaches the upstream.
    lab.get("nina", "/v1/namespaces/namespaces/tables").await.assert_error(403, "ForbiddenException");
    lab.get("nina", "/v1/namespaces/tables").await.assert_error(403, "ForbiddenException");
    lab.up.assert_untouched();
    // with the prefix spelled out in full it is her catalog
    assert_eq!(lab.get("nina", "/v1/namespaces/namespaces/tables/tables/t").await.status, 200);
    // and a user of `prod` reading `prod.namespaces` is still bound by `prod`'s grants
    lab.get("dave", "/v1/namespaces/namespaces/tables").await.assert_error(403, "ForbiddenException");
    assert_eq!(lab.targets(), ["/v1/namespaces/namespaces/tables/tables/t"]);
}

#[tokio::test]
async fn very_long_and_very_deep_names_are_bounded() {
    let lab = Lab::new().await;
    // long but within the header cap: authorized and forwarded as it is
    let long = "x".repeat(8_000);
    assert_eq!(lab.get("dave", &format!("/v1/prod/namespaces/sales/tables/{long}")).await.status, 200);
    // deep: 2,000 levels under `sales` inherit its grants, levels elsewhere get none
    let deep = vec!["l"; 2_000].join("%1F");
    let started = std::time::Instant::now();
    assert_eq!(lab.get("dave", &format!("/v1/prod/namespaces/sales%1F{deep}/tables/t")).await.status, 200);
    lab.get("dave", &format!("/v1/prod/namespaces/hr%1F{deep}/tables/t")).await.assert_error(403, "ForbiddenException");
    assert!(started.elapsed() < Duration::from_secs(5), "deep names are slow: {:?}", started.elapsed());
    assert_eq!(
        lab.targets(),
        [format!("/v1/prod/namespaces/sales/tables/{long}"), format!("/v1/prod/namespaces/sales%1F{deep}/tables/t")]
    );
    // over the header cap: refused by the listener, never forwarded
    let huge = "x".repeat(100_000);
    let out = probe(&lab, &format!("/v1/prod/namespaces/sales/tables/{huge}")).await;
    assert!(matches!(status_of(&out), 414 | 431 | 400) || out.is_empty(), "{}", &out[..out.len().min(200)]);
    assert_eq!(lab.up.requests().len(), 2);
}

#[tokio::test]
async fn the_parent_parameter_is_read_like_a_namespace_in_the_path() {
    let lab = Lab::new().await;
    for query in [
        "parent=sa.les",
        "parent=..",
        "parent=%2E%2E",
        "parent=sales%1fx",
        "parent=sales%00",
        "parent=sales&parent=hr",
        "parent=&parent=",
        "pageSize=1&pageSize=2",
        "pageSize=-1",
        "pageSize=99999999999",
        "pageToken=garbage",
        "page%54oken=x&pageToken=y",
        "p%61rent=sales&parent=hr",
    ] {
        let a = lab.get("dave", &format!("/v1/prod/namespaces?{query}")).await;
        a.assert_error(400, "BadRequestException");
    }
    // a parent dave may not see is refused before anything is listed (no probing by `parent`)
    lab.get("dave", "/v1/prod/namespaces?parent=hr").await.assert_error(403, "ForbiddenException");
    // however its key is spelled: keys are decoded before they are recognized
    lab.get("dave", "/v1/prod/namespaces?p%61rent=hr").await.assert_error(403, "ForbiddenException");
    lab.up.assert_untouched();
}

#[tokio::test]
async fn finding_a_raw_slash_in_parent_is_400_like_its_encoding() {
    // `parent=a/b` was accepted while its canonical re-encoding `parent=a%2Fb` was refused: the
    // query's `parent` now holds to the path's raw-segment rules. Found by the `path` fuzz target.
    let lab = Lab::new().await;
    for query in ["parent=sales/x", "parent=sales%2Fx", "parent=sales\\x", "parent=sales;x", "parent=sa%1Fles/x"] {
        let a = lab.get("dave", &format!("/v1/prod/namespaces?{}", query.replace('\\', "%5C"))).await;
        a.assert_error(400, "BadRequestException");
    }
    lab.up.assert_untouched();
}
