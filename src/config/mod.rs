//! The process configuration: a TOML file (every key optional) overridden by command-line
//! flags, validated once at start-up (DESIGN.md §10). Documented key by key in docs/config.md.

pub mod owners;

use crate::core::roles::OwnershipMode;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read config file `{path}`: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("invalid config file `{path}`: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("no upstream: set `--upstream URL` or `upstream.url`")]
    NoUpstream,
    #[error("no policy: set `--policy PATH` or `policy`")]
    NoPolicy,
    #[error("invalid upstream url `{0}`: expected `http://host:port[/base]` or `https://...`")]
    BadUpstream(String),
    #[error("invalid `{key}`: {message}")]
    Invalid { key: &'static str, message: String },
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub listen: SocketAddr,
    pub admin_listen: SocketAddr,
    /// A path in front of `/v1` on the listener (e.g. `/iceberg`).
    pub base_path: String,
    pub policy: Option<PathBuf>,
    /// A candidate policy decided beside the live one on every request, never enforced.
    pub shadow_policy: Option<PathBuf>,
    /// How long in-flight requests may finish after SIGTERM.
    pub shutdown_grace_seconds: u64,
    pub reload: Reload,
    /// Serve HTTPS (and with a client CA, require client certificates).
    pub tls: Option<crate::net::ListenerTls>,
    pub upstream: Upstream,
    pub identity: Identity,
    pub narrowing: Narrowing,
    pub limits: Limits,
    pub lists: Lists,
    pub audit: Audit,
    pub credentials: crate::core::credentials::Config,
    pub runtime: Runtime,
    /// `[owners]`: the ownership store (DESIGN.md §4 "Ownership of created objects").
    pub owners: crate::ops::owners::Config,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8181)),
            admin_listen: SocketAddr::from(([127, 0, 0, 1], 9181)),
            base_path: String::new(),
            policy: None,
            shadow_policy: None,
            shutdown_grace_seconds: 20,
            reload: Reload::default(),
            tls: None,
            upstream: Upstream::default(),
            identity: Identity::default(),
            narrowing: Narrowing::default(),
            limits: Limits::default(),
            lists: Lists::default(),
            audit: Audit::default(),
            credentials: crate::core::credentials::Config::default(),
            runtime: Runtime::default(),
            owners: crate::ops::owners::Config::default(),
        }
    }
}

/// `[runtime]`: the threads that serve requests.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Runtime {
    /// Threads serving connections: 1 runs every connection on one thread (no cross-thread
    /// wake-ups, the cheapest per request for a sidecar); more spreads connections over that
    /// many threads; 0 means one per CPU. Policy loads run on a separate blocking thread.
    pub workers: usize,
}

impl Default for Runtime {
    fn default() -> Self {
        Self { workers: 1 }
    }
}

/// `[reload]`: what triggers a policy reload besides SIGHUP (DESIGN.md §9).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Reload {
    /// Watch the policy (and shadow) path, robust to ConfigMap `..data` symlink swaps.
    pub watch: bool,
    /// Changes closer together than this are one reload.
    pub debounce_ms: u64,
    /// Also reload this often; 0: off.
    pub poll_seconds: u64,
}

