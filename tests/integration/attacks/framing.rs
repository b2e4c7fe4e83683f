//! Message framing (RFC 9112 §6): a request whose length icegate and the upstream could read
//! differently is refused, so nothing can be smuggled past the check as a second request.
//!
//! Covered elsewhere: `Expect: 100-continue` on a denied request
//! (`serve::an_update_denied_by_the_path_gets_403_without_100_continue`) and on an allowed one
//! (`serve::an_allowed_update_with_expect_gets_100_continue_and_is_forwarded`), an unread body
//! never read as a request (`serve::an_unread_body_of_a_refused_request_is_never_read_as_a_request`).

use super::{Lab, ORDERS, status_of};
use crate::fake_upstream::{basic, raw};
use std::time::Duration;

const CREATE: &str = "/v1/prod/namespaces/sales/tables";
const BODY: &str = r#"{"name":"t","schema":{"type":"struct","fields":[]}}"#;
const COLLISION_CHECK: &str = "/v1/prod/namespaces/sales%1Ft";

/// A smuggled second request, as it would look hidden in a body: dave may not load `salaries`.
fn smuggled() -> String {
    format!(
        "GET /v1/prod/namespaces/sales/tables/salaries HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\n\r\n",
        basic("dave")
    )
}

/// A create as bob with `framing` header lines and `body`, on a kept-alive connection.
fn create(framing: &str, body: &str) -> String {
    format!(
        "POST {CREATE} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\ncontent-type: application/json\r\n{framing}\r\n{body}",
        basic("bob")
    )
}

fn chunked(body: &str) -> String {
    format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len())
}

/// No request reached the upstream other than creates of `t` (never the smuggled load).
fn assert_nothing_smuggled(lab: &Lab) {
    // the HEAD icegate sends before a create, for a namespace of the new table's name
    let collision_check = |r: &crate::fake_upstream::Recorded| r.method == "HEAD" && r.target == COLLISION_CHECK;
    for r in lab.up.requests().into_iter().filter(|r| !collision_check(r)) {
        assert_eq!(r.target, CREATE, "smuggled: {r:#?}");
        assert_eq!(r.body, BODY.as_bytes(), "{r:#?}");
    }
}

#[tokio::test]
async fn content_length_with_transfer_encoding_is_refused_or_read_as_chunked() {
    let lab = Lab::new().await;
    let body = format!("{}{}", chunked(BODY), smuggled());
    for framing in [
        format!("content-length: {}\r\ntransfer-encoding: chunked\r\n", BODY.len()),
        format!("transfer-encoding: chunked\r\ncontent-length: {}\r\n", body.len()),
        "content-length: 4\r\ntransfer-encoding: chunked\r\n".to_owned(),
    ] {
        let out = raw(lab.addr(), create(&framing, &body).as_bytes(), Duration::from_millis(800)).await;
        // hyper refuses the pair (400) or reads the body as chunked; what follows the chunks is a
        // request of its own, authorized on its own (dave may not read `salaries`: 403)
        assert!(matches!(status_of(&out), 400 | 200), "{framing:?} -> {out}");
        assert!(
            !out.contains(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}HTTP/1.1 200"
            ),
            "{out}"
        );
    }
    assert_nothing_smuggled(&lab);
}

#[tokio::test]
async fn odd_transfer_encodings_are_refused() {
    let lab = Lab::new().await;
    let body = format!("{}{}", chunked(BODY), smuggled());
    for framing in [
        "transfer-encoding: gzip, chunked\r\n",
        "transfer-encoding: chunked, gzip\r\n",
        "transfer-encoding: xchunked\r\n",
        "transfer-encoding: chunked\r\ntransfer-encoding: identity\r\n",
        "transfer-encoding: identity\r\n",
        "transfer-encoding: \"chunked\"\r\n",
        "transfer-encoding:\tchunked\t\r\ncontent-length: 3\r\n",
        "transfer-encoding : chunked\r\n",
        "transfer-encoding: chunked\r\n x\r\n",
    ] {
        let out = raw(lab.addr(), create(framing, &body).as_bytes(), Duration::from_millis(800)).await;
        let status = status_of(&out);
        // refused, or read as chunked (hyper takes a final `chunked`); either way the bytes
        // forwarded are the bytes authorized, and the smuggled load is its own request (403)
        assert!(matches!(status, 400 | 415 | 501 | 200), "{framing:?} -> {out}");
        assert!(out.matches("HTTP/1.1 200").count() <= 1, "{framing:?} -> {out}");
    }
    assert_nothing_smuggled(&lab);
}

