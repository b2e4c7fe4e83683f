//! Regressions found while writing the serving tests, and an upstream that resets mid-body.

use super::*;
use std::sync::Arc;

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
    // the in-flight request is answered only once the listener is seen closed, so the listener
    // must close while the grace period still runs (no race against a delay)
    let release = Arc::new(tokio::sync::Notify::new());
    let held = Arc::clone(&release);
    let (up, mut g) = setup_with(move |_| Reply::ok().held(&held), |_| {}).await;
    let addr = g.addr;
    let in_flight = tokio::spawn(async move { get_at(addr, "alice", LOAD_ORDERS).await });
    up.until_requests(1).await;
    g.shut_down();
    // the listener closes at once, not after the grace period (a connection accepted before it
    // did is dropped here unanswered)
    // (a guard against a listener that never closes, not a measure: it closes before the held
    // request can end)
    let signalled = std::time::Instant::now();
    while tokio::net::TcpStream::connect(addr).await.is_ok() {
        assert!(signalled.elapsed() < Duration::from_secs(30), "new connections are still accepted after shutdown");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!in_flight.is_finished(), "the listener closed only after the in-flight request");
    release.notify_one();
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