impl Default for Reload {
    fn default() -> Self {
        Self { watch: true, debounce_ms: 250, poll_seconds: 0 }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UpstreamAuth {
    /// Forward the caller's `Authorization`.
    #[default]
    Passthrough,
    /// Replace it with `upstream.service_authorization`.
    Service,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Upstream {
    /// `http://host:port` plus the upstream's own base path, e.g. `http://catalog:8181/iceberg`.
    pub url: Option<String>,
    pub auth: UpstreamAuth,
    /// The `Authorization` value sent upstream in `service` mode.
    pub service_authorization: Option<String>,
    /// A file holding `service_authorization` (a mounted Secret), read at start-up.
    pub service_authorization_file: Option<PathBuf>,
    /// Separators besides `%1F` the upstream accepts in namespaces (refused in levels).
    pub namespace_separators: Vec<String>,
    pub connect_timeout_ms: u64,
    /// Time to the upstream's response headers.
    pub response_timeout_ms: u64,
    /// Send the enforced active set upstream as `X-Gravitino-Active-Roles` (false strips it).
    pub forward_active_roles: bool,
    /// A CA (PEM) trusted for an `https://` upstream, besides the system's roots.
    pub ca_file: Option<PathBuf>,
    /// What `/readyz` asks the upstream (path and query after its base path), e.g.
    /// `/v1/config?warehouse=lake` for a catalog that needs a warehouse. Unset: `/v1/config`
    /// with the query of the last getConfig a client sent that the upstream answered 2xx.
    pub readiness_probe: Option<String>,
}

impl Default for Upstream {
    fn default() -> Self {
        Self {
            url: None,
            auth: UpstreamAuth::Passthrough,
            service_authorization: None,
            service_authorization_file: None,
            namespace_separators: Vec::new(),
            connect_timeout_ms: 2_000,
            response_timeout_ms: 30_000,
            forward_active_roles: true,
            ca_file: None,
            readiness_probe: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Simple,
    Header,
    Jwt,
    /// The verified TLS client certificate (needs `[tls] client_ca_file`).
    Mtls,
    Anonymous,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Identity {
    /// Tried in order; the first that recognizes the request's credential decides.
    pub providers: Vec<Provider>,
    pub header: HeaderIdentity,
    pub jwt: JwtIdentity,
    pub mtls: crate::serve::identity::mtls::MtlsIdentity,
}

impl Default for Identity {
    fn default() -> Self {
        Self {
            providers: vec![Provider::Simple],
            header: HeaderIdentity::default(),
            jwt: JwtIdentity::default(),
            mtls: crate::serve::identity::mtls::MtlsIdentity::default(),
        }
    }
}

/// The `jwt` provider: `Authorization: Bearer <JWT>` verified against static PEM keys, a JWKS URL
/// or an HMAC secret (DESIGN.md §6).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JwtIdentity {
    /// The required `iss` (required when the provider is enabled).
    pub issuer: Option<String>,
    /// The required `aud` (required when the provider is enabled).
    pub audience: Option<String>,
    /// The accepted `alg` values; never `none`, `HS*` only with `hmac_secret`.
    pub algorithms: Vec<String>,
    /// An `http://` URL serving a JWK set.
    pub jwks_url: Option<String>,
    /// PEM files with public keys (RSA, EC or Ed25519), loaded at start-up.
    pub public_keys: Vec<PathBuf>,
    /// The shared secret of `HS256`/`HS384`/`HS512` tokens.
    pub hmac_secret: Option<String>,
    /// Claims naming the user, the first present wins.
    pub user_claims: Vec<String>,
    /// A claim holding a JSON list of group names.
    pub groups_claim: String,
    /// A claim holding the identity-bound active roles (DESIGN.md §5): a JSON list of strings or
    /// a comma-separated string.
    pub active_roles_claim: Option<String>,
    /// Clock skew allowed on `exp` and `nbf` (at most 60).
    pub leeway_secs: u64,
    /// An unknown `kid` refetches the JWK set at most once per this many seconds.
    pub jwks_refresh_cooldown_secs: u64,
    /// A fetched JWK set is refetched after this many seconds.
    pub jwks_cache_secs: u64,
    /// While refetches fail, the last good JWK set is used for at most this many seconds after
    /// it was fetched; then tokens verified by it are refused (fail closed).
    pub jwks_max_stale_secs: u64,
    /// The keys, loaded once (by `Config::validate`, or on first use) and shared by clones.
    #[serde(skip)]
    pub keys: crate::serve::identity::JwtKeys,
}

impl Default for JwtIdentity {
    fn default() -> Self {
        Self {
            issuer: None,
            audience: None,
            algorithms: vec!["RS256".into(), "ES256".into()],
            jwks_url: None,
            public_keys: Vec::new(),
            hmac_secret: None,
            user_claims: vec!["sub".into()],
            groups_claim: "groups".into(),
            active_roles_claim: None,
            leeway_secs: 30,
            jwks_refresh_cooldown_secs: 30,
            jwks_cache_secs: 300,
            jwks_max_stale_secs: 3_600,
            keys: crate::serve::identity::JwtKeys::default(),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HeaderIdentity {
    pub user_header: String,
    pub groups_header: String,
    /// Peers (IP addresses) allowed to set the identity headers.
    pub trusted_peers: Vec<std::net::IpAddr>,
}

impl Default for HeaderIdentity {
    fn default() -> Self {
        Self {
            user_header: "x-forwarded-user".into(),
            groups_header: "x-forwarded-groups".into(),
            trusted_peers: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Narrowing {
    pub ownership: OwnershipMode,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    pub max_body_bytes: usize,
    /// Time allowed to receive a request's headers (slowloris).
    pub header_read_timeout_ms: u64,
    /// Time allowed to receive an inspected request body, from when its headers were read
    /// (slow senders; 408 beyond).
    pub body_read_timeout_ms: u64,
    /// Time a kept-alive connection may sit with no request in flight and no bytes moving
    /// before it is closed (before its first request, `header_read_timeout_ms` applies).
    pub idle_timeout_ms: u64,
    pub max_headers: usize,
    /// Largest header block accepted (431 beyond).
    pub max_header_bytes: usize,
    pub max_connections: usize,
    /// Requests in flight at once, over all connections.
    pub max_in_flight: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: crate::core::decide::DEFAULT_MAX_BODY_BYTES,
            header_read_timeout_ms: 10_000,
            body_read_timeout_ms: 30_000,
            idle_timeout_ms: 60_000,
            max_headers: 100,
            max_header_bytes: 16 * 1024,
            max_connections: 1_024,
            max_in_flight: 512,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Lists {
    /// 64 hex characters: the key that wraps page tokens; must be the same on every replica.
    /// Unset: a random key per process (tokens do not survive a restart or cross replicas).
    pub page_token_key: Option<String>,
    /// A file holding `page_token_key` (a mounted Kubernetes Secret), read at start-up.
    pub page_token_key_file: Option<PathBuf>,
    /// Upstream pages fetched at most to fill one filtered page.
    pub max_upstream_pages: usize,
}

impl Default for Lists {
    fn default() -> Self {
        Self { page_token_key: None, page_token_key_file: None, max_upstream_pages: 10 }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Audit {
    /// One JSON line per request (DESIGN.md §10).
    pub enabled: bool,
    /// A file to append audit lines to; unset: stdout.
    pub file: Option<PathBuf>,
}

impl Default for Audit {
    fn default() -> Self {
        Self { enabled: true, file: None }
    }
}
/// Fills `value` from `file` (trimmed): secrets come from mounted files, not from the config
/// text. Setting both is refused, since one would silently win.
fn read_secret(value: &mut Option<String>, file: Option<&Path>, key: &'static str) -> Result<(), ConfigError> {
    let Some(file) = file else { return Ok(()) };
    if value.is_some() {
        return Err(ConfigError::Invalid { key, message: format!("set `{key}` or `{key}_file`, not both") });
    }
    let text = std::fs::read_to_string(file)
        .map_err(|e| ConfigError::Invalid { key, message: format!("cannot read `{}`: {e}", file.display()) })?;
    *value = Some(text.trim().to_owned());
    Ok(())
}

/// Command-line values that override the file.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub listen: Option<SocketAddr>,
    pub admin_listen: Option<SocketAddr>,
    pub upstream: Option<String>,
    pub policy: Option<PathBuf>,
}

/// The upstream split into what the client dials and the base path it serves under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamUrl {
    pub scheme: http::uri::Scheme,
    pub authority: http::uri::Authority,
    pub base_path: String,
}

pub fn parse_upstream(url: &str) -> Result<UpstreamUrl, ConfigError> {
    let bad = || ConfigError::BadUpstream(url.to_owned());
    let uri: http::Uri = url.parse().map_err(|_| bad())?;
    let scheme = uri.scheme().filter(|s| s.as_str() == "http" || s.as_str() == "https").ok_or_else(bad)?.clone();
    let authority = uri.authority().ok_or_else(bad)?.clone();
    if uri.query().is_some() {
        return Err(bad());
    }
    let base_path = uri.path().trim_end_matches('/').to_owned();
    Ok(UpstreamUrl { scheme, authority, base_path })
}

impl Config {
    /// Reads `file` (when given), applies `overrides`, and checks what must be set.
    pub fn load(file: Option<&Path>, overrides: Overrides) -> Result<Self, ConfigError> {
        let mut config = match file {
            None => Config::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
                toml::from_str(&text)
                    .map_err(|e| ConfigError::Parse { path: path.to_owned(), message: e.to_string() })?
            }
        };
        if let Some(v) = overrides.listen {
            config.listen = v;
        }
        if let Some(v) = overrides.admin_listen {
            config.admin_listen = v;
        }
        if let Some(v) = overrides.upstream {
            config.upstream.url = Some(v);
        }
        if let Some(v) = overrides.policy {
            config.policy = Some(v);
        }
        read_secret(
            &mut config.lists.page_token_key,
            config.lists.page_token_key_file.as_deref(),
            "lists.page_token_key",
        )?;
        let service = config.upstream.service_authorization_file.clone();
        read_secret(&mut config.upstream.service_authorization, service.as_deref(), "upstream.service_authorization")?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        parse_upstream(self.upstream.url.as_deref().ok_or(ConfigError::NoUpstream)?)?;
        if self.policy.is_none() {
            return Err(ConfigError::NoPolicy);
        }
        if self.upstream.auth == UpstreamAuth::Service && self.upstream.service_authorization.is_none() {
            return Err(ConfigError::Invalid {
                key: "upstream.service_authorization",
                message: "required when `upstream.auth` is `service`".into(),
            });
        }
        if !self.base_path.is_empty() && (!self.base_path.starts_with('/') || self.base_path.ends_with('/')) {
            return Err(ConfigError::Invalid {
                key: "base_path",
                message: "must start with `/` and not end with one".into(),
            });
        }
        if self.identity.providers.contains(&Provider::Mtls)
            && self.tls.as_ref().is_none_or(|t| t.client_ca_file.is_none())
        {
            return Err(ConfigError::Invalid {
                key: "identity.providers",
                message: "`mtls` needs `tls.client_ca_file`, so that client certificates are verified".into(),
            });
        }
        if self.identity.providers.is_empty() {
            return Err(ConfigError::Invalid {
                key: "identity.providers",
                message: "name at least one provider".into(),
            });
        }
        if self.identity.providers.contains(&Provider::Jwt) {
            crate::serve::identity::validate_jwt(&self.identity.jwt)?;
        }
        if let Some(key) = &self.lists.page_token_key
            && crate::serve::tokens::parse_key(key).is_none()
        {
            return Err(ConfigError::Invalid {
                key: "lists.page_token_key",
                message: "expected 64 hex characters".into(),
            });
        }
        if let Some(probe) = &self.upstream.readiness_probe
            && (!probe.starts_with('/') || probe.parse::<http::uri::PathAndQuery>().is_err())
        {
            return Err(ConfigError::Invalid {
                key: "upstream.readiness_probe",
                message: format!("`{probe}` is not a path (and query) starting with `/`"),
            });
        }
        self.credentials.validate()?;
        self.owners.validate()?;
        Ok(())
    }

    /// The decision settings of [`crate::core::decide`].
    pub fn decide_settings(&self) -> crate::core::decide::Settings {
        crate::core::decide::Settings {
            base_path: self.base_path.clone(),
            namespace_separators: self.upstream.namespace_separators.clone(),
            max_body_bytes: self.limits.max_body_bytes,
            ownership: self.narrowing.ownership,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_alone_are_enough() {
        let c = Config::load(
            None,
            Overrides {
                upstream: Some("http://127.0.0.1:8080/iceberg".into()),
                policy: Some("p.yaml".into()),
                ..Overrides::default()
            },
        )
        .unwrap();
        assert_eq!(c.listen.to_string(), "127.0.0.1:8181");
        assert_eq!(c.admin_listen.to_string(), "127.0.0.1:9181");
        assert_eq!(c.identity.providers, vec![Provider::Simple]);
        assert_eq!(c.narrowing.ownership, OwnershipMode::Always);
        let u = parse_upstream(c.upstream.url.as_deref().unwrap()).unwrap();
        assert_eq!(
            (u.scheme.as_str(), u.authority.as_str(), u.base_path.as_str()),
            ("http", "127.0.0.1:8080", "/iceberg")
        );
    }

    #[test]
    fn mtls_identity_needs_verified_client_certificates() {
        let overrides = || Overrides {
            upstream: Some("http://127.0.0.1:1".into()),
            policy: Some("p.yaml".into()),
            ..Overrides::default()
        };
        let mut c = Config::load(None, overrides()).unwrap();
        c.identity.providers = vec![Provider::Mtls];
        assert!(matches!(c.validate(), Err(ConfigError::Invalid { key: "identity.providers", .. })));
    }

    #[test]
    fn secrets_are_read_from_files_and_not_set_twice() {
        let dir = std::env::temp_dir().join(format!("icegate-config-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = dir.join("key");
        std::fs::write(&key, format!("{}\n", "ab".repeat(32))).unwrap();
        let config_file = dir.join("c.toml");
        let text = format!("[upstream]\nurl = \"http://x:1\"\n[lists]\npage_token_key_file = \"{}\"\n", key.display());
        std::fs::write(&config_file, &text).unwrap();
        let overrides = || Overrides { policy: Some("p.yaml".into()), ..Overrides::default() };
        let c = Config::load(Some(&config_file), overrides()).unwrap();
        assert_eq!(c.lists.page_token_key.as_deref(), Some("ab".repeat(32).as_str()));
        std::fs::write(&config_file, format!("{text}page_token_key = \"{}\"\n", "cd".repeat(32))).unwrap();
        assert!(matches!(Config::load(Some(&config_file), overrides()), Err(ConfigError::Invalid { .. })));
        std::fs::remove_file(&key).unwrap();
        std::fs::write(&config_file, &text).unwrap();
        assert!(matches!(Config::load(Some(&config_file), overrides()), Err(ConfigError::Invalid { .. })));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unknown_keys_and_missing_settings_are_errors() {
        assert!(toml::from_str::<Config>("listn = \"x\"").is_err());
        assert!(toml::from_str::<Config>("[upstream]\nurl = \"http://x\"\nauth = \"magic\"").is_err());
        assert!(matches!(Config::load(None, Overrides::default()), Err(ConfigError::NoUpstream)));
        assert!(parse_upstream("ftp://x").is_err());
        assert!(parse_upstream("http://x?y=1").is_err());
    }
}
