//! Lists, 403 or 404, getConfig and Idempotency-Key.

use super::*;

// ---- lists ----

#[tokio::test]
async fn list_tables_is_filtered_and_its_token_sealed() {
    let (up, g) = setup_with(
        |r| {
            if r.target.contains("pageToken=") {
                Reply::json(200, json!({"identifiers": idents(&["zeta"])}))
            } else {
                Reply::json(200, json!({"identifiers": idents(&["orders","salaries"]), "next-page-token": "salaries"}))
            }
        },
        |_| {},
    )
    .await;
    let a = get(&g, "dave", &format!("{LIST}?pageSize=2")).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let v = a.json();
    // refill: one entry was hidden, so icegate asks for one more and the page is full
    assert_eq!(names(&v), ["orders", "zeta"]);
    assert!(v.get("next-page-token").is_none() || v["next-page-token"].is_null(), "{v}");
    let targets: Vec<String> = up.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, [format!("{LIST}?pageSize=2"), format!("{LIST}?pageSize=1&pageToken=salaries")]);
    assert!(!a.text().contains("salaries"), "{}", a.text());
}

#[tokio::test]
async fn page_tokens_are_sealed_bound_to_the_user_and_unwrapped_on_return() {
    let (up, g) = setup_with(
        |r| {
            if r.target.contains("pageToken=") {
                Reply::json(200, json!({"identifiers": idents(&["zeta"])}))
            } else {
                Reply::json(200, json!({"identifiers": idents(&["orders","salaries"]), "next-page-token": "salaries"}))
            }
        },
        |c| c.lists.max_upstream_pages = 1,
    )
    .await;
    let a = get(&g, "dave", &format!("{LIST}?pageSize=2")).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let v = a.json();
    assert_eq!(names(&v), ["orders"]);
    let token = v["next-page-token"].as_str().unwrap().to_owned();
    assert!(!token.contains("salaries") && token != "salaries", "{token}");
    assert!(!a.text().contains("salaries"), "{}", a.text());
    // sent back: the upstream gets its own token
    let a = get(&g, "dave", &format!("{LIST}?pageSize=2&pageToken={token}")).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(names(&a.json()), ["zeta"]);
    assert_eq!(up.requests()[1].target, format!("{LIST}?pageSize=2&pageToken=salaries"));
    // another user, a tampered token, another list: 400, not forwarded
    let before = up.requests().len();
    let other = get(&g, "alice", &format!("{LIST}?pageToken={token}")).await;
    other.assert_error(400, "BadRequestException");
    let mut tampered = token.clone().into_bytes();
    let last = tampered.len() - 3;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    get(&g, "dave", &format!("{LIST}?pageToken={tampered}")).await.assert_error(400, "BadRequestException");
    get(&g, "dave", &format!("{LIST}?pageToken=salaries")).await.assert_error(400, "BadRequestException");
    get(&g, "dave", &format!("/v1/prod/namespaces/sales/views?pageToken={token}"))
        .await
        .assert_error(400, "BadRequestException");
    assert_eq!(up.requests().len(), before);
}

/// Regression (issue 47): a follow-up page's timeout was flattened into a message and
/// answered 502, where the same timeout on the first page answered 504.
#[tokio::test]
async fn an_upstream_timeout_is_504_on_any_page_of_a_list() {
    let slow = Duration::from_millis(1500);
    let (up, g) = setup_with(
        move |r| {
            if r.target.contains("pageToken=") || r.target.contains("pageSize=3") {
                Reply::json(200, json!({"identifiers": idents(&["zeta"])})).after(slow)
            } else {
                Reply::json(200, json!({"identifiers": idents(&["orders","salaries"]), "next-page-token": "salaries"}))
            }
        },
        |c| c.upstream.response_timeout_ms = 500,
    )
    .await;
    get(&g, "dave", &format!("{LIST}?pageSize=3")).await.assert_error(504, "GatewayTimeoutException");
    // the first page answers in time; the refill's page does not
    get(&g, "dave", &format!("{LIST}?pageSize=2")).await.assert_error(504, "GatewayTimeoutException");
    assert!(up.requests().iter().any(|r| r.target.contains("pageToken=salaries")));
}