#[tokio::test]
async fn bad_content_lengths_are_400_and_never_forwarded() {
    let lab = Lab::new().await;
    for framing in [
        "content-length: -1\r\n",
        "content-length: +51\r\n",
        "content-length: 0x33\r\n",
        "content-length: 51, 52\r\n",
        "content-length: 51\r\ncontent-length: 52\r\n",
        "content-length: 5 1\r\n",
        "content-length: 99999999999999999999999\r\n",
        "content-length: \r\n",
        "content-length: 1e3\r\n",
    ] {
        let out = raw(lab.addr(), create(framing, BODY).as_bytes(), Duration::from_millis(800)).await;
        assert_eq!(status_of(&out), 400, "{framing:?} -> {out}");
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn chunk_extensions_are_ignored_and_bad_chunks_refused() {
    let lab = Lab::new().await;
    // extensions are legal: the body is the chunks' data, forwarded byte for byte
    let (a, b) = BODY.split_at(10);
    let body = format!("{:x};ext=1\r\n{a}\r\n{:x} ; name=\"v\"\r\n{b}\r\n0;last\r\n\r\n", a.len(), b.len());
    let out = raw(
        lab.addr(),
        create("transfer-encoding: chunked\r\nconnection: close\r\n", &body).as_bytes(),
        Duration::from_secs(2),
    )
    .await;
    assert_eq!(status_of(&out), 200, "{out}");
    assert_eq!(lab.up.only_forwarded().body, BODY.as_bytes());
    // malformed chunk sizes and a size that lies about the data
    for body in [
        format!("zz\r\n{BODY}\r\n0\r\n\r\n"),
        format!("-1\r\n{BODY}\r\n0\r\n\r\n"),
        format!("ffffffffffffffffff\r\n{BODY}\r\n0\r\n\r\n"),
        format!("{:x}\r\n{BODY}XX\r\n0\r\n\r\n", BODY.len()),
        format!("{:x};{}\r\n{BODY}\r\n0\r\n\r\n", BODY.len(), "e".repeat(100_000)),
    ] {
        let out = raw(
            lab.addr(),
            create("transfer-encoding: chunked\r\nconnection: close\r\n", &body).as_bytes(),
            Duration::from_secs(2),
        )
        .await;
        assert!(matches!(status_of(&out), 400 | 413) || out.is_empty(), "{} -> {out}", &body[..20]);
    }
    assert_eq!(lab.up.requests().iter().filter(|r| r.method != "HEAD").count(), 1);
}

#[tokio::test]
async fn upgrade_requests_are_never_upgraded_and_lose_their_upgrade_headers() {
    let lab = Lab::new().await;
    for extra in [
        "connection: upgrade\r\nupgrade: websocket\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n",
        "connection: Upgrade, HTTP2-Settings\r\nupgrade: h2c\r\nhttp2-settings: AAMAAABkAAQAAP__\r\n",
    ] {
        let request = format!("GET {ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\n{extra}\r\n", basic("alice"));
        let out = raw(lab.addr(), request.as_bytes(), Duration::from_millis(800)).await;
        assert_eq!(status_of(&out), 200, "{extra:?} -> {out}");
        assert!(!out.contains("101 "), "{out}");
    }
    for r in lab.up.requests() {
        for gone in ["upgrade", "connection", "http2-settings"] {
            assert!(!r.headers.contains_key(gone), "{gone} forwarded: {:?}", r.headers);
        }
    }
    assert_eq!(lab.up.requests().len(), 2);
    // a denied upgrade is just a denied request
    let request = format!(
        "GET /v1/prod/namespaces/sales/tables/salaries HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n",
        basic("dave")
    );
    let out = raw(lab.addr(), request.as_bytes(), Duration::from_millis(800)).await;
    assert_eq!(status_of(&out), 403, "{out}");
    assert_eq!(lab.up.requests().len(), 2);
}

#[tokio::test]
async fn http_1_0_and_pipelined_requests_are_each_authorized() {
    let lab = Lab::new().await;
    // two pipelined requests: the second (denied) is checked on its own
    let first = format!("GET {ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\n\r\n", basic("dave"));
    let second = format!(
        "GET /v1/prod/namespaces/sales/tables/salaries HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\nconnection: close\r\n\r\n",
        basic("dave")
    );
    let out = raw(lab.addr(), format!("{first}{second}").as_bytes(), Duration::from_secs(2)).await;
    assert_eq!(out.matches("HTTP/1.1 200").count(), 1, "{out}");
    assert_eq!(out.matches("HTTP/1.1 403").count(), 1, "{out}");
    assert_eq!(lab.targets(), [ORDERS]);
    // HTTP/1.0 without a Host header is still checked
    let out = raw(
        lab.addr(),
        format!("GET /v1/prod/namespaces/sales/tables/salaries HTTP/1.0\r\nauthorization: {}\r\n\r\n", basic("dave"))
            .as_bytes(),
        Duration::from_secs(2),
    )
    .await;
    assert!(out.contains(" 403 "), "{out}");
    assert_eq!(lab.up.requests().iter().filter(|r| r.method != "HEAD").count(), 1);
}

/// An upstream that keeps the raw bytes of what it receives for `wait`, then answers `{}`.
async fn raw_upstream(wait: Duration) -> (String, std::sync::Arc<std::sync::Mutex<Vec<u8>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let deadline = tokio::time::Instant::now() + wait;
                while let Ok(Ok(n)) = tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
                    if n == 0 {
                        break;
                    }
                    log.lock().unwrap().extend_from_slice(&buf[..n]);
                }
                let _ = s
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}")
                    .await;
            });
        }
    });
    (format!("http://{addr}"), seen)
}

