//! An in-process fake catalog that records every request it receives and answers from a script,
//! an icegate instance in front of it, and a small HTTP/1.1 client for the tests of `serve`.

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use icegate::config::{Config, Overrides};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the upstream received it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    /// Path and query exactly as they arrived.
    pub target: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }
}

/// What the upstream answers.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    pub delay: Duration,
    /// Held until this is notified, when set: a reply that waits for the test's event rather
    /// than for a time.
    pub held: Option<Arc<tokio::sync::Notify>>,
    pub headers: Vec<(&'static str, &'static str)>,
}

impl Reply {
    pub fn json(status: u16, body: serde_json::Value) -> Self {
        Self { status, body: body.to_string().into_bytes(), delay: Duration::ZERO, held: None, headers: Vec::new() }
    }

    pub fn raw(status: u16, body: &str) -> Self {
        Self { status, body: body.as_bytes().to_vec(), delay: Duration::ZERO, held: None, headers: Vec::new() }
    }

    pub fn ok() -> Self {
        Self::json(200, serde_json::json!({}))
    }

    /// A catalog where nothing exists yet but every other request succeeds: `HEAD` is 404 (so
    /// the existence checks icegate makes before a create find no collision), the rest `{}` 200.
    pub fn empty_catalog(r: &Recorded) -> Self {
        if r.method == "HEAD" { Self::raw(404, "") } else { Self::ok() }
    }

    pub fn with(mut self, name: &'static str, value: &'static str) -> Self {
        self.headers.push((name, value));
        self
    }

    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// This reply, sent only once `release` is notified.
    pub fn held(mut self, release: &Arc<tokio::sync::Notify>) -> Self {
        self.held = Some(Arc::clone(release));
        self
    }
}

type Script = dyn Fn(&Recorded) -> Reply + Send + Sync;

/// The fake catalog.
pub struct FakeUpstream {
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<Recorded>>>,
}

