//! Request bodies and upstream failures.

use super::*;

// ---- bodies ----

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
