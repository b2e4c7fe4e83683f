//! What reaches the upstream: refusals that never do, the canonical path, hop-by-hop and
//! duplicate headers, identity.

use super::*;

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
