//! getToken and the listener's limits.

use super::*;

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
    // it skips even the duplicate-header check, which comes after it (docs/design.md §5)
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
