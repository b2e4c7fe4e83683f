//! The serving path end to end: icegate in-process in front of a fake catalog that records what
//! it receives. Every test checks both what the client got and what reached the upstream.

use crate::fake_upstream::{Answer, FakeUpstream, Reply, basic, gate, raw, send};
use crate::support::SALES_POLICY as POLICY;
use serde_json::json;
use std::time::Duration;

const LOAD_ORDERS: &str = "/v1/prod/namespaces/sales/tables/orders";

/// A fake catalog answering `{}` 200 to everything, and icegate in front of it.
async fn setup() -> (FakeUpstream, crate::fake_upstream::Gate) {
    setup_with(Reply::empty_catalog, |_| {}).await
}

async fn setup_with(
    script: impl Fn(&crate::fake_upstream::Recorded) -> Reply + Send + Sync + 'static,
    tweak: impl FnOnce(&mut icegate::config::Config),
) -> (FakeUpstream, crate::fake_upstream::Gate) {
    let upstream = FakeUpstream::start(script).await;
    let gate = gate(&upstream.url(""), POLICY, tweak).await;
    (upstream, gate)
}

async fn get(g: &crate::fake_upstream::Gate, user: &str, target: &str) -> Answer {
    send(g.addr, "GET", target, &[("authorization", &basic(user))], b"").await
}

// ---- refusals never reach the upstream ----

#[tokio::test]
async fn a_denied_request_is_403_and_never_forwarded() {
    let (up, g) = setup().await;
    let a = get(&g, "dave", "/v1/prod/namespaces/sales/tables/salaries").await;
    let message = a.assert_error(403, "ForbiddenException");
    assert!(message.contains("loadTable"), "{message}");
    assert_eq!(a.json().as_object().unwrap().len(), 1, "only `error`: {}", a.text());
    up.assert_untouched();
}

#[tokio::test]
async fn an_unknown_route_is_403_and_never_forwarded() {
    let (up, g) = setup().await;
    let a = get(&g, "alice", "/v1/prod/magic").await;
    let message = a.assert_error(403, "ForbiddenException");
    assert!(message.contains("not recognized"), "{message}");
    let a = get(&g, "alice", "/admin").await;
    a.assert_error(403, "ForbiddenException");
    up.assert_untouched();
}

#[tokio::test]
async fn malformed_paths_are_400_and_never_forwarded() {
    let (up, g) = setup().await;
    for target in [
        "/v1/prod/namespaces/sales/tables/..",
        "/v1/prod/namespaces/../tables/orders",
        "/v1/prod/namespaces/sales/tables/a%2Fb",
        "/v1/prod/namespaces/sales/tables/a%252Fb",
        "/v1/prod/namespaces/sales%1fx/tables/orders",
        "/v1/prod/namespaces/sales/tables/orders/",
    ] {
        let a = get(&g, "alice", target).await;
        a.assert_error(400, "BadRequestException");
    }
    up.assert_untouched();
}

#[tokio::test]
async fn an_absolute_form_target_is_400_and_never_forwarded() {
    let (up, g) = setup().await;
    let request = format!(
        "GET http://evil.example{LOAD_ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\nconnection: close\r\n\r\n",
        basic("alice")
    );
    let out = raw(g.addr, request.as_bytes(), Duration::from_secs(2)).await;
    assert!(out.starts_with("HTTP/1.1 400"), "{out}");
    up.assert_untouched();
}

// ---- the forwarded path is the canonical one ----

#[tokio::test]
async fn the_forwarded_path_is_the_canonical_re_encoding() {
    let (up, g) = setup().await;
    assert_eq!(get(&g, "alice", "/v1/prod/namespaces/sales/tables/a+b").await.status, 200);
    assert_eq!(get(&g, "alice", "/v1/prod/namespaces/sales/tables/%63at").await.status, 200);
    let targets: Vec<String> = up.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, ["/v1/prod/namespaces/sales/tables/a%20b", "/v1/prod/namespaces/sales/tables/cat"]);
}

#[tokio::test]
async fn the_upstream_base_path_is_prefixed() {
    let upstream = FakeUpstream::start(|_| Reply::ok()).await;
    let g = gate(&upstream.url("/iceberg"), POLICY, |_| {}).await;
    assert_eq!(get(&g, "alice", LOAD_ORDERS).await.status, 200);
    assert_eq!(upstream.only().target, format!("/iceberg{LOAD_ORDERS}"));
}

#[tokio::test]
async fn the_listener_base_path_is_not_sent_upstream() {
    let upstream = FakeUpstream::start(|_| Reply::ok()).await;
    let g = gate(&upstream.url("/catalog"), POLICY, |c| c.base_path = "/gw".into()).await;
    assert_eq!(get(&g, "alice", &format!("/gw{LOAD_ORDERS}")).await.status, 200);
    assert_eq!(upstream.only().target, format!("/catalog{LOAD_ORDERS}"));
}

// ---- hop-by-hop ----

