//! `icegate serve`: config → first snapshot (fail fast: never serve without a policy) →
//! upstream client → listener, until SIGTERM or Ctrl-C.

use crate::config::{Config, parse_upstream};
use crate::forward::Upstream;
use crate::state::Shared;
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum RunError {
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
    #[error("policy does not load:\n{0}")]
    Policy(#[from] crate::policy::LoadError),
    #[error("{0}")]
    Tls(#[from] crate::tls::TlsError),
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    #[error("cannot listen on `{addr}`: {source}")]
    Listen { addr: std::net::SocketAddr, source: std::io::Error },
}

/// How long in-flight requests may run after a shutdown signal.
const GRACE: Duration = Duration::from_secs(20);

pub fn run(config: Config) -> Result<(), RunError> {
    let url = parse_upstream(config.upstream.url.as_deref().unwrap_or_default())?;
    let policy = config.policy.clone().ok_or(crate::config::ConfigError::NoPolicy)?;
    let loaded = crate::policy::load_path(&policy)?;
    for w in &loaded.warnings {
        tracing::warn!("policy: {w}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(RunError::Runtime)?;
    runtime.block_on(async move {
        let upstream = Upstream::new(url, &config.upstream)?;
        let tls = config.tls.as_ref().map(crate::tls::server_config).transpose()?;
        let listen = config.listen;
        let listener =
            tokio::net::TcpListener::bind(listen).await.map_err(|source| RunError::Listen { addr: listen, source })?;
        let stats = loaded.snapshot.stats();
        let shared = Shared::new(config, loaded.snapshot, upstream);
        tracing::info!(%listen, upstream = shared.upstream.authority(), policy = %stats, "icegate listening");
        crate::server::serve_with(shared, listener, tls, shutdown_signal(), GRACE).await;
        tracing::info!("icegate stopped");
        Ok(())
    })
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