impl FakeUpstream {
    pub async fn start(script: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        let shared_log = log.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let log = shared_log.clone();
                let script = script.clone();
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let log = log.clone();
                    let script = script.clone();
                    async move {
                        let (parts, body) = request.into_parts();
                        let body = body.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
                        let recorded = Recorded {
                            method: parts.method.to_string(),
                            target: parts.uri.path_and_query().map(ToString::to_string).unwrap_or_default(),
                            headers: parts.headers,
                            body,
                        };
                        let reply = script(&recorded);
                        log.lock().unwrap().push(recorded);
                        if !reply.delay.is_zero() {
                            tokio::time::sleep(reply.delay).await;
                        }
                        if let Some(release) = &reply.held {
                            release.notified().await;
                        }
                        let mut response = Response::new(Full::new(Bytes::from(reply.body)));
                        *response.status_mut() = StatusCode::from_u16(reply.status).unwrap();
                        response.headers_mut().insert("content-type", "application/json".parse().unwrap());
                        for (k, v) in reply.headers {
                            response.headers_mut().append(k, v.parse().unwrap());
                        }
                        Ok::<_, std::convert::Infallible>(response)
                    }
                });
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { addr, log }
    }

    /// `http://127.0.0.1:PORT` plus `base`.
    pub fn url(&self, base: &str) -> String {
        format!("http://{}{base}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }

    /// Waits (at most 5 s) until the upstream has received `n` requests, whether or not it
    /// has answered them.
    pub async fn until_requests(&self, n: usize) {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while self.log.lock().unwrap().len() < n {
            assert!(std::time::Instant::now() < deadline, "the upstream did not receive {n} requests within 5 s");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits (at most 5 s) until the upstream has received a request that `what` matches: with
    /// the served binary, which probes the upstream's readiness on its own, a count of requests
    /// does not say which arrived.
    pub async fn until_received(&self, what: impl Fn(&Recorded) -> bool) {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !self.log.lock().unwrap().iter().any(&what) {
            assert!(std::time::Instant::now() < deadline, "the upstream did not receive the request within 5 s");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The one request forwarded, after any `HEAD`s icegate sent to check names first.
    pub fn only_forwarded(&self) -> Recorded {
        let all = self.requests();
        let (heads, rest): (Vec<_>, Vec<_>) = all.into_iter().partition(|r| r.method == "HEAD");
        assert_eq!(rest.len(), 1, "expected exactly one forwarded request, got {rest:#?} after {heads:#?}");
        rest.into_iter().next().unwrap()
    }

    /// The one request received.
    pub fn only(&self) -> Recorded {
        let all = self.requests();
        assert_eq!(all.len(), 1, "expected exactly one upstream request, got {all:#?}");
        all.into_iter().next().unwrap()
    }

    pub fn assert_untouched(&self) {
        let all = self.requests();
        assert!(all.is_empty(), "nothing should have been forwarded, got {all:#?}");
    }
}

/// A running icegate; stops when dropped.
pub struct Gate {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Gate {
    /// An icegate running elsewhere (a separate process), at `addr`.
    pub fn at(addr: SocketAddr) -> Self {
        Self { addr, stop: None }
    }

    /// Sends the shutdown signal.
    pub fn shut_down(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// icegate in front of `upstream_url` with `policy`, after `tweak` adjusted the config.
pub async fn gate(upstream_url: &str, policy: &str, tweak: impl FnOnce(&mut Config)) -> Gate {
    gate_then(upstream_url, policy, tweak, |_| {}).await
}

/// As [`gate`], with `prepare` given the state before it serves (to give icegate credentials
/// without the process environment, which parallel tests share).
pub async fn gate_then(
    upstream_url: &str,
    policy: &str,
    tweak: impl FnOnce(&mut Config),
    prepare: impl FnOnce(&icegate::serve::pipeline::state::Shared),
) -> Gate {
    let (gate, _) = start_gate(upstream_url, policy, tweak, prepare, icegate::core::clock::Clock::real()).await;
    gate
}

/// icegate in front of `upstream_url` with `policy`, its upstream client and state reading
/// `clock`; the state is returned for the tests that read `/readyz` and the metrics.
pub async fn gate_clocked(
    upstream_url: &str,
    policy: &str,
    tweak: impl FnOnce(&mut Config),
    clock: icegate::core::clock::Clock,
) -> (Gate, Arc<icegate::serve::pipeline::state::Shared>) {
    start_gate(upstream_url, policy, tweak, |_| {}, clock).await
}

/// The one way the tests start an in-process icegate: the default config with the audit and
/// the ownership store off (tests that read either turn it back on in `tweak`), `prepare` run
/// on the state before the first request, everything reading `clock`.
async fn start_gate(
    upstream_url: &str,
    policy: &str,
    tweak: impl FnOnce(&mut Config),
    prepare: impl FnOnce(&icegate::serve::pipeline::state::Shared),
    clock: icegate::core::clock::Clock,
) -> (Gate, Arc<icegate::serve::pipeline::state::Shared>) {
    let mut config = Config::load(
        None,
        Overrides {
            upstream: Some(upstream_url.to_owned()),
            policy: Some("unused.yaml".into()),
            ..Overrides::default()
        },
    )
    .unwrap();
    config.audit.enabled = false;
    config.owners.store = Some(icegate::ops::owners::StoreKind::Off);
    tweak(&mut config);
    serve_config(config, policy, prepare, clock).await
}

/// icegate serving `config` (its upstreams, audit and ownership store as it says) with `policy`.
pub async fn serve_config(
    config: Config,
    policy: &str,
    prepare: impl FnOnce(&icegate::serve::pipeline::state::Shared),
    clock: icegate::core::clock::Clock,
) -> (Gate, Arc<icegate::serve::pipeline::state::Shared>) {
    let snapshot = crate::support::load(policy);
    let upstream = icegate::serve::upstream::upstreams::Upstreams::from_config(&config, clock.clone()).unwrap();
    let tls = config.tls.as_ref().map(icegate::net::server_config).transpose().unwrap();
    let shared = icegate::serve::pipeline::state::Shared::with_clock(config, snapshot, upstream, clock);
    prepare(&shared);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(icegate::serve::listen::server::serve_with(
        shared.clone(),
        listener,
        tls,
        async move {
            let _ = rx.await;
        },
        Duration::from_secs(2),
    ));
    (Gate { addr, stop: Some(tx) }, shared)
}

/// A response as the client saw it.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text()))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The Iceberg error model, with the expected status and type.
    pub fn assert_error(&self, status: u16, kind: &str) -> String {
        assert_eq!(self.status, status, "body: {}", self.text());
        let v = self.json();
        assert_eq!(v["error"]["type"], kind, "{v}");
        assert_eq!(v["error"]["code"], status, "{v}");
        v["error"]["message"].as_str().unwrap().to_owned()
    }
}

/// `Authorization: Basic` for `user`.
pub fn basic(user: &str) -> String {
    use base64::Engine;
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:pw")))
}

/// One request over a fresh HTTP/1.1 connection; headers are appended as given (so a name may
/// repeat).
pub async fn send(addr: SocketAddr, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
    tokio::spawn(conn);
    let mut request = Request::builder().method(method).uri(target).header("host", addr.to_string());
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let request = request.body(Full::new(Bytes::copy_from_slice(body))).unwrap();
    let response = sender.send_request(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    Answer { status: parts.status.as_u16(), headers: parts.headers, body }
}

/// Writes `raw` and reads what comes back until the peer closes or `wait` passes.
pub async fn raw(addr: SocketAddr, raw: &[u8], wait: Duration) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(raw).await.unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
