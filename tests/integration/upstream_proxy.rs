//! `[upstream] proxy` (issue 49): the forwarded requests go through the configured HTTP proxy —
//! to an `http://` upstream in absolute form, the proxy's credentials on each request; to an
//! `https://` one through a CONNECT tunnel — and through no proxy otherwise, the side calls'
//! `[outbound] proxy` included; a proxy that refuses them or is down is a 502 naming it, never
//! its password. The proxy is a forwarding stand-in that records what it is asked;
//! tests/upstream_auth/egress.sh runs the same against Debian's tinyproxy.

use crate::fake_upstream::{FakeUpstream, Reply, basic, gate, send};
use crate::support::TempDir;
use icegate::config::ProxyUrl;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const POLICY: &str = "version: 1\nmetalake: lake\ndefault_catalog: prod\nusers: [{ name: alice }]\n";
const PASSWORD: &str = "pr0xy-pw";
/// `Basic` of `icegate:pr0xy-pw`.
const CREDENTIALS: &str = "basic awnlz2f0ztpwcjb4es1wdw==";

/// A forward proxy: each request head it is asked is recorded, then forwarded to its origin
/// (absolute form, one request per connection so that every one is seen) or tunnelled
/// (CONNECT). With `require`, a head without its `Proxy-Authorization` gets a 407.
struct ForwardProxy {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
}

impl ForwardProxy {
    async fn start(require: bool) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&heads);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(relay(socket, Arc::clone(&seen), require));
            }
        });
        Self { port, heads }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }

    fn url(&self, userinfo: &str) -> ProxyUrl {
        ProxyUrl(format!("http://{userinfo}127.0.0.1:{}", self.port))
    }
}

async fn relay(mut client: TcpStream, seen: Arc<Mutex<Vec<String>>>, require: bool) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match client.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let rest = buf[end..].to_vec();
    seen.lock().unwrap().push(head.clone());
    if require && !head.to_ascii_lowercase().contains(&format!("proxy-authorization: {CREDENTIALS}\r\n")) {
        let refusal = "HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
        let _ = client.write_all(refusal.as_bytes()).await;
        return;
    }
    let (line, fields) = head.split_once("\r\n").unwrap();
    let mut words = line.split(' ');
    let (method, target) = (words.next().unwrap(), words.next().unwrap());
    let mut origin = if method == "CONNECT" {
        let origin = TcpStream::connect(target).await.unwrap();
        client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await.unwrap();
        origin
    } else {
        let uri: http::Uri = target.parse().unwrap();
        let mut origin = TcpStream::connect(uri.authority().unwrap().as_str()).await.unwrap();
        origin.write_all(format!("{line}\r\nconnection: close\r\n{fields}").as_bytes()).await.unwrap();
        origin
    };
    origin.write_all(&rest).await.unwrap();
    let _ = tokio::io::copy_bidirectional(&mut client, &mut origin).await;
}

fn has_credentials(head: &str) -> bool {
    head.to_ascii_lowercase().contains(&format!("proxy-authorization: {CREDENTIALS}\r\n"))
}

async fn get_config(addr: std::net::SocketAddr) -> crate::fake_upstream::Answer {
    send(addr, "GET", "/v1/config", &[("authorization", &basic("alice"))], b"").await
}

#[tokio::test]
async fn an_http_upstream_is_reached_through_its_proxy_with_the_credentials_on_each_request() {
    let upstream = FakeUpstream::start(Reply::empty_catalog).await;
    let proxy = ForwardProxy::start(true).await;
    let url = proxy.url(&format!("icegate:{PASSWORD}@"));
    let gate = gate(&upstream.url(""), POLICY, |c| c.upstream.proxy = Some(url)).await;
    for _ in 0..2 {
        let a = get_config(gate.addr).await;
        assert_eq!(a.status, 200, "{}", a.text());
    }
    let forwarded: Vec<String> = proxy
        .heads()
        .into_iter()
        .filter(|h| h.starts_with(&format!("GET http://{}/v1/config HTTP/1.1\r\n", upstream.addr)))
        .collect();
    assert_eq!(forwarded.len(), 2, "{:?}", proxy.heads());
    assert!(forwarded.iter().all(|h| has_credentials(h)), "{forwarded:?}");
    assert_eq!(upstream.requests().iter().filter(|r| r.target == "/v1/config").count(), 2);
}

