//! Upstream responses (docs/design.md §4 "Lists", "403 or 404", §7, §8): what icegate passes back
//! must never name what the caller may not see, whatever shape the upstream answers in.
//!
//! Covered elsewhere: sealed page tokens, tampered, replayed by another user or against another
//! list (`serve::list_tables_is_filtered_and_its_token_sealed`,
//! `serve::page_tokens_are_sealed_bound_to_the_user_and_unwrapped_on_return`), unparseable lists
//! and configs (`serve::an_unparseable_list_response_is_502`, `serve::an_unparseable_config_response_is_502`),
//! credential decoys under other names and ambiguous credential responses
//! (`vending::a_reader_narrowed_from_a_writer_gets_no_credential_under_any_name`,
//! `vending::a_malformed_or_ambiguous_credential_response_is_502`), `stack` removal
//! (`serve::upstream_errors_keep_their_status_and_lose_their_stack`), responses cut off mid-body
//! (`serve::a_list_cut_off_mid_body_is_502_not_a_partial_list` and the two after it).

use super::{Lab, ORDERS};
use crate::fake_upstream::{Recorded, Reply};
use serde_json::json;

const LIST: &str = "/v1/prod/namespaces/sales/tables";

/// A lab whose upstream answers every request with `body` and `status`.
async fn answering(status: u16, body: &'static str) -> Lab {
    Lab::with(move |_: &Recorded| Reply::raw(status, body), |_| {}).await
}

#[tokio::test]
async fn ambiguous_list_responses_never_show_a_hidden_entry() {
    // Jackson (the client) keeps the last of duplicate keys; a filter that read the first would
    // pass the hidden one through. Each is filtered as the client reads it, or refused (502).
    for body in [
        r#"{"identifiers":[{"namespace":["sales"],"name":"orders"}],"identifiers":[{"namespace":["sales"],"name":"salaries"}]}"#,
        r#"{"identifiers":[{"namespace":["sales"],"name":"orders","name":"salaries"}]}"#,
        r#"{"identifiers":[{"namespace":["sales"],"name":"salaries","name":"orders"}]}"#,
        r#"{"identifiers":[{"namespace":["hr"],"namespace":["sales"],"name":"salaries"}]}"#,
        r#"{"identifiers":[{"namespace":["sales"],"name":"orders"}],"next-page-token":"orders","next-page-token":"salaries"}"#,
        r#"{"identifiers":[{"namespace":["sales"],"name":"salaries\u0000"}]}"#,
        r#"{"identifiers":[{"namespace":["sales"],"name":"sal\u0061ries"}]}"#,
        r#"{"identifiers":[{"namespace":["sales"],"name":"orders"}]} {"identifiers":[{"namespace":["sales"],"name":"salaries"}]}"#,
        r#"{"identifiers":[{"namespace":["sales"],"name":"\ud800salaries"}]}"#,
        // malformed entries are hidden (iceberg::list::entry), never shown
        r#"{"identifiers": [{"namespace":"sales","name":"salaries"}]}"#,
        r#"{"identifiers": [{"namespace":["sales"],"name":7},{"namespace":["sales"],"name":"salaries","x":1}]}"#,
        r#"{"identifiers": [null, {"namespace":["sales"],"name":["salaries"]}]}"#,
    ] {
        let lab = answering(200, body).await;
        let a = lab.get("dave", LIST).await;
        assert!(matches!(a.status, 200 | 502), "{body} -> {}", a.text());
        assert!(!a.text().contains("salaries"), "{body} -> {}", a.text());
        if a.status == 200 {
            let v = a.json();
            assert!(v.get("next-page-token").is_none_or(|t| t.is_null() || !t.as_str().unwrap().contains("sal")));
        } else {
            a.assert_error(502, "BadGatewayException");
        }
    }
}

#[tokio::test]
async fn entries_of_another_namespace_are_judged_by_their_own_name() {
    // an upstream (buggy or hostile) listing `sales` returns an `hr` table: dave may not see it
    let lab = answering(
        200,
        r#"{"identifiers":[{"namespace":["sales"],"name":"orders"},{"namespace":["hr"],"name":"payroll"},{"namespace":["sales","deep"],"name":"x"}]}"#,
    )
    .await;
    let a = lab.get("dave", LIST).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert!(!a.text().contains("payroll"), "{}", a.text());
    assert!(a.text().contains("orders"), "{}", a.text());
}

