//! The admin listener (docs/design.md §10): `/healthz`, `/readyz` and `/metrics`, apart from the
//! client listener so that probes and scrapes never queue behind client requests.

use crate::serve::pipeline::state::Shared;
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

/// `/readyz`: ready when a policy is loaded (always, once serving) and some upstream answered
/// its last probe and, for a service credential icegate fetches, holds one. With several
/// upstreams one that is down does not take icegate out of service (that would stop the
/// catalogs of the others too): `upstream.reachable` is true only when every upstream answered,
/// and `upstreams` says which did (docs/operations.md).
pub fn readiness(shared: &Shared) -> (bool, serde_json::Value) {
    let state = shared.state.load();
    // Beside the contract's keys; the store does not decide readiness (reads go on from its
    // last view while it cannot be written).
    let owners = shared.owners.status();
    let upstreams = &shared.upstreams;
    // a Gravitino source before its first good read has no policy (generation 0)
    let ready = upstreams.any_ready() && state.generation > 0;
    let mut upstream = serde_json::Map::new();
    upstream.insert("reachable".into(), upstreams.all_reachable().into());
    let mut each = serde_json::Map::new();
    for lane in upstreams.lanes() {
        let mut one = serde_json::Map::new();
        one.insert("reachable".into(), lane.is_reachable().into());
        if let Some(status) = lane.client.auth().status() {
            one.insert("auth".into(), status.json());
        }
        each.insert(lane.name.to_string(), one.into());
    }
    // the single upstream's credential stays where it was before there could be several
    if let (false, Some(status)) = (upstreams.many(), upstreams.first().and_then(|l| l.client.auth().status())) {
        upstream.insert("auth".into(), status.json());
    }
    let mut body = serde_json::json!({
        "ready": ready,
        "policy": {
            "generation": state.generation,
            "hash": state.snapshot.hash(),
            "loaded_at": crate::core::text::rfc3339(state.loaded_at),
            "stale": shared.health.stale.load(Ordering::Relaxed),
        },
        "upstream": upstream,
        "upstreams": each,
        "owners": {"store": owners.store.as_str(), "writable": owners.writable, "pending": owners.pending},
    });
    if shared.config.gravitino_source().is_some()
        && let Some(policy) = body.get_mut("policy").and_then(serde_json::Value::as_object_mut)
    {
        policy.insert("source".into(), source_status(&shared.health));
    }
    (ready, body)
}

/// The Gravitino source in `/readyz`: when it was last read well, how long ago, and how many
/// reads failed (or were refused) since, with the last one's reason.
fn source_status(health: &crate::ops::state::Health) -> serde_json::Value {
    let read_at = health.source_read_at.load(Ordering::Relaxed);
    let (last_read, age) = if read_at == 0 {
        (serde_json::Value::Null, serde_json::Value::Null)
    } else {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(read_at);
        let age = std::time::SystemTime::now().duration_since(at).map_or(0, |d| d.as_secs());
        (crate::core::text::rfc3339(at).into(), age.into())
    };
    let error = health.source_error.lock().ok().and_then(|e| e.clone());
    serde_json::json!({
        "kind": "gravitino",
        "last_read": last_read,
        "age_seconds": age,
        "failures": health.source_failures.load(Ordering::Relaxed),
        "error": error,
    })
}

fn plain(status: StatusCode, content_type: &'static str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(content_type));
    response.headers_mut().insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
    response
}

/// Probes every upstream until `shutdown`: any HTTP answer to `GET {base}/v1/config` (even
/// 401, or a 400 for a missing `warehouse`) means reachable; a connection failure or timeout
/// means not. `readiness_probe` names another target; without it the probe sends the query
/// clients' getConfig requests to that upstream carry (so a catalog that needs `warehouse=`
/// gets it). The upstreams are probed at once, so a slow one delays no other's answer.
pub async fn probe_upstream(shared: Arc<Shared>, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    let mut tick = tokio::time::interval(PROBE_EVERY);
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            _ = tick.tick() => {}
        }
        probe_all(&shared).await;
    }
}

/// Probes every upstream once, at once, and notes each answer.
pub async fn probe_all(shared: &Arc<Shared>) {
    let mut probes = tokio::task::JoinSet::new();
    for i in 0..shared.upstreams.lanes().len() {
        let shared = Arc::clone(shared);
        probes.spawn(async move {
            let Some(lane) = shared.upstreams.lanes().get(i) else { return };
            let reachable = probe_once(lane).await;
            lane.probed(reachable);
        });
    }
    while probes.join_next().await.is_some() {}
}

/// One probe of `lane`'s upstream.
pub async fn probe_once(lane: &crate::serve::upstream::upstreams::Lane) -> bool {
    let learned = lane.config_query();
    let (path, query) = match &lane.config.readiness_probe {
        Some(probe) => probe.split_once('?').unwrap_or((probe, "")),
        None => ("/v1/config", learned.as_str()),
    };
    let Ok(uri) = lane.client.uri(path, query) else { return false };
    let body = crate::serve::upstream::forward::Outgoing::empty();
    let Ok(request) = Request::builder().method(Method::GET).uri(uri).body(body) else { return false };
    // sent with the upstream's credential: the probe fetches the first token, and a token
    // endpoint or AWS credentials that fail make that upstream unready
    lane.client.send(request).await.is_ok()
}
