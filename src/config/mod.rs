//! The process configuration: a TOML file (every key optional) overridden by command-line
//! flags, validated once at start-up (docs/design.md §10). Documented key by key in docs/config.md.

pub mod credentials;
mod error;
pub mod gravitino;
pub mod identity;
pub mod outbound;
pub mod owners;
pub mod upstream;
pub mod upstream_auth;
pub mod upstreams;

pub use credentials::Credentials;
pub use error::ConfigError;
pub use gravitino::{Gravitino, GravitinoAuth, PolicySource};
pub use identity::{HeaderIdentity, Identity, JwtIdentity, MtlsIdentity, MtlsSource, Provider};
pub use outbound::{Outbound, ProxyUrl};
pub use upstream::{Upstream, UpstreamAuth, UpstreamUrl, parse_upstream};
pub use upstream_auth::{ClientAuth, OAuth2, SigV4};

use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub listen: SocketAddr,
    pub admin_listen: SocketAddr,
    /// A path in front of `/v1` on the listener (e.g. `/iceberg`).
    pub base_path: String,
    pub policy: Option<PathBuf>,
    /// Where the live policy comes from: `file` (`policy`) or `gravitino` (`[gravitino]`).
    pub policy_source: PolicySource,
    /// `[gravitino]`: the metalake read when `policy_source = "gravitino"`.
    pub gravitino: Option<Gravitino>,
    /// A candidate policy decided beside the live one on every request, never enforced.
    pub shadow_policy: Option<PathBuf>,
    /// How long in-flight requests may finish after SIGTERM.
    pub shutdown_grace_seconds: u64,
    pub reload: Reload,
    /// Serve HTTPS (and with a client CA, require client certificates).
    pub tls: Option<ListenerTls>,
    pub upstream: Upstream,
    /// `[[upstreams]]`: several upstreams, each serving its catalogs (docs/design.md §7).
    pub upstreams: Vec<Upstream>,
    pub identity: Identity,
    pub narrowing: Narrowing,
    pub limits: Limits,
    pub lists: Lists,
    pub audit: Audit,
    pub credentials: Credentials,
    pub runtime: Runtime,
    /// `[owners]`: the ownership store (docs/design.md §4 "Ownership of created objects").
    pub owners: owners::Config,
    /// `[outbound]`: the egress proxy and CA of icegate's own side calls.
    pub outbound: Outbound,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8181)),
            admin_listen: SocketAddr::from(([127, 0, 0, 1], 9181)),
            base_path: String::new(),
            policy: None,
            policy_source: PolicySource::File,
            gravitino: None,
            shadow_policy: None,
            shutdown_grace_seconds: 20,
            reload: Reload::default(),
            tls: None,
            upstream: Upstream::default(),
            upstreams: Vec::new(),
            identity: Identity::default(),
            narrowing: Narrowing::default(),
            limits: Limits::default(),
            lists: Lists::default(),
            audit: Audit::default(),
            credentials: Credentials::default(),
            runtime: Runtime::default(),
            owners: owners::Config::default(),
            outbound: Outbound::default(),
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

/// `[reload]`: what triggers a policy reload besides SIGHUP (docs/design.md §9).
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

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Narrowing {
    pub ownership: Ownership,
}

/// `narrowing.ownership`: whether ownership still grants under narrowing (docs/design.md §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ownership {
    /// Ownership always applies (Gravitino's option A).
    #[default]
    Always,
    /// A narrowed request gets nothing from ownership (option B).
    Narrowed,
    /// Like `narrowed` unless the header ends with `; ownership=include` (option C).
    Caller,
}

/// `[tls]`: serve HTTPS; with `client_ca_file`, require a client certificate signed by it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListenerTls {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    pub client_ca_file: Option<PathBuf>,
}

/// The inspected-body cap's default (`limits.max_body_bytes`, docs/design.md §7).
pub const DEFAULT_MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

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
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
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
    /// One JSON line per request (docs/design.md §10).
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