#[tokio::test]
async fn a_page_of_only_hidden_entries_is_refilled_from_the_next_page() {
    let (up, g) = setup_with(
        |r| {
            if r.target.contains("pageToken=p2") {
                Reply::json(200, json!({"identifiers": idents(&["a","b"]), "next-page-token": "p3"}))
            } else {
                Reply::json(200, json!({"identifiers": idents(&["salaries"]), "next-page-token": "p2"}))
            }
        },
        |_| {},
    )
    .await;
    let a = get(&g, "dave", &format!("{LIST}?pageSize=2")).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let v = a.json();
    assert_eq!(names(&v), ["a", "b"]);
    let token = v["next-page-token"].as_str().unwrap().to_owned();
    let targets: Vec<String> = up.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, [format!("{LIST}?pageSize=2"), format!("{LIST}?pageSize=2&pageToken=p2")]);
    // the follow-up carries the caller's credential like the first request
    for r in up.requests() {
        assert_eq!(r.header("authorization"), Some(basic("dave").as_str()));
    }
    // The caller gets the upstream's last token sealed, which leads on from there. (A sealed
    // token is random text: checking that it does not contain `p3` failed one run in ~70.)
    assert_ne!(token, "p3");
    let next = get(&g, "dave", &format!("{LIST}?pageSize=2&pageToken={token}")).await;
    assert_eq!(next.status, 200, "{}", next.text());
    assert_eq!(up.requests().get(2).map(|r| r.target.clone()), Some(format!("{LIST}?pageSize=2&pageToken=p3")));
}

#[tokio::test]
async fn without_page_size_every_upstream_page_is_read() {
    let (up, g) = setup_with(
        |r| match r.target.split("pageToken=").nth(1) {
            None => Reply::json(200, json!({"identifiers": idents(&["a"]), "next-page-token": "2"})),
            Some("2") => Reply::json(200, json!({"identifiers": idents(&["salaries"]), "next-page-token": "3"})),
            Some(_) => Reply::json(200, json!({"identifiers": idents(&["c"]), "next-page-token": null})),
        },
        |_| {},
    )
    .await;
    let a = get(&g, "dave", LIST).await;
    assert_eq!(names(&a.json()), ["a", "c"]);
    assert_eq!(up.requests().len(), 3);
    assert_eq!(up.requests()[2].target, format!("{LIST}?pageToken=3"));
}

#[tokio::test]
async fn the_last_page_keeps_the_upstreams_null_token() {
    // The spec asks a server for `"next-page-token": null` in its last page; clients may look
    // for it. Where the upstream wrote none, none is written.
    let (_, g) = setup_with(
        |r| match r.target.split("pageToken=").nth(1) {
            None => Reply::json(200, json!({"identifiers": idents(&["a", "salaries"]), "next-page-token": "2"})),
            Some(_) => Reply::json(200, json!({"identifiers": idents(&["c"]), "next-page-token": null})),
        },
        |_| {},
    )
    .await;
    let a = get(&g, "dave", LIST).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json(), json!({"identifiers": idents(&["a", "c"]), "next-page-token": null}));
    let (_, g) = setup_with(|_| Reply::json(200, json!({"identifiers": idents(&["a", "salaries"])})), |_| {}).await;
    let a = get(&g, "dave", LIST).await;
    assert_eq!(a.json(), json!({"identifiers": idents(&["a"])}));
}

