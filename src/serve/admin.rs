//! The admin listener (docs/design.md §10): `/healthz`, `/readyz` and `/metrics`, apart from the
//! client listener so that probes and scrapes never queue behind client requests.

use crate::serve::state::Shared;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::net::TcpListener;

/// How often the upstream is probed for `/readyz`.
const PROBE_EVERY: Duration = Duration::from_secs(5);

/// Serves the admin endpoints on `listener` until `shutdown`.
pub async fn serve(shared: Arc<Shared>, listener: TcpListener, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            () = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let shared = Arc::clone(&shared);
                async move { Ok::<_, std::convert::Infallible>(answer(&shared, &request)) }
            });
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            let _ = builder.serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

fn answer(shared: &Shared, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "GET only\n".into());
    }
    match request.uri().path() {
        "/healthz" => plain(StatusCode::OK, "text/plain", "ok\n".into()),
        "/readyz" => {
            let (ready, body) = readiness(shared);
            let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
            plain(status, "application/json", body.to_string())
        }
        "/metrics" => {
            plain(StatusCode::OK, "application/openmetrics-text; version=1.0.0; charset=utf-8", shared.metrics.render())
        }
        _ => plain(StatusCode::NOT_FOUND, "text/plain", "not found\n".into()),
    }
}

/// `/readyz`: ready when a policy is loaded (always, once serving), the upstream answered its
/// last probe and, for a service credential icegate fetches, one is held.
pub fn readiness(shared: &Shared) -> (bool, serde_json::Value) {
    let state = shared.state.load();
    let reachable = shared.health.upstream_reachable.load(Ordering::Relaxed);
    // Beside the contract's keys; the store does not decide readiness (reads go on from its
    // last view while it cannot be written).
    let owners = shared.owners.status();
    let auth = shared.upstream.auth();
    let ready = reachable && auth.ready();
    let mut upstream = serde_json::Map::new();
    upstream.insert("reachable".into(), reachable.into());
    if let Some(status) = auth.status() {
        upstream.insert("auth".into(), status.json());
    }
    let body = serde_json::json!({
        "ready": ready,
        "policy": {
            "generation": state.generation,
            "hash": state.snapshot.hash(),
            "loaded_at": crate::core::text::rfc3339(state.loaded_at),
            "stale": shared.health.stale.load(Ordering::Relaxed),
        },
        "upstream": upstream,
        "owners": {"store": owners.store.as_str(), "writable": owners.writable, "pending": owners.pending},
    });
    (ready, body)
}

fn plain(status: StatusCode, content_type: &'static str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(content_type));
    response.headers_mut().insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
    response
}

/// Probes the upstream until `shutdown`: any HTTP answer to `GET {base}/v1/config` (even
/// 401, or a 400 for a missing `warehouse`) means reachable; a connection failure or timeout
/// means not. `upstream.readiness_probe` names another target; without it the probe sends the
/// query clients' getConfig requests carry (so a catalog that needs `warehouse=` gets it).
pub async fn probe_upstream(shared: Arc<Shared>, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    let mut tick = tokio::time::interval(PROBE_EVERY);
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            _ = tick.tick() => {}
        }
        let reachable = probe_once(&shared).await;
        shared.health.upstream_reachable.store(reachable, Ordering::Relaxed);
        shared.metrics.upstream_reachable.set(i64::from(reachable));
    }
}

pub async fn probe_once(shared: &Shared) -> bool {
    let learned = shared.health.config_query.lock().ok().and_then(|q| q.clone()).unwrap_or_default();
    let (path, query) = match &shared.config.upstream.readiness_probe {
        Some(probe) => probe.split_once('?').unwrap_or((probe, "")),
        None => ("/v1/config", learned.as_str()),
    };
    let Ok(uri) = shared.upstream.uri(path, query) else { return false };
    let body = crate::serve::forward::Outgoing::empty();
    let Ok(request) = Request::builder().method(Method::GET).uri(uri).body(body) else { return false };
    // sent with the upstream's credential: the probe fetches the first token, and a token
    // endpoint or AWS credentials that fail make icegate unready
    shared.upstream.send(request).await.is_ok()
}
