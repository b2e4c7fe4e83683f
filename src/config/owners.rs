//! `[owners]` of the config file: which store, where, and the default that makes creators
//! own what they create with no configuration (docs/design.md §10).

use super::error::ConfigError;
use serde::Deserialize;
use std::path::PathBuf;

/// `[owners]` of the config file (documented in docs/config.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `embedded`, `postgres` or `off`; when unset, `postgres` if `url` or `url_file` is set,
    /// else `embedded` (docs/design.md §10: on and embedded by default).
    pub store: Option<StoreKind>,
    /// The embedded store's file (created if missing; its directory must exist). Unset: see
    /// [`default_path`].
    pub path: Option<PathBuf>,
    /// PostgreSQL's connection string (`postgresql://user@host:port/db` or `host=... user=...`),
    /// with `sslmode` and `sslrootcert` as libpq reads them (`ops::owners::pg_tls` says how).
    pub url: Option<String>,
    /// Or read it from a file (a mounted Secret).
    pub url_file: Option<PathBuf>,
    /// How long one write may take (a lock held by another process, an unreachable server)
    /// before the request gets 503.
    pub timeout_ms: u64,
    /// How often pending intents are reconciled and the store re-read (changes by other
    /// replicas or `icegate owners`, when no notification arrived).
    pub poll_interval_seconds: u64,
    /// How long the location the upstream assigned to a stage-create is remembered, for the
    /// commit of that staged create (docs/design.md §4 updateTable).
    pub staged_location_seconds: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            store: None,
            path: None,
            url: None,
            url_file: None,
            timeout_ms: 2000,
            poll_interval_seconds: 5,
            staged_location_seconds: 24 * 3600,
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    Embedded,
    Postgres,
    Off,
}

impl StoreKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Embedded => "embedded",
            Self::Postgres => "postgres",
            Self::Off => "off",
        }
    }
}

/// The embedded store's file when `owners.path` is unset: `$XDG_STATE_HOME/icegate/owners.db`,
/// else `$HOME/.local/state/icegate/owners.db` (the XDG base directories' place for state that
/// outlives a restart; relative values are ignored, as that specification says). The image sets
/// `XDG_STATE_HOME=/var/lib`, so it is `/var/lib/icegate/owners.db` there, on the volume the
/// manifests mount.
pub fn default_path_in(xdg_state_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let absolute = |v: Option<&str>| v.filter(|v| v.starts_with('/')).map(PathBuf::from);
    let state = absolute(xdg_state_home).or_else(|| absolute(home).map(|h| h.join(".local/state")))?;
    Some(state.join("icegate").join("owners.db"))
}

/// [`default_path_in`] of this process's environment.
pub fn default_path() -> Option<PathBuf> {
    let var = |k| std::env::var(k).ok();
    default_path_in(var("XDG_STATE_HOME").as_deref(), var("HOME").as_deref())
}

impl Config {
    pub fn kind(&self) -> StoreKind {
        self.store.unwrap_or(if self.url.is_some() || self.url_file.is_some() {
            StoreKind::Postgres
        } else {
            StoreKind::Embedded
        })
    }

    /// The embedded store's file: `path`, else [`default_path`].
    pub fn embedded_path(&self) -> Option<PathBuf> {
        self.path.clone().or_else(default_path)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |key, message: &str| ConfigError::Invalid { key, message: message.into() };
        match self.kind() {
            StoreKind::Postgres if self.url.is_none() == self.url_file.is_none() => Err(invalid(
                "owners.url",
                "exactly one of `url` and `url_file` is required when `owners.store` is `postgres`",
            )),
            _ => Ok(()),
        }
    }
}
