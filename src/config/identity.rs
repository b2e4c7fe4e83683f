//! `[identity]`: the providers that say who is calling (docs/design.md §6) and their settings.

use serde::Deserialize;
use std::path::PathBuf;

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
    pub mtls: MtlsIdentity,
}

impl Default for Identity {
    fn default() -> Self {
        Self {
            providers: vec![Provider::Simple],
            header: HeaderIdentity::default(),
            jwt: JwtIdentity::default(),
            mtls: MtlsIdentity::default(),
        }
    }
}

/// The `jwt` provider: `Authorization: Bearer <JWT>` verified against static PEM keys, a JWKS URL
/// or an HMAC secret (docs/design.md §6).
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
    /// A claim holding the identity-bound active roles (docs/design.md §5): a JSON list of strings or
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

/// Where the `mtls` provider takes the user name from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MtlsSource {
    /// The first SAN URI that starts with `san_uri_prefix`, the prefix removed.
    #[default]
    SanUri,
    /// The subject's common name.
    Cn,
}

/// `[identity.mtls]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MtlsIdentity {
    pub source: MtlsSource,
    /// e.g. `spiffe://example.org/ns/jobs/sa/` maps `spiffe://example.org/ns/jobs/sa/etl` to `etl`.
    pub san_uri_prefix: String,
}