#[tokio::test]
async fn unparseable_responses_on_filtered_routes_are_502_never_passed_through() {
    for body in ["<html>500 Internal Server Error: salaries</html>", r#"{"identifiers": "salaries"}"#, ""] {
        let lab = answering(200, body).await;
        let a = lab.get("dave", LIST).await;
        assert_eq!(a.status, 502, "{body} -> {}", a.text());
        a.assert_error(502, "BadGatewayException");
        assert!(!a.text().contains("salaries"), "{body} -> {}", a.text());
    }
    // loadTable is read for credentials: a body that is not JSON at all is 502 there too
    let lab = answering(200, "<html>s3.secret-access-key=x</html>").await;
    let a = lab.get("dave", ORDERS).await;
    a.assert_error(502, "BadGatewayException");
    assert!(!a.text().contains("secret-access-key=x"), "{}", a.text());
}

#[tokio::test]
async fn the_403_404_oracle_gives_a_caller_without_privileges_one_answer() {
    let exists = Lab::with(|_| Reply::ok(), |_| {}).await;
    let missing =
        Lab::with(|r| if r.method == "HEAD" { Reply::raw(404, "") } else { Reply::raw(404, "{}") }, |_| {}).await;
    for (user, target) in [
        ("erin", ORDERS),
        ("erin", "/v1/prod/namespaces/sales/views/v"),
        ("dave", "/v1/prod/namespaces/hr/tables/payroll"),
        ("dave", "/v1/prod/namespaces/sales/tables/salaries"),
        ("nina", ORDERS),
    ] {
        let a = exists.get(user, target).await;
        let b = missing.get(user, target).await;
        a.assert_error(403, "ForbiddenException");
        assert_eq!((a.status, a.text()), (b.status, b.text()), "{user} {target}");
        // the HEAD form (tableExists) too
        let a = exists.call(user, "HEAD", target, &[], b"").await;
        let b = missing.call(user, "HEAD", target, &[], b"").await;
        assert_eq!(a.status, 403, "{user} HEAD {target}");
        assert_eq!((a.status, a.body.len()), (b.status, b.body.len()));
    }
    // no existence probe is made for a caller without the existence privileges
    exists.up.assert_untouched();
    missing.up.assert_untouched();
}