#[tokio::test]
async fn connection_named_headers_are_removed_but_never_the_role_header() {
    let (up, g) = setup().await;
    let auth = basic("alice");
    let headers = [
        ("authorization", auth.as_str()),
        ("connection", "x-custom, X-Gravitino-Active-Roles"),
        ("x-custom", "1"),
        ("x-kept", "2"),
        ("x-gravitino-active-roles", "analyst"),
        ("keep-alive", "timeout=5"),
        ("te", "trailers"),
        ("upgrade", "websocket"),
        ("proxy-authorization", "Basic eA=="),
        ("proxy-foo", "y"),
    ];
    // analyst cannot modify: the role header was read, so the request is narrowed and denied
    let a = send(g.addr, "DELETE", LOAD_ORDERS, &headers, b"").await;
    a.assert_error(403, "ForbiddenException");
    up.assert_untouched();
    let a = send(g.addr, "GET", LOAD_ORDERS, &headers, b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    let r = up.only();
    assert_eq!(r.header("x-gravitino-active-roles"), Some("analyst"));
    assert_eq!(r.header("x-kept"), Some("2"));
    for gone in ["x-custom", "keep-alive", "te", "upgrade", "proxy-authorization", "proxy-foo"] {
        assert!(!r.headers.contains_key(gone), "{gone} was forwarded: {:?}", r.headers);
    }
}

// ---- duplicate and malformed headers ----

#[tokio::test]
async fn duplicate_role_or_authorization_headers_are_400_and_never_forwarded() {
    let (up, g) = setup().await;
    let auth = basic("alice");
    let a = send(
        g.addr,
        "GET",
        LOAD_ORDERS,
        &[("authorization", &auth), ("x-gravitino-active-roles", "analyst"), ("x-gravitino-active-roles", "editor")],
        b"",
    )
    .await;
    let m = a.assert_error(400, "BadRequestException");
    assert!(m.contains("X-Gravitino-Active-Roles"), "{m}");
    let a = send(g.addr, "GET", LOAD_ORDERS, &[("authorization", &auth), ("authorization", &basic("bob"))], b"").await;
    let m = a.assert_error(400, "BadRequestException");
    assert!(m.contains("Authorization"), "{m}");
    up.assert_untouched();
}

#[tokio::test]
async fn a_malformed_role_header_is_400_and_an_unheld_role_403() {
    let (up, g) = setup().await;
    let auth = basic("dave");
    for bad in ["analyst,", "ALL,analyst", ","] {
        let a =
            send(g.addr, "GET", LOAD_ORDERS, &[("authorization", &auth), ("x-gravitino-active-roles", bad)], b"").await;
        let m = a.assert_error(400, "BadRequestException");
        assert!(m.contains("X-Gravitino-Active-Roles"), "{bad}: {m}");
    }
    let a = send(
        g.addr,
        "GET",
        LOAD_ORDERS,
        &[("authorization", &auth), ("x-gravitino-active-roles", "editor, analyst, ghost")],
        b"",
    )
    .await;
    let m = a.assert_error(403, "ForbiddenException");
    assert!(m.starts_with("user 'dave' cannot assume active role(s) that are not held: editor, ghost"), "{m}");
    up.assert_untouched();
}

#[tokio::test]
async fn the_forwarded_role_header_is_canonical_and_absent_when_none_was_sent() {
    let (up, g) = setup().await;
    let auth = basic("alice");
    let a = send(
        g.addr,
        "GET",
        LOAD_ORDERS,
        &[("authorization", &auth), ("x-gravitino-active-roles", " analyst , analyst ")],
        b"",
    )
    .await;
    assert_eq!(a.status, 200);
    let a = send(g.addr, "GET", LOAD_ORDERS, &[("authorization", &auth)], b"").await;
    assert_eq!(a.status, 200);
    let a =
        send(g.addr, "GET", LOAD_ORDERS, &[("authorization", &auth), ("x-gravitino-active-roles", "ALL")], b"").await;
    assert_eq!(a.status, 200);
    let seen: Vec<Option<String>> =
        up.requests().iter().map(|r| r.header("x-gravitino-active-roles").map(str::to_owned)).collect();
    assert_eq!(seen, [Some("analyst".to_owned()), None, None]);
    for r in up.requests() {
        assert_eq!(
            r.headers.get_all("x-gravitino-active-roles").iter().count(),
            r.header("x-gravitino-active-roles").iter().count()
        );
    }
}

#[tokio::test]
async fn forward_active_roles_off_strips_the_header() {
    let (up, g) = setup_with(|_| Reply::ok(), |c| c.upstream.forward_active_roles = false).await;
    let a = send(
        g.addr,
        "GET",
        LOAD_ORDERS,
        &[("authorization", &basic("alice")), ("x-gravitino-active-roles", "analyst")],
        b"",
    )
    .await;
    assert_eq!(a.status, 200);
    assert_eq!(up.only().header("x-gravitino-active-roles"), None);
}

// ---- identity ----

#[tokio::test]
async fn no_or_bad_credentials_are_401_and_never_forwarded() {
    let (up, g) = setup().await;
    let a = send(g.addr, "GET", LOAD_ORDERS, &[], b"").await;
    a.assert_error(401, "NotAuthorizedException");
    assert!(a.headers.contains_key("www-authenticate"));
    let a = send(g.addr, "GET", LOAD_ORDERS, &[("authorization", "Basic !!!")], b"").await;
    a.assert_error(401, "NotAuthorizedException");
    assert!(a.headers.contains_key("www-authenticate"));
    let a = send(g.addr, "GET", LOAD_ORDERS, &[("x-forwarded-user", "alice")], b"").await;
    let m = a.assert_error(401, "NotAuthorizedException");
    assert!(m.contains("x-forwarded-user"), "{m}");
    up.assert_untouched();
}

#[tokio::test]
async fn an_unknown_user_is_403_and_never_forwarded() {
    let (up, g) = setup().await;
    get(&g, "mallory", LOAD_ORDERS).await.assert_error(403, "ForbiddenException");
    up.assert_untouched();
}

#[tokio::test]
async fn identity_headers_are_not_forwarded() {
    let upstream = FakeUpstream::start(|_| Reply::ok()).await;
    let g = gate(&upstream.url(""), POLICY, |c| {
        c.identity.providers = vec![icegate::config::Provider::Header];
        c.identity.header.trusted_peers = vec!["127.0.0.1".parse().unwrap()];
    })
    .await;
    let a =
        send(g.addr, "GET", LOAD_ORDERS, &[("x-forwarded-user", "alice"), ("x-forwarded-groups", "eng")], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    let r = upstream.only();
    assert!(!r.headers.contains_key("x-forwarded-user"), "{:?}", r.headers);
    assert!(!r.headers.contains_key("x-forwarded-groups"), "{:?}", r.headers);
}

#[tokio::test]
async fn the_callers_authorization_is_passed_through_or_replaced_in_service_mode() {
    let (up, g) = setup().await;
    assert_eq!(get(&g, "alice", LOAD_ORDERS).await.status, 200);
    assert_eq!(up.only().header("authorization"), Some(basic("alice").as_str()));
    let (up, g) = setup_with(
        |_| Reply::ok(),
        |c| {
            c.upstream.auth = icegate::config::UpstreamAuth::Service;
            c.upstream.service_authorization = Some("Bearer svc".into());
        },
    )
    .await;
    assert_eq!(get(&g, "alice", LOAD_ORDERS).await.status, 200);
    assert_eq!(up.only().header("authorization"), Some("Bearer svc"));
}

// ---- bodies ----

const CREATE: &str = "/v1/prod/namespaces/sales/tables";

async fn create(g: &crate::fake_upstream::Gate, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let auth = basic("bob");
    let mut all = vec![("authorization", auth.as_str())];
    all.extend_from_slice(headers);
    send(g.addr, "POST", CREATE, &all, body).await
}

#[tokio::test]
async fn bad_create_table_bodies_are_refused_and_never_forwarded() {
    let (up, g) = setup_with(|_| Reply::ok(), |c| c.limits.max_body_bytes = 1024).await;
    let json_ct = ("content-type", "application/json");
    create(&g, &[json_ct], br#"{"name":"t","name":"u"}"#).await.assert_error(400, "BadRequestException");
    create(&g, &[json_ct], br#"{"name":"t"} {}"#).await.assert_error(400, "BadRequestException");
    create(&g, &[json_ct], br#"{"name":"t","x":{"a":1,"a":2}}"#).await.assert_error(400, "BadRequestException");
    create(&g, &[("content-type", "text/plain")], br#"{"name":"t"}"#)
        .await
        .assert_error(415, "UnsupportedMediaTypeException");
    create(&g, &[json_ct, ("content-encoding", "gzip")], br#"{"name":"t"}"#)
        .await
        .assert_error(415, "UnsupportedMediaTypeException");
    let big = format!(r#"{{"name":"t","properties":{{"p":"{}"}}}}"#, "x".repeat(2000));
    create(&g, &[json_ct], big.as_bytes()).await.assert_error(413, "RequestEntityTooLargeException");
    create(&g, &[json_ct], b"").await.assert_error(400, "BadRequestException");
    up.assert_untouched();
}

#[tokio::test]
async fn a_chunked_body_over_the_limit_is_413_and_never_forwarded() {
    let (up, g) = setup_with(|_| Reply::ok(), |c| c.limits.max_body_bytes = 1024).await;
    let chunk = format!(r#"{{"name":"t","properties":{{"p":"{}"}}}}"#, "x".repeat(2000));
    let request = format!(
        "POST {CREATE} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n{:x}\r\n{chunk}\r\n0\r\n\r\n",
        basic("bob"),
        chunk.len()
    );
    let out = raw(g.addr, request.as_bytes(), Duration::from_secs(2)).await;
    assert!(out.starts_with("HTTP/1.1 413"), "{out}");
    up.assert_untouched();
}

#[tokio::test]
async fn a_valid_create_table_body_is_forwarded_byte_for_byte() {
    let (up, g) = setup().await;
    let body = br#"{ "name" : "t2",  "schema": {"type":"struct","fields":[]} , "properties":{"a":"1.0e3"} }"#;
    let a = create(&g, &[("content-type", "application/json")], body).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let r = up.only_forwarded();
    assert_eq!((r.method.as_str(), r.target.as_str()), ("POST", CREATE));
    assert_eq!(&r.body[..], &body[..]);
    assert_eq!(a.headers.get("cache-control").map(|v| v.to_str().unwrap()), Some("no-store"));
}

#[tokio::test]
async fn a_create_table_with_a_location_needs_ownership() {
    let (up, g) = setup().await;
    let a = create(&g, &[("content-type", "application/json")], br#"{"name":"t","location":"s3://b/x"}"#).await;
    a.assert_error(403, "ForbiddenException");
    up.assert_untouched();
}

#[tokio::test]
async fn an_update_denied_by_the_path_gets_403_without_100_continue() {
    let (up, g) = setup().await;
    let request = format!(
        "POST {LOAD_ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\ncontent-type: application/json\r\ncontent-length: 20\r\nexpect: 100-continue\r\n\r\n",
        basic("dave")
    );
    let out = raw(g.addr, request.as_bytes(), Duration::from_millis(500)).await;
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    assert!(!out.contains("100 Continue"), "{out}");
    assert!(out.contains("ForbiddenException"), "{out}");
    up.assert_untouched();
}

#[tokio::test]
async fn an_allowed_update_with_expect_gets_100_continue_and_is_forwarded() {
    let (up, g) = setup().await;
    let body = r#"{"requirements":[],"updates":[]}"#;
    let head = format!(
        "POST {LOAD_ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nexpect: 100-continue\r\nconnection: close\r\n\r\n",
        basic("alice"),
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(g.addr).await.unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut buf = [0u8; 256];
    let n = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buf)).await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 100 Continue"));
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), stream.read_to_end(&mut rest)).await;
    let rest = String::from_utf8_lossy(&rest);
    assert!(rest.starts_with("HTTP/1.1 200"), "{rest}");
    assert_eq!(&up.only().body[..], body.as_bytes());
}

#[tokio::test]
async fn an_update_without_a_body_is_400_and_never_forwarded() {
    let (up, g) = setup().await;
    let a = send(g.addr, "POST", LOAD_ORDERS, &[("authorization", &basic("alice"))], b"").await;
    a.assert_error(400, "BadRequestException");
    up.assert_untouched();
}

// ---- upstream failures ----

#[tokio::test]
async fn an_upstream_that_is_down_is_502() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let g = gate(&format!("http://127.0.0.1:{port}"), POLICY, |_| {}).await;
    get(&g, "alice", LOAD_ORDERS).await.assert_error(502, "BadGatewayException");
}

#[tokio::test]
async fn a_slow_upstream_is_504() {
    let (up, g) =
        setup_with(|_| Reply::ok().after(Duration::from_millis(800)), |c| c.upstream.response_timeout_ms = 150).await;
    get(&g, "alice", LOAD_ORDERS).await.assert_error(504, "GatewayTimeoutException");
    assert_eq!(up.only().target, LOAD_ORDERS);
}

#[tokio::test]
async fn upstream_errors_keep_their_status_and_lose_their_stack() {
    let (up, g) = setup_with(
        |_| {
            Reply::json(
                409,
                json!({"error":{"message":"exists","type":"AlreadyExistsException","code":409,"stack":["at a.b(C.java:1)"]}}),
            )
        },
        |_| {},
    )
    .await;
    let a = get(&g, "alice", LOAD_ORDERS).await;
    assert_eq!(a.status, 409);
    assert_eq!(a.json(), json!({"error":{"message":"exists","type":"AlreadyExistsException","code":409}}));
    assert_eq!(a.headers.get("content-length").unwrap().to_str().unwrap(), a.body.len().to_string());
    up.only();
}

// ---- lists ----

const LIST: &str = "/v1/prod/namespaces/sales/tables";

fn idents(names: &[&str]) -> serde_json::Value {
    json!(names.iter().map(|n| json!({"namespace":["sales"],"name":n})).collect::<Vec<_>>())
}

fn names(v: &serde_json::Value) -> Vec<String> {
    v["identifiers"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap().to_owned()).collect()
}

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
    let token = v["next-page-token"].as_str().unwrap();
    assert!(!token.contains("p3"));
    let targets: Vec<String> = up.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, [format!("{LIST}?pageSize=2"), format!("{LIST}?pageSize=2&pageToken=p2")]);
    // the follow-up carries the caller's credential like the first request
    for r in up.requests() {
        assert_eq!(r.header("authorization"), Some(basic("dave").as_str()));
    }
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

// ---- getToken ----

#[tokio::test]
async fn get_token_is_forwarded_without_any_check() {
    let (up, g) = setup_with(|_| Reply::json(200, json!({"access_token":"x","token_type":"bearer"})), |_| {}).await;
    let body = b"grant_type=client_credentials&client_id=nobody&client_secret=s";
    let a = send(
        g.addr,
        "POST",
        "/v1/oauth/tokens",
        &[("content-type", "application/x-www-form-urlencoded"), ("connection", "x-drop"), ("x-drop", "1")],
        body,
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["access_token"], "x");
    let r = up.only();
    assert_eq!((r.method.as_str(), r.target.as_str()), ("POST", "/v1/oauth/tokens"));
    assert_eq!(&r.body[..], body);
    assert!(!r.headers.contains_key("x-drop"));
    // an unknown user with a credential too
    let a = send(g.addr, "POST", "/v1/oauth/tokens", &[("authorization", &basic("nobody"))], body).await;
    assert_eq!(a.status, 200);
    // it skips even the duplicate-header check, which comes after it (DESIGN.md §5)
    let a = send(
        g.addr,
        "POST",
        "/v1/oauth/tokens",
        &[("x-gravitino-active-roles", "a"), ("x-gravitino-active-roles", "b")],
        body,
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text());
}

// ---- limits ----

#[tokio::test]
async fn too_many_headers_are_431_and_never_forwarded() {
    let (up, g) = setup_with(|_| Reply::ok(), |c| c.limits.max_headers = 20).await;
    let mut request = format!("GET {LOAD_ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\n", basic("alice"));
    for i in 0..30 {
        request.push_str(&format!("x-h{i}: v\r\n"));
    }
    request.push_str("\r\n");
    let out = raw(g.addr, request.as_bytes(), Duration::from_secs(2)).await;
    assert!(out.starts_with("HTTP/1.1 431"), "{out}");
    up.assert_untouched();
}

#[tokio::test]
async fn a_header_block_over_the_size_cap_is_431_and_never_forwarded() {
    let (up, g) = setup_with(|_| Reply::ok(), |c| c.limits.max_header_bytes = 8192).await;
    let request = format!(
        "GET {LOAD_ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\nx-big: {}\r\n\r\n",
        basic("alice"),
        "a".repeat(20_000)
    );
    let out = raw(g.addr, request.as_bytes(), Duration::from_secs(2)).await;
    assert!(out.starts_with("HTTP/1.1 431"), "{out}");
    up.assert_untouched();
}

// ---- found while writing these tests ----

#[tokio::test]
async fn http2_cleartext_requests_are_served() {
    let (up, g) = setup().await;
    let stream = tokio::net::TcpStream::connect(g.addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    let request = http::Request::builder()
        .method("GET")
        .uri(format!("http://{}{LOAD_ORDERS}", g.addr))
        .header("authorization", basic("alice"))
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status().as_u16();
    let body = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(up.only().target, LOAD_ORDERS);
}

#[tokio::test]
async fn responses_icegate_reads_are_asked_for_unencoded() {
    let (up, g) = setup_with(|_| Reply::json(200, json!({"identifiers": idents(&["orders"])})), |_| {}).await;
    let a = send(g.addr, "GET", LIST, &[("authorization", &basic("dave")), ("accept-encoding", "gzip, deflate")], b"")
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(up.only().header("accept-encoding"), None, "a compressed list could not be filtered");
}

#[tokio::test]
async fn the_upstream_sees_its_own_host() {
    let (up, g) = setup().await;
    assert_eq!(get(&g, "alice", LOAD_ORDERS).await.status, 200);
    assert_eq!(up.only().header("host"), Some(up.addr.to_string().as_str()));
}

#[tokio::test]
async fn query_parameters_are_forwarded_and_upstream_tokens_round_trip_exactly() {
    let (up, g) = setup_with(
        |r| {
            if r.target.contains("pageToken=") {
                Reply::json(200, json!({"identifiers": idents(&["b"])}))
            } else {
                Reply::json(200, json!({"identifiers": idents(&["a"]), "next-page-token": "x&y=z+w %"}))
            }
        },
        |_| {},
    )
    .await;
    assert_eq!(get(&g, "alice", &format!("{LOAD_ORDERS}?snapshots=refs")).await.status, 200);
    assert_eq!(up.requests()[0].target, format!("{LOAD_ORDERS}?snapshots=refs"));
    let a = get(&g, "dave", &format!("{LIST}?pageSize=1")).await;
    let token = a.json()["next-page-token"].as_str().unwrap().to_owned();
    let a = get(&g, "dave", &format!("{LIST}?pageSize=1&pageToken={token}")).await;
    assert_eq!(names(&a.json()), ["b"]);
    assert_eq!(up.requests()[2].target, format!("{LIST}?pageSize=1&pageToken=x%26y%3Dz%2Bw%20%25"));
    // repeated scalar parameters are 400, not forwarded
    get(&g, "dave", &format!("{LIST}?pageSize=1&pageSize=2")).await.assert_error(400, "BadRequestException");
    assert_eq!(up.requests().len(), 3);
}

#[tokio::test]
async fn a_metadata_table_name_in_a_nested_namespace_is_404_without_forwarding() {
    let (up, g) = setup().await;
    get(&g, "alice", "/v1/prod/namespaces/sales%1Forders/tables/partitions")
        .await
        .assert_error(404, "NoSuchTableException");
    up.assert_untouched();
}

#[tokio::test]
async fn a_chunked_create_table_body_is_forwarded_whole() {
    let (up, g) = setup().await;
    let body = r#"{"name":"t3"}"#;
    let request = format!(
        "POST {CREATE} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n5\r\n{}\r\n{:x}\r\n{}\r\n0\r\n\r\n",
        basic("bob"),
        &body[..5],
        body.len() - 5,
        &body[5..]
    );
    let out = raw(g.addr, request.as_bytes(), Duration::from_secs(2)).await;
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    let r = up.only_forwarded();
    assert_eq!(&r.body[..], body.as_bytes());
    assert!(r.header("transfer-encoding").is_none() || r.header("content-length").is_none());
}

#[tokio::test]
async fn a_slow_header_block_is_cut_off_and_never_forwarded() {
    let (up, g) = setup_with(|_| Reply::ok(), |c| c.limits.header_read_timeout_ms = 200).await;
    let started = std::time::Instant::now();
    let out =
        raw(g.addr, format!("GET {LOAD_ORDERS} HTTP/1.1\r\nhost: x\r\n").as_bytes(), Duration::from_secs(3)).await;
    assert!(started.elapsed() < Duration::from_secs(2), "the connection stayed open: {out:?}");
    assert!(out.is_empty() || out.starts_with("HTTP/1.1 408"), "{out}");
    up.assert_untouched();
}

#[tokio::test]
async fn an_unread_body_of_a_refused_request_is_never_read_as_a_request() {
    let (up, g) = setup().await;
    let inner = format!("GET {LOAD_ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\n\r\n", basic("alice"));
    let request = format!(
        "POST {LOAD_ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{inner}",
        basic("dave"),
        inner.len()
    );
    let out = raw(g.addr, request.as_bytes(), Duration::from_millis(500)).await;
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    assert_eq!(out.matches("HTTP/1.1 ").count(), 1, "{out}");
    up.assert_untouched();
}

#[tokio::test]
async fn upstream_response_hop_by_hop_headers_are_removed_and_credentials_not_cached() {
    let (up, g) = setup_with(
        |_| {
            Reply::ok()
                .with("connection", "x-secret")
                .with("x-secret", "1")
                .with("x-other", "2")
                .with("cache-control", "max-age=3600")
                .with("proxy-authenticate", "Basic")
        },
        |_| {},
    )
    .await;
    let a = get(&g, "alice", LOAD_ORDERS).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.headers.get("x-other").unwrap(), "2");
    for gone in ["x-secret", "proxy-authenticate"] {
        assert!(!a.headers.contains_key(gone), "{gone}: {:?}", a.headers);
    }
    assert_eq!(a.headers.get_all("cache-control").iter().collect::<Vec<_>>(), ["no-store"]);
    up.only();
}

#[tokio::test]
async fn get_token_under_a_base_path_goes_to_the_upstream_base_path() {
    let upstream = FakeUpstream::start(|_| Reply::json(200, json!({"access_token":"x"}))).await;
    let g = gate(&upstream.url("/catalog"), POLICY, |c| c.base_path = "/gw".into()).await;
    let a = send(g.addr, "POST", "/gw/v1/oauth/tokens?x=1", &[], b"grant_type=client_credentials").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.headers.get("cache-control").unwrap(), "no-store");
    assert_eq!(upstream.only().target, "/catalog/v1/oauth/tokens?x=1");
}

#[tokio::test]
async fn shutdown_lets_in_flight_requests_finish_and_refuses_new_connections() {
    // the in-flight request outlasts the connection attempt, so the listener must be gone while
    // the grace period still runs
    let (up, mut g) = setup_with(|_| Reply::ok().after(Duration::from_millis(900)), |_| {}).await;
    let addr = g.addr;
    let in_flight = tokio::spawn(async move { get_at(addr, "alice", LOAD_ORDERS).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    g.shut_down();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let refused = tokio::time::timeout(Duration::from_millis(300), async {
        match tokio::net::TcpStream::connect(addr).await {
            Err(_) => true,
            Ok(stream) => {
                let mut stream = stream;
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let _ = stream.write_all(format!("GET {LOAD_ORDERS} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes()).await;
                let mut buf = [0u8; 64];
                matches!(stream.read(&mut buf).await, Ok(0) | Err(_))
            }
        }
    })
    .await;
    assert_eq!(refused, Ok(true), "a connection after shutdown must not wait for the grace period");
    assert_eq!(in_flight.await.unwrap().status, 200);
    up.only();
}

async fn get_at(addr: std::net::SocketAddr, user: &str, target: &str) -> Answer {
    send(addr, "GET", target, &[("authorization", &basic(user))], b"").await
}

#[tokio::test]
async fn identity_headers_configured_in_mixed_case_are_still_not_forwarded() {
    let upstream = FakeUpstream::start(|_| Reply::ok()).await;
    let g = gate(&upstream.url(""), POLICY, |c| {
        c.identity.providers = vec![icegate::config::Provider::Header];
        c.identity.header.user_header = "X-Auth-User".into();
        c.identity.header.groups_header = "X-Auth-Groups".into();
        c.identity.header.trusted_peers = vec!["127.0.0.1".parse().unwrap()];
    })
    .await;
    let a = send(g.addr, "GET", LOAD_ORDERS, &[("x-auth-user", "alice"), ("x-auth-groups", "eng")], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    let r = upstream.only();
    assert!(!r.headers.contains_key("x-auth-user"), "{:?}", r.headers);
    assert!(!r.headers.contains_key("x-auth-groups"), "{:?}", r.headers);
}

#[tokio::test]
async fn a_hidden_view_that_does_not_exist_upstream_is_404() {
    let (up, g) = setup_with(|_| Reply::raw(404, ""), |_| {}).await;
    get(&g, "dave", "/v1/prod/namespaces/sales/views/v").await.assert_error(404, "NoSuchViewException");
    let r = up.only();
    assert_eq!((r.method.as_str(), r.target.as_str()), ("HEAD", "/v1/prod/namespaces/sales/views/v"));
}

#[tokio::test]
async fn an_allowed_table_exists_is_forwarded_as_head() {
    let (up, g) = setup_with(|_| Reply::raw(204, ""), |_| {}).await;
    let a = send(g.addr, "HEAD", LOAD_ORDERS, &[("authorization", &basic("bob"))], b"").await;
    assert_eq!(a.status, 204);
    assert!(a.body.is_empty());
    let r = up.only();
    assert_eq!((r.method.as_str(), r.target.as_str()), ("HEAD", LOAD_ORDERS));
}

// ---- an upstream that resets mid-body ----

/// An upstream that answers every request with `head` and `partial`, then closes.
async fn truncating_upstream(head: &'static str, partial: &'static str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(partial.as_bytes()).await;
                let _ = s.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_list_cut_off_mid_body_is_502_not_a_partial_list() {
    let url = truncating_upstream(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n",
        r#"{"identifiers":[{"namespace":["sales"],"name":"orders"}"#,
    )
    .await;
    let g = gate(&url, POLICY, |_| {}).await;
    let a = send(g.addr, "GET", LIST, &[("authorization", &basic("alice"))], b"").await;
    a.assert_error(502, "BadGatewayException");
}

#[tokio::test]
async fn a_streamed_response_cut_off_mid_body_does_not_reach_the_client_as_complete() {
    let url = truncating_upstream(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n",
        r#"{"namespace":["sales"],"properties":{"owner":"x"#,
    )
    .await;
    let g = gate(&url, POLICY, |_| {}).await;
    let request =
        format!("GET /v1/prod/namespaces/sales HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\n\r\n", basic("alice"));
    let out = raw(g.addr, request.as_bytes(), Duration::from_secs(2)).await;
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    // the client is told 400 bytes and gets fewer before the connection ends: it sees the cut
    assert!(head.contains("content-length: 400"), "{head}");
    assert!(body.len() < 400, "{}", body.len());
}

#[tokio::test]
async fn a_credential_bearing_response_cut_off_mid_body_is_502() {
    let url = truncating_upstream(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n",
        r#"{"metadata-location":"s3://b/t/metadata/v1.json","metadata":{"format-version":2"#,
    )
    .await;
    let g = gate(&url, POLICY, |_| {}).await;
    let a = send(g.addr, "GET", LOAD_ORDERS, &[("authorization", &basic("alice"))], b"").await;
    a.assert_error(502, "BadGatewayException");
}

// ---- audit ----

/// icegate auditing to a file (in the returned directory) in front of `script`.
async fn with_audit_file(
    script: impl Fn(&crate::fake_upstream::Recorded) -> Reply + Send + Sync + 'static,
) -> (FakeUpstream, crate::fake_upstream::Gate, crate::support::TempDir, std::path::PathBuf) {
    let dir = crate::support::TempDir::new("audit");
    let file = dir.path().join("audit.jsonl");
    let path = file.clone();
    let (up, g) = setup_with(script, move |c| {
        c.audit.enabled = true;
        c.audit.file = Some(path);
    })
    .await;
    (up, g, dir, file)
}

#[tokio::test]
async fn every_request_gets_one_audit_line_without_secrets() {
    let (_up, g, _dir, file) = with_audit_file(|_| Reply::ok()).await;
    let secret = basic("alice");
    let a =
        send(g.addr, "GET", LOAD_ORDERS, &[("authorization", &secret), ("x-gravitino-active-roles", "analyst")], b"")
            .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let d = send(g.addr, "DELETE", LOAD_ORDERS, &[("authorization", &secret)], b"").await;
    assert_eq!(d.status, 403);
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{text}");
    let (allowed, denied) = (&lines[0], &lines[1]);
    assert_eq!(allowed["decision"], "allow");
    assert_eq!(allowed["user"], "alice");
    assert_eq!(allowed["operation"], "loadTable");
    assert_eq!(allowed["status"], 200);
    assert_eq!(allowed["upstream_status"], 200);
    assert_eq!(allowed["active_roles_header"], "analyst");
    assert_eq!(allowed["active_roles"], json!(["analyst"]));
    assert_eq!(allowed["objects"], json!([{"type": "TABLE", "fullName": "prod.sales.orders"}]));
    assert_eq!(allowed["policy_generation"], 1);
    assert!(allowed["credential"].is_string(), "{allowed}");
    assert_eq!(denied["decision"], "deny");
    assert_eq!(denied["status"], 403);
    assert_eq!(denied["operation"], "dropTable");
    assert!(denied["upstream_status"].is_null());
    assert!(denied["reason"].as_str().unwrap().contains("own(table)"), "{denied}");
    assert_ne!(allowed["request_id"], denied["request_id"]);
    // the credential never appears, neither encoded nor decoded
    assert!(!text.contains(secret.trim_start_matches("Basic ")) && !text.contains("alice:pw"), "{text}");
}

#[tokio::test]
async fn an_audit_line_names_the_objects_a_body_creates_or_renames() {
    // no namespace collides with a created or renamed table (the check asks with HEAD)
    let (_up, g, _dir, file) =
        with_audit_file(|r| if r.method == "HEAD" { Reply::raw(404, "") } else { Reply::ok() }).await;
    let create = br#"{"name":"payroll","schema":{"type":"struct","fields":[]}}"#;
    let json = ("content-type", "application/json");
    let target = "/v1/prod/namespaces/sales/tables";
    send(g.addr, "POST", target, &[("authorization", &basic("bob")), json], create).await;
    // bob may create, but not place the table's data himself: refused once the body is read
    let placed = br#"{"name":"payroll2","location":"file:///elsewhere","schema":{"type":"struct","fields":[]}}"#;
    let denied = send(g.addr, "POST", target, &[("authorization", &basic("bob")), json], placed).await;
    assert_eq!(denied.status, 403);
    let rename =
        br#"{"source":{"namespace":["sales"],"name":"orders"},"destination":{"namespace":["sales"],"name":"orders2"}}"#;
    let renamed =
        send(g.addr, "POST", "/v1/prod/tables/rename", &[("authorization", &basic("alice")), json], rename).await;
    assert_eq!(renamed.status, 200, "{}", renamed.text());
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "{text}");
    let created =
        json!([{"type": "SCHEMA", "fullName": "prod.sales"}, {"type": "TABLE", "fullName": "prod.sales.payroll"}]);
    assert_eq!((lines[0]["user"].as_str(), &lines[0]["objects"]), (Some("bob"), &created), "{text}");
    // a refused create names what it tried to create
    assert_eq!(lines[1]["decision"], "deny", "{text}");
    assert_eq!(lines[1]["objects"][1], json!({"type": "TABLE", "fullName": "prod.sales.payroll2"}), "{text}");
    assert_eq!(
        lines[2]["objects"],
        json!([
            {"type": "CATALOG", "fullName": "prod"},
            {"type": "TABLE", "fullName": "prod.sales.orders"},
            {"type": "TABLE", "fullName": "prod.sales.orders2"}
        ]),
        "{text}"
    );
}

#[tokio::test]
async fn a_refusal_sent_before_the_body_is_read_tells_the_client_the_connection_closes() {
    let (upstream, g) = setup().await;
    let body = br#"{"updates":[],"requirements":[]}"#;
    // dave (analyst) may not update: refused on the path, before the body is read
    let a = send(g.addr, "POST", LOAD_ORDERS, &[("authorization", &basic("dave"))], body).await;
    assert_eq!(a.status, 403);
    assert_eq!(a.headers.get("connection").map(|v| v.to_str().unwrap()), Some("close"));
    // a refusal after the body was read keeps the connection
    let bad = send(g.addr, "POST", LOAD_ORDERS, &[("authorization", &basic("alice"))], b"{").await;
    assert_eq!(bad.status, 400);
    assert!(bad.headers.get("connection").is_none(), "{:?}", bad.headers);
    // and a bodiless refusal too
    let get =
        send(g.addr, "GET", "/v1/prod/namespaces/sales/tables/salaries", &[("authorization", &basic("dave"))], b"")
            .await;
    assert_eq!(get.status, 403);
    assert!(get.headers.get("connection").is_none());
    upstream.assert_untouched();
}