#[tokio::test]
async fn an_unparseable_list_response_is_502() {
    let (up, g) =
        setup_with(|_| Reply::raw(200, r#"{"identifiers": [{"namespace":["sales"],"name":"a"}"#), |_| {}).await;
    get(&g, "dave", LIST).await.assert_error(502, "BadGatewayException");
    let (_, g2) = setup_with(|_| Reply::json(200, json!({"tables": []})), |_| {}).await;
    get(&g2, "dave", LIST).await.assert_error(502, "BadGatewayException");
    up.only();
}

#[tokio::test]
async fn a_list_the_caller_may_not_gate_is_403_and_never_forwarded() {
    let (up, g) = setup().await;
    get(&g, "dave", "/v1/prod/namespaces/hr/tables").await.assert_error(403, "ForbiddenException");
    up.assert_untouched();
}

// ---- 403 or 404 ----

#[tokio::test]
async fn a_hidden_table_that_does_not_exist_upstream_is_404() {
    let (up, g) = setup_with(|_| Reply::raw(404, ""), |_| {}).await;
    let a = get(&g, "bob", "/v1/prod/namespaces/sales/tables/ghost").await;
    a.assert_error(404, "NoSuchTableException");
    let r = up.only();
    assert_eq!((r.method.as_str(), r.target.as_str()), ("HEAD", "/v1/prod/namespaces/sales/tables/ghost"));
}

#[tokio::test]
async fn a_hidden_table_that_exists_upstream_is_403() {
    let (up, g) = setup_with(|_| Reply::raw(204, ""), |_| {}).await;
    let a = get(&g, "bob", "/v1/prod/namespaces/sales/tables/orders").await;
    a.assert_error(403, "ForbiddenException");
    let r = up.only();
    assert_eq!(r.method, "HEAD");
    // without the existence check passing, no HEAD is sent at all
    let (up, g) = setup_with(|_| Reply::raw(404, ""), |_| {}).await;
    get(&g, "dave", "/v1/prod/namespaces/hr/tables/x").await.assert_error(403, "ForbiddenException");
    up.assert_untouched();
}

#[tokio::test]
async fn the_existence_head_uses_the_upstream_base_path_and_no_idempotency_key() {
    let upstream = FakeUpstream::start(|_| Reply::raw(404, "")).await;
    let g = gate(&upstream.url("/iceberg"), POLICY, |_| {}).await;
    let a = send(
        g.addr,
        "GET",
        "/v1/prod/namespaces/sales/tables/ghost",
        &[("authorization", &basic("bob")), ("idempotency-key", "k")],
        b"",
    )
    .await;
    a.assert_error(404, "NoSuchTableException");
    let r = upstream.only();
    assert_eq!(r.target, "/iceberg/v1/prod/namespaces/sales/tables/ghost");
    assert!(!r.headers.contains_key("idempotency-key"));
}

// ---- getConfig ----

#[tokio::test]
async fn get_config_loses_uri_token_and_credentials() {
    let (up, g) = setup_with(
        |_| {
            Reply::json(
                200,
                json!({
                    "defaults": {"uri": "http://catalog:8181", "warehouse": "w", "s3.secret-access-key": "S"},
                    "overrides": {"token": "T", "s3.access-key-id": "A", "prefix": "prod"}
                }),
            )
        },
        |_| {},
    )
    .await;
    let a = get(&g, "alice", "/v1/config?warehouse=prod").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json(), json!({"defaults": {"warehouse": "w"}, "overrides": {"prefix": "prod"}}));
    assert_eq!(a.headers.get("cache-control").unwrap(), "no-store");
    let r = up.only();
    assert_eq!(r.target, "/v1/config?warehouse=prod");
    assert_eq!(r.header("x-gravitino-active-roles"), None);
}

#[tokio::test]
async fn an_unparseable_config_response_is_502() {
    let (_up, g) = setup_with(|_| Reply::raw(200, "not json"), |_| {}).await;
    get(&g, "alice", "/v1/config").await.assert_error(502, "BadGatewayException");
}

// ---- Idempotency-Key ----

#[tokio::test]
async fn idempotency_keys_are_rebound_per_user() {
    let (up, g) = setup().await;
    for user in ["alice", "dave", "alice"] {
        let a =
            send(g.addr, "GET", LOAD_ORDERS, &[("authorization", &basic(user)), ("idempotency-key", "same-key")], b"")
                .await;
        assert_eq!(a.status, 200);
    }
    let keys: Vec<String> = up.requests().iter().map(|r| r.header("idempotency-key").unwrap().to_owned()).collect();
    assert_ne!(keys[0], "same-key");
    assert_ne!(keys[0], keys[1]);
    assert_eq!(keys[0], keys[2]);
    for k in &keys {
        assert_eq!(k.len(), 36, "{k}");
        assert_eq!(k.matches('-').count(), 4, "{k}");
    }
}
