//! `icegate serve`: config → first snapshot (fail fast: never serve without a policy) →
//! upstream client → listener, until SIGTERM or Ctrl-C.

use crate::config::{Config, ConfigError};
use crate::serve::pipeline::state::Shared;
use crate::serve::upstream::upstreams::Upstreams;
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum RunError {
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
    #[error("policy does not load:\n{0}")]
    Policy(#[from] crate::core::policy::LoadError),
    #[error("{0}")]
    Tls(#[from] crate::net::TlsError),
    #[error("the policy source: {0}")]
    Source(String),
    #[error("{0}")]
    Upstream(#[from] crate::serve::upstream::forward::ClientError),
    #[error("{0}")]
    Outbound(#[from] crate::net::outbound::OutboundError),
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    /// docs/design.md §10: a store that cannot be opened or written at start-up stops icegate.
    #[error("{0}")]
    Owners(String),
    #[error("cannot listen on `{addr}`: {source}")]
    Listen { addr: std::net::SocketAddr, source: std::io::Error },
}

/// Reads the config file (when given) with `overrides`, and checks every setting, those its
/// subsystems read included (the JWT provider's keys load, the signing endpoints parse, the
/// page-token key is one).
pub fn load_config(file: Option<&std::path::Path>, overrides: crate::config::Overrides) -> Result<Config, ConfigError> {
    let config = Config::load(file, overrides)?;
    check(&config)?;
    Ok(config)
}

fn check(config: &Config) -> Result<(), ConfigError> {
    // the proxy (of the config or the environment) and the CA of the side calls
    crate::net::outbound::Outbound::new(&config.outbound)
        .map_err(|e| ConfigError::Invalid { key: "outbound", message: e.to_string() })?;
    if config.identity.providers.contains(&crate::config::Provider::Jwt) {
        crate::serve::pipeline::identity::validate_jwt(&config.identity.jwt)?;
    }
    if let Some(key) = &config.lists.page_token_key
        && crate::serve::pipeline::tokens::parse_key(key).is_none()
    {
        return Err(ConfigError::Invalid { key: "lists.page_token_key", message: "expected 64 hex characters".into() });
    }
    if let Some(g) = config.gravitino_source() {
        crate::ops::gravitino::Reader::new(g)
            .map_err(|e| ConfigError::Invalid { key: "gravitino", message: e.to_string() })?;
        if let Some(path) = &g.catalogs_file {
            let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Invalid {
                key: "gravitino.catalogs_file",
                message: format!("cannot read `{}`: {e}", path.display()),
            })?;
            crate::core::policy::gravitino::parse_catalogs_file(path, &text)
                .map_err(|e| ConfigError::Invalid { key: "gravitino.catalogs_file", message: e.to_string() })?;
        }
    }
    for entry in config.upstream_entries() {
        crate::serve::storage::vending::validate(&entry.credentials).map_err(|e| {
            match (e, config.many_upstreams()) {
                (ConfigError::Invalid { key, message }, true) => {
                    ConfigError::InvalidUpstream { name: entry.name.clone(), key: key.to_owned(), message }
                }
                (e, _) => e,
            }
        })?;
    }
    Ok(())
}

pub fn run(config: Config) -> Result<(), RunError> {
    // before any subsystem is built: they take their side-call client from here
    let outbound = crate::net::outbound::install(&config.outbound)?;
    match outbound.describe() {
        Some(proxy) => tracing::info!(%proxy, "side calls go through an egress proxy"),
        None => tracing::debug!("side calls go directly (no egress proxy)"),
    }
    let loaded = match config.gravitino_source() {
        // nothing is served until the reload task's first read (docs/design.md §9)
        Some(g) => {
            crate::core::policy::gravitino::placeholder(&g.metalake).map_err(|e| RunError::Source(e.to_string()))?
        }
        None => {
            let policy = config.policy.clone().ok_or(crate::config::ConfigError::NoPolicy)?;
            crate::core::policy::load_path(&policy)?
        }
    };
    for w in &loaded.warnings {
        tracing::warn!("policy: {w}");
    }
    if let Some(w) = crate::serve::pipeline::identity::simple::network_warning(&config) {
        tracing::warn!("{w}");
    }
    for entry in config.upstream_entries() {
        if let Some(w) = entry.credentials.warning() {
            tracing::warn!(upstream = %entry.name, "{w}");
        }
    }
    // A candidate that does not load is reported, not fatal: the live policy is what serves.
    let shadow = config.shadow_policy.as_deref().and_then(|path| match crate::core::policy::load_path(path) {
        Ok(l) => Some(l.snapshot),
        Err(e) => {
            tracing::error!(path = %path.display(), error = %e, "shadow policy does not load");
            None
        }
    });
    let park = crate::ops::audit::ParkFlush::default();
    let runtime = runtime(&config.runtime, &park).map_err(RunError::Runtime)?;
    runtime.block_on(async move {
        let upstreams = Upstreams::from_config(&config, crate::core::clock::Clock::real())?;
        let tls = config.tls.as_ref().map(crate::net::server_config).transpose()?;
        let (listen, admin_listen) = (config.listen, config.admin_listen);
        let bind = |addr| async move {
            tokio::net::TcpListener::bind(addr).await.map_err(|source| RunError::Listen { addr, source })
        };
        let listener = bind(listen).await?;
        let admin = bind(admin_listen).await?;
        let grace = Duration::from_secs(config.shutdown_grace_seconds);
        let stats = loaded.snapshot.stats();
        let shared = Shared::with_shadow(config, loaded.snapshot, shadow, upstreams);
        if let Some(why) = shared.owners.startup_error() {
            return Err(RunError::Owners(owners_hint(why, shared.owners.config().kind())));
        }
        shared.audit.batch_until(&park);
        // A shared ownership store is read before the first request (the embedded one was
        // read when it opened); unreachable, it is logged, and creates wait for it (503).
        let read = shared.owners.refresh().await;
        shared.owners.note(read.is_ok());
        if let Err(e) = read {
            tracing::error!(error = %e, "cannot read the ownership store; owners by creation apply once it is reachable");
        }
        crate::serve::pipeline::ownership::publish(&shared);
        crate::serve::listen::admin::probe_all(&shared).await;
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let until_stopped = move || {
            let mut rx = stopped.clone();
            async move {
                let _ = rx.wait_for(|s| *s).await;
            }
        };
        let admin_addr = admin.local_addr().map_or_else(|_| admin_listen.to_string(), |a| a.to_string());
        let tasks = [
            tokio::spawn(crate::serve::listen::admin::serve(shared.clone(), admin, until_stopped())),
            tokio::spawn(crate::serve::listen::admin::probe_upstream(shared.clone(), until_stopped())),
            tokio::spawn(crate::ops::reload::run(shared.clone(), until_stopped())),
            tokio::spawn(crate::serve::pipeline::ownership::run(shared.clone(), until_stopped())),
        ];
        let upstreams: Vec<String> =
            shared.upstreams.lanes().iter().map(|l| format!("{}={}", l.name, l.client.authority())).collect();
        let upstreams = upstreams.join(",");
        tracing::info!(%listen, admin = %admin_addr, %upstreams, policy = %stats, "icegate listening");
        crate::serve::listen::server::serve_with(shared.clone(), listener, tls, shutdown_signal(), grace).await;
        let _ = stop.send(true);
        for task in tasks {
            let _ = task.await;
        }
        shared.audit.flush();
        tracing::info!("icegate stopped");
        Ok(())
    })
}

/// The start-up error of an ownership store, with the settings that change it.
fn owners_hint(why: &str, kind: crate::ops::owners::StoreKind) -> String {
    let setting = match kind {
        crate::ops::owners::StoreKind::Postgres => "fix `[owners] url` (or `url_file`)",
        _ => "set `[owners] path` to a file icegate can create and write (its directory must exist)",
    };
    format!(
        "{why}\n{setting}, or set `[owners] store = \"off\"` to run without an ownership store (creators then own nothing)"
    )
}

/// The runtime `[runtime]` asks for: one thread runs a current-thread runtime, where a
/// request's client connection, its upstream connection and its handler are all woken on the
/// same thread, so no request pays for a thread wake-up. A thread about to sleep first writes
/// the audit lines of the requests it served (`audit::writer`).
pub fn runtime(
    config: &crate::config::Runtime,
    park: &crate::ops::audit::ParkFlush,
) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = match config.workers {
        1 => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    if config.workers > 1 {
        builder.worker_threads(config.workers);
    }
    let park = park.clone();
    builder.enable_all().on_thread_park(move || park.flush()).build()
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