impl Config {
    /// Every upstream: the `[[upstreams]]` entries, or the single `[upstream]`.
    pub fn upstream_entries(&self) -> Vec<upstreams::Entry<'_>> {
        upstreams::entries(&self.upstream, &self.upstreams, &self.credentials)
    }

    /// Whether the config names several upstreams (`[[upstreams]]`), each serving its catalogs.
    pub fn many_upstreams(&self) -> bool {
        !self.upstreams.is_empty()
    }

    /// Reads `file` (when given), applies `overrides`, and checks what must be set.
    pub fn load(file: Option<&Path>, overrides: Overrides) -> Result<Self, ConfigError> {
        let mut both_forms = false;
        let mut config = match file {
            None => Config::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
                let parse = |e: toml::de::Error| ConfigError::Parse { path: path.to_owned(), message: e.to_string() };
                let config: Config = toml::from_str(&text).map_err(parse)?;
                // `[upstream]` is read into its defaults when absent: whether the file has it is
                // read from the text
                let raw: toml::Table = toml::from_str(&text).map_err(parse)?;
                both_forms = raw.contains_key("upstream") && raw.contains_key("upstreams");
                config
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
        for upstream in &mut config.upstreams {
            let service = upstream.service_authorization_file.clone();
            let name = upstream.name.clone().unwrap_or_default();
            read_secret(&mut upstream.service_authorization, service.as_deref(), "upstreams.service_authorization")
                .map_err(|e| match e {
                    ConfigError::Invalid { key, message } => {
                        ConfigError::InvalidUpstream { name, key: key.to_owned(), message }
                    }
                    other => other,
                })?;
        }
        config.validate_with(both_forms)?;
        Ok(config)
    }

    #[cfg(test)]
    fn validate(&self) -> Result<(), ConfigError> {
        self.validate_with(false)
    }

    /// `both_forms`: the file has `[upstream]` and `[[upstreams]]`.
    fn validate_with(&self, both_forms: bool) -> Result<(), ConfigError> {
        upstreams::validate((&self.upstream, &self.upstreams, &self.credentials), both_forms)?;
        self.validate_source()?;
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
        self.owners.validate()?;
        self.outbound.validate()?;
        Ok(())
    }
}

impl Config {
    /// The gravitino section when the policy comes from Gravitino.
    pub fn gravitino_source(&self) -> Option<&Gravitino> {
        self.gravitino.as_ref().filter(|_| self.policy_source == PolicySource::Gravitino)
    }

    fn validate_source(&self) -> Result<(), ConfigError> {
        let invalid = |key: &'static str, message: &str| ConfigError::Invalid { key, message: message.to_owned() };
        match (self.policy_source, &self.gravitino) {
            (PolicySource::File, Some(_)) => {
                Err(invalid("gravitino", "set `policy_source = \"gravitino\"` to read the policy from `[gravitino]`"))
            }
            (PolicySource::File, None) if self.policy.is_none() => Err(ConfigError::NoPolicy),
            (PolicySource::File, None) => Ok(()),
            (PolicySource::Gravitino, None) => {
                Err(invalid("gravitino", "required when `policy_source` is `gravitino`"))
            }
            (PolicySource::Gravitino, Some(_)) if self.policy.is_some() => Err(invalid(
                "policy",
                "not used when `policy_source` is `gravitino` (the metalake is the policy); remove it or `--policy`",
            )),
            (PolicySource::Gravitino, Some(g)) => g.validate(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_comes_from_one_source() {
        // top-level keys first, then the sections (TOML puts a key after a header in its section)
        let text = |extra: &str| {
            let (top, sections) = extra.split_once('[').map_or((extra, String::new()), |(t, s)| (t, format!("[{s}")));
            format!("{top}[upstream]\nurl = \"http://x:1\"\n{sections}")
        };
        let load = |t: &str| {
            let c: Config = toml::from_str(t).unwrap();
            c.validate().map(|()| c)
        };
        let g = "[gravitino]\nurl = \"http://g:8090\"\nmetalake = \"lake\"\nuser = \"icegate\"\n";
        let c = load(&text(&format!("policy_source = \"gravitino\"\n{g}"))).unwrap();
        assert_eq!(c.gravitino_source().map(|g| g.metalake.as_str()), Some("lake"));
        let m = load(&text(&format!("policy_source = \"gravitino\"\npolicy = \"p.yaml\"\n{g}"))).unwrap_err();
        assert!(m.to_string().contains("invalid `policy`: not used"), "{m}");
        let m = load(&text("policy_source = \"gravitino\"\n")).unwrap_err();
        assert!(m.to_string().contains("invalid `gravitino`: required"), "{m}");
        let m = load(&text(&format!("policy = \"p.yaml\"\n{g}"))).unwrap_err();
        assert!(m.to_string().contains("policy_source = \"gravitino\""), "{m}");
        assert!(matches!(load(&text("")), Err(ConfigError::NoPolicy)));
        assert!(toml::from_str::<Config>("policy_source = \"http\"").is_err());
    }

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
        assert_eq!(c.narrowing.ownership, Ownership::Always);
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