#[tokio::test]
async fn trailers_of_a_streamed_body_never_carry_headers_upstream() {
    // reportMetrics streams its body; a trailer section could smuggle header fields past the
    // header checks if it were passed on
    let (url, seen) = raw_upstream(Duration::from_millis(600)).await;
    let g = crate::fake_upstream::gate(&url, super::POLICY, |_| {}).await;
    let body = r#"{"report-type":"scan-report"}"#;
    let request = format!(
        "POST {ORDERS}/metrics HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\ntrailer: x-forwarded-user, x-gravitino-active-roles\r\nconnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\nx-forwarded-user: root\r\nx-gravitino-active-roles: ALL\r\nauthorization: Basic cm9vdDp4\r\n\r\n",
        basic("dave"),
        body.len()
    );
    let out = raw(g.addr, request.as_bytes(), Duration::from_secs(2)).await;
    assert!(matches!(status_of(&out), 200 | 400), "{out}");
    let upstream = String::from_utf8_lossy(&seen.lock().unwrap()).to_lowercase();
    assert!(upstream.contains("scan-report"), "the body was forwarded: {upstream}");
    for smuggled in ["x-forwarded-user", "root", "cm9vdDp4", "x-gravitino-active-roles: all", "trailer"] {
        assert!(!upstream.contains(&smuggled.to_lowercase()), "{smuggled} reached the upstream:\n{upstream}");
    }
}

/// One HTTP/2 (prior knowledge) request with `headers` appended as given.
async fn h2(addr: std::net::SocketAddr, method: &str, target: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    let mut request = http::Request::builder().method(method).uri(format!("http://{addr}{target}"));
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let request = request.body(http_body_util::Empty::<bytes::Bytes>::new()).unwrap();
    match sender.send_request(request).await {
        Ok(response) => {
            let status = response.status().as_u16();
            let body = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
            (status, String::from_utf8_lossy(&body).into_owned())
        }
        // a stream reset by the server's HTTP/2 layer: refused, nothing answered
        Err(e) => (0, e.to_string()),
    }
}

#[tokio::test]
async fn http2_requests_meet_the_same_checks() {
    let lab = super::Lab::new().await;
    let dave = basic("dave");
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16);
    let cases: &[Case<'_>] = &[
        ("/v1/prod/namespaces/sales/tables/salaries", vec![("authorization", &dave)], 403),
        ("/v1/prod/namespaces/sales/tables/salari%65s", vec![("authorization", &dave)], 403),
        ("/v1/prod/namespaces/sales/tables/a%2Fb", vec![("authorization", &dave)], 400),
        ("/v1/prod/namespaces/sales/tables/..", vec![("authorization", &dave)], 400),
        (ORDERS, vec![("authorization", &dave), ("authorization", &dave)], 400),
        (
            ORDERS,
            vec![("authorization", &dave), ("x-gravitino-active-roles", "a"), ("x-gravitino-active-roles", "b")],
            400,
        ),
        (ORDERS, vec![("authorization", &dave), ("x-http-method-override", "DELETE")], 400),
        (ORDERS, vec![("authorization", &dave), ("x-gravitino-active-roles", "editor")], 403),
        (ORDERS, vec![("x-forwarded-user", "alice")], 401),
    ];
    for (target, headers, want) in cases {
        let (status, body) = h2(lab.addr(), "GET", target, headers).await;
        assert_eq!(status, *want, "{target} {headers:?}: {body}");
    }
    lab.up.assert_untouched();
    // connection-specific headers are malformed in HTTP/2: refused before icegate (reset or 400)
    for (name, value) in [("connection", "keep-alive"), ("transfer-encoding", "chunked"), ("upgrade", "h2c")] {
        let (status, _) = h2(lab.addr(), "GET", ORDERS, &[("authorization", &dave), (name, value)]).await;
        assert!(matches!(status, 0 | 400 | 200), "{name}: {status}");
    }
    for r in lab.up.requests() {
        assert!(!r.headers.contains_key("connection") && !r.headers.contains_key("upgrade"), "{:?}", r.headers);
    }
    let (status, body) = h2(lab.addr(), "GET", ORDERS, &[("authorization", &dave)]).await;
    assert_eq!(status, 200, "{body}");
}