#[tokio::test]
async fn credential_decoys_outside_the_tables_locations_are_removed() {
    let body = json!({
        "metadata-location": "s3://lake/sales/orders/metadata/1.json",
        "metadata": {"format-version": 2, "table-uuid": "u", "location": "s3://lake/sales/orders", "schemas": []},
        "config": {"s3.access-key-id": "A", "token": "upstream-token", "client.region": "eu"},
        "storage-credentials": [
            {"prefix": "s3://lake/sales/orders-evil", "config": {"s3.access-key-id": "SIBLING"}},
            {"prefix": "s3://lake/sales/orders/../../", "config": {"s3.access-key-id": "DOTDOT"}},
            {"prefix": "s3://lake/sales", "config": {"s3.access-key-id": "PARENT"}},
            {"prefix": "s3://LAKE/sales/orders", "config": {"s3.access-key-id": "CASE"}},
            {"prefix": "s3a://lake/sales/orders", "config": {"s3.access-key-id": "SCHEME"}},
            {"prefix": "s3://lake/sales/orders/", "config": {"s3.access-key-id": "GOOD"}},
        ]
    });
    let text = body.to_string();
    let lab = Lab::with(
        move |_| Reply::raw(200, &text),
        |c| c.credentials.mode = icegate::config::credentials::Mode::Passthrough,
    )
    .await;
    let a = lab.call("alice", "GET", ORDERS, &[("x-iceberg-access-delegation", "vended-credentials")], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    let v = a.json();
    let kept: Vec<&str> = v["storage-credentials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["config"]["s3.access-key-id"].as_str().unwrap())
        .collect();
    // S3 keys are flat (`..` is no traversal) and `s3a` is the same store: those stay, being
    // under the table; a sibling, a parent and another bucket do not
    assert_eq!(kept, ["DOTDOT", "SCHEME", "GOOD"], "{v}");
    assert!(v["config"].get("token").is_none(), "{v}");
}

#[tokio::test]
async fn upstream_stack_traces_are_removed_in_every_place_and_shape() {
    for (status, body) in [
        (500, r#"{"error":{"message":"m","type":"RuntimeException","code":500,"stack":["at secret.Internal"]}}"#),
        (
            500,
            r#"{"error":{"message":"m","type":"T","code":500,"stack":"at secret.Internal","stack":["at secret.Internal"]}}"#,
        ),
        (404, r#"{"error":{"message":"m","type":"NoSuchTableException","code":404},"stack":["at secret.Internal"]}"#),
        (400, r#"{"error":{"message":"m","type":"T","code":400,"stack":["at secret.Internal"]}}"#),
    ] {
        let lab = answering(status, body).await;
        let a = lab.get("dave", ORDERS).await;
        assert_eq!(a.status, status, "{}", a.text());
        assert!(!a.text().contains("secret.Internal"), "{body} -> {}", a.text());
    }
}

#[tokio::test]
async fn finding_an_unparseable_error_body_with_a_stack_is_not_passed_through() {
    // serde_json refuses a lone surrogate that Jackson writes happily; the body then slipped
    // through `stack` removal as it was
    for body in [
        r#"{"error":{"message":"bad name \ud800","type":"T","code":500,"stack":["at secret.Internal"]}}"#,
        r#"{"error":{"message":"m","type":"T","code":500,"stack":["at secret.Internal"]}}garbage"#,
        "java.lang.RuntimeException: boom\n\tat secret.Internal.run(Internal.java:1)",
    ] {
        let lab = answering(500, body).await;
        let a = lab.get("dave", ORDERS).await;
        assert_eq!(a.status, 500, "{}", a.text());
        assert!(!a.text().contains("secret.Internal"), "{body} -> {}", a.text());
        assert_eq!(a.json()["error"]["code"], 500, "{}", a.text());
    }
}

/// An upstream whose first answer on each connection carries a second, unasked-for response
/// after its body; later requests on the connection get `{"later":true}`.
async fn desync_upstream() -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let mut first = true;
                loop {
                    let mut seen = Vec::new();
                    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                        match s.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => seen.extend_from_slice(&buf[..n]),
                        }
                    }
                    let answer: &[u8] = if first {
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 17\r\n\r\n{\"smuggled\":true}"
                    } else {
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 14\r\n\r\n{\"later\":true}"
                    };
                    first = false;
                    if s.write_all(answer).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_response_smuggled_by_the_upstream_never_reaches_the_next_caller() {
    // A pooled upstream connection with bytes left over after a response must not hand them to
    // the next request, which may be another user's.
    let url = desync_upstream().await;
    let g = crate::fake_upstream::gate(&url, super::POLICY, |_| {}).await;
    for (i, user) in ["alice", "dave", "alice", "dave"].into_iter().enumerate() {
        // Kept: the attack is bytes that reach the pooled connection while it is idle, between
        // two callers' requests; nothing icegate exposes says they have arrived, so the test
        // gives them time to (without it, the next request could win the race and the test
        // would check less, never fail more).
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let a = crate::fake_upstream::send(
            g.addr,
            "GET",
            ORDERS,
            &[("authorization", &crate::fake_upstream::basic(user))],
            b"",
        )
        .await;
        assert!(!a.text().contains("smuggled"), "request {i} ({user}) got the smuggled response: {}", a.text());
        assert!(matches!(a.status, 200 | 502), "{}", a.text());
    }
}

#[tokio::test]
async fn finding_a_502_for_an_unreadable_list_does_not_quote_the_upstream() {
    // serde's message quoted the upstream's values, here the name of a hidden table
    for body in [
        r#"{"identifiers": "salaries"}"#,
        r#"{"identifiers": [], "next-page-token": ["salaries"]}"#,
        r#"{"namespaces": [["salaries"]]}"#,
    ] {
        let lab = answering(200, body).await;
        let a = lab.get("dave", LIST).await;
        let m = a.assert_error(502, "BadGatewayException");
        assert!(!a.text().contains("salaries"), "{body} -> {m}");
    }
}