#[tokio::test]
async fn an_https_upstream_is_reached_through_a_connect_tunnel_with_the_credentials_on_the_connect_only() {
    let dir = TempDir::new("upstream-proxy-tls");
    let ca = crate::tls::ca("upstream CA");
    let (url, hits) = crate::tls::https_upstream(&ca).await;
    let ca_file = dir.write("upstream-ca.pem", &ca.pem);
    let proxy = ForwardProxy::start(true).await;
    let proxy_url = proxy.url(&format!("icegate:{PASSWORD}@"));
    let gate = gate(&url, POLICY, |c| {
        c.upstream.ca_file = Some(ca_file);
        c.upstream.proxy = Some(proxy_url);
    })
    .await;
    let a = get_config(gate.addr).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    let heads = proxy.heads();
    let authority = url.trim_start_matches("https://");
    assert!(heads[0].starts_with(&format!("CONNECT {authority} HTTP/1.1\r\n")), "{heads:?}");
    assert!(has_credentials(&heads[0]), "{heads:?}");
}

#[tokio::test]
async fn without_an_upstream_proxy_the_forwarded_requests_pass_no_proxy_not_even_the_side_calls_one() {
    let upstream = FakeUpstream::start(Reply::empty_catalog).await;
    let proxy = ForwardProxy::start(false).await;
    let side_calls = proxy.url("").0;
    let gate = gate(&upstream.url(""), POLICY, |c| c.outbound.proxy = Some(side_calls)).await;
    let a = get_config(gate.addr).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(upstream.requests().len(), 1);
    assert!(proxy.heads().is_empty(), "{:?}", proxy.heads());
}

#[tokio::test]
async fn a_proxy_refusing_the_forwarded_requests_or_down_is_a_502_naming_it_without_its_password() {
    let upstream = FakeUpstream::start(Reply::empty_catalog).await;
    let proxy = ForwardProxy::start(true).await;
    let named = format!("(through the proxy `http://127.0.0.1:{}`)", proxy.port);
    let wrong = proxy.url("icegate:wr0ng-pw@");
    let refused = gate(&upstream.url(""), POLICY, |c| c.upstream.proxy = Some(wrong.clone())).await;
    let e = get_config(refused.addr).await.assert_error(502, "BadGatewayException");
    assert!(e.contains("the proxy refused to forward the request: 407") && e.ends_with(&named), "{e}");
    assert!(!e.contains("wr0ng-pw"), "{e}");
    // an https:// upstream: the tunnel is refused
    let tunnelled = gate("https://localhost:1", POLICY, |c| c.upstream.proxy = Some(wrong)).await;
    let e = get_config(tunnelled.addr).await.assert_error(502, "BadGatewayException");
    assert!(e.contains("proxy authorization required") && e.ends_with(&named) && !e.contains("wr0ng-pw"), "{e}");
    assert!(proxy.heads().last().unwrap().starts_with("CONNECT localhost:1 HTTP/1.1\r\n"));
    upstream.assert_untouched();
    // nothing listens where the proxy should be
    let down = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = down.local_addr().unwrap().port();
    drop(down);
    let url = ProxyUrl(format!("http://icegate:wr0ng-pw@127.0.0.1:{port}"));
    let gone = gate(&upstream.url(""), POLICY, |c| c.upstream.proxy = Some(url)).await;
    let e = get_config(gone.addr).await.assert_error(502, "BadGatewayException");
    assert!(e.ends_with(&format!("(through the proxy `http://127.0.0.1:{port}`)")) && !e.contains("wr0ng-pw"), "{e}");
    upstream.assert_untouched();
}
