//! The listener: accepts connections (HTTP/1.1 and HTTP/2, cleartext), applies the limits that
//! are always on — header read timeout, header count and size, connection and in-flight caps —
//! and hands each request to [`crate::proxy::handle`]; stops accepting on shutdown and lets
//! in-flight requests finish.

use crate::state::Shared;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Serves `listener` until `shutdown` resolves, then waits for open connections at most
/// `grace`.
pub async fn serve(
    shared: Arc<Shared>,
    listener: TcpListener,
    shutdown: impl std::future::Future<Output = ()>,
    grace: Duration,
) {
    let limits = shared.config.limits.clone();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_millis(limits.header_read_timeout_ms))
        .max_headers(limits.max_headers)
        .max_buf_size(limits.max_header_bytes.max(8192));
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(u32::try_from(limits.max_header_bytes).unwrap_or(u32::MAX));
    let connections = Arc::new(Semaphore::new(limits.max_connections));
    let in_flight = Arc::new(Semaphore::new(limits.max_in_flight));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = connections.clone().acquire_owned() => permit,
        };
        let Ok(permit) = permit else { break };
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let in_flight = in_flight.clone();
        let service = service_fn(move |request| {
            let shared = shared.clone();
            let in_flight = in_flight.clone();
            async move {
                let _slot = in_flight.acquire_owned().await;
                Ok::<_, std::convert::Infallible>(crate::proxy::handle(shared, request, peer.ip()).await)
            }
        });
        let connection = builder.serve_connection(TokioIo::new(stream), service).into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    // Closed now, not after the grace period: new connections are refused at once (a balancer
    // retries them elsewhere) instead of waiting in the backlog for a server that is leaving.
    drop(listener);
    if tokio::time::timeout(grace, graceful.shutdown()).await.is_err() {
        tracing::warn!("grace period over with requests still in flight");
    }
}
