//! The load harness's bare control: a pass-through proxy built exactly as icegate's server is —
//! the same runtime (`[runtime]`), connection loop and limits (`icegate::serve::listen::server`), upstream
//! client (`icegate::serve::upstream::forward`) and allocator — with no identification, authorization,
//! rewriting, audit or metrics. What icegate costs beyond it is what its authorization costs.
//!
//! `cargo run --release --example passthrough -- LISTEN UPSTREAM_URL [WORKERS]`

use http_body_util::BodyExt;
use icegate::config::{Limits, Runtime, Upstream as UpstreamConfig, parse_upstream};
use icegate::serve::upstream::forward::{Body, BoxError, Upstream};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// The allocator icegate's binary uses (src/main.rs), so that the control differs from icegate
/// only by what icegate does.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(listen), Some(upstream)) = (args.first(), args.get(1)) else {
        eprintln!("usage: passthrough LISTEN UPSTREAM_URL [WORKERS]");
        return ExitCode::from(2);
    };
    let workers = args.get(2).and_then(|w| w.parse().ok()).unwrap_or(Runtime::default().workers);
    match serve(listen, upstream, workers) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("passthrough: {e}");
            ExitCode::FAILURE
        }
    }
}

fn serve(listen: &str, upstream: &str, workers: usize) -> Result<(), BoxError> {
    let listen: std::net::SocketAddr = listen.parse()?;
    let url = parse_upstream(upstream)?;
    let runtime = icegate::cli::run::runtime(&Runtime { workers }, &icegate::ops::audit::ParkFlush::default())?;
    runtime.block_on(async move {
        let upstream = Arc::new(Upstream::new(url, &UpstreamConfig::default())?);
        let listener = tokio::net::TcpListener::bind(listen).await?;
        eprintln!("passthrough listening on {} ({workers} worker(s))", listener.local_addr()?);
        let handler = move |request: http::Request<hyper::body::Incoming>, _peer| {
            let upstream = upstream.clone();
            async move { forward(&upstream, request).await }
        };
        let open = prometheus_client::metrics::gauge::Gauge::default();
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        icegate::serve::listen::server::serve_connections(
            &Limits::default(),
            open,
            listener,
            None,
            handler,
            shutdown,
            Duration::from_secs(1),
        )
        .await;
        Ok(())
    })
}

/// The request as it came (hop-by-hop headers removed), to the same path upstream.
async fn forward(upstream: &Upstream, request: http::Request<hyper::body::Incoming>) -> http::Response<Body> {
    let (mut parts, body) = request.into_parts();
    icegate::serve::pipeline::accept::strip_hop_by_hop(&mut parts.headers);
    parts.headers.remove(http::header::HOST);
    let (path, query) = parts.uri.path_and_query().map_or(("/", ""), |pq| (pq.path(), pq.query().unwrap_or("")));
    let answer = match upstream.uri(path, query) {
        Ok(uri) => {
            parts.uri = uri;
            let body = body.map_err(|e| Box::new(e) as BoxError).boxed();
            upstream.send_as_is(http::Request::from_parts(parts, body)).await.map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    };
    match answer {
        Ok(response) => {
            let (mut head, body) = response.into_parts();
            icegate::serve::pipeline::accept::strip_hop_by_hop(&mut head.headers);
            http::Response::from_parts(head, body.map_err(|e| Box::new(e) as BoxError).boxed())
        }
        Err(e) => {
            let mut response = http::Response::new(
                http_body_util::Full::new(bytes::Bytes::from(e)).map_err(|never| match never {}).boxed(),
            );
            *response.status_mut() = http::StatusCode::BAD_GATEWAY;
            response
        }
    }
}
