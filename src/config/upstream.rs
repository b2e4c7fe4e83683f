//! `[upstream]`: the catalog icegate stands in front of, and how it is reached; each
//! `[[upstreams]]` entry has the same keys, and the ones that say which catalogs it serves
//! (docs/design.md §7 "One gate, many catalogs"; `super::upstreams` checks them).

use super::error::ConfigError;
use super::upstream_auth::{OAuth2, SigV4, validate_oauth2};
use serde::Deserialize;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UpstreamAuth {
    /// Forward the caller's `Authorization`.
    #[default]
    Passthrough,
    /// Replace it with `upstream.service_authorization`.
    Service,
    /// Replace it with an OAuth2 client-credentials token (`[upstream.oauth2]`).
    OAuth2,
    /// Sign every forwarded request with AWS SigV4 (`[upstream.sigv4]`).
    SigV4,
}

impl UpstreamAuth {
    /// Whether the upstream sees icegate's credential rather than the caller's.
    pub fn is_service(self) -> bool {
        self != Self::Passthrough
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Upstream {
    /// `http://host:port` plus the upstream's own base path, e.g. `http://catalog:8181/iceberg`.
    pub url: Option<String>,
    pub auth: UpstreamAuth,
    /// The `Authorization` value sent upstream in `service` mode.
    pub service_authorization: Option<String>,
    /// A file holding `service_authorization` (a mounted Secret), read at start-up and again on
    /// every reload (docs/design.md §6).
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
    /// The HTTP proxy the forwarded requests go through (`net::upstream_proxy`); unset: the
    /// upstream is dialled directly, whatever the environment's proxy variables say.
    pub proxy: Option<super::outbound::ProxyUrl>,
    /// What `/readyz` asks the upstream (path and query after its base path), e.g.
    /// `/v1/config?warehouse=lake` for a catalog that needs a warehouse. Unset: `/v1/config`
    /// with the query of the last getConfig a client sent that the upstream answered 2xx.
    pub readiness_probe: Option<String>,
    /// The token endpoint and client of `auth = "oauth2"`.
    pub oauth2: Option<OAuth2>,
    /// The service and region of `auth = "sigv4"`.
    pub sigv4: Option<SigV4>,
    /// `[[upstreams]]`: the upstream's name, in `/readyz`, audit lines and metric labels
    /// (the single `[upstream]` is `default` unless named).
    pub name: Option<String>,
    /// `[[upstreams]]`: the policy catalogs this upstream serves.
    pub catalogs: Vec<String>,
    /// The getConfig `warehouse` values this upstream answers: with `[[upstreams]]` they route
    /// getConfig; in either form, a catalog's signer advertised in getConfig only is asked with
    /// them when no client's getConfig told it (docs/signing.md).
    pub warehouses: Vec<String>,
    /// `[[upstreams]]`: getConfig without `warehouse`, and getToken, go to this upstream.
    pub default: bool,
    /// `[upstreams.credentials]`: this upstream's own `[credentials]` settings.
    pub credentials: Option<super::credentials::CredentialOverrides>,
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
            proxy: None,
            readiness_probe: None,
            oauth2: None,
            sigv4: None,
            name: None,
            catalogs: Vec::new(),
            warehouses: Vec::new(),
            default: false,
            credentials: None,
        }
    }
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
/// The checks of `upstream.auth` and its section.
pub fn validate(upstream: &Upstream) -> Result<(), ConfigError> {
    match upstream.auth {
        UpstreamAuth::Passthrough => Ok(()),
        UpstreamAuth::Service if upstream.service_authorization.is_none() => Err(ConfigError::Invalid {
            key: "upstream.service_authorization",
            message: "required when `upstream.auth` is `service`".into(),
        }),
        UpstreamAuth::Service => Ok(()),
        UpstreamAuth::OAuth2 => {
            let oauth2 = upstream.oauth2.as_ref().ok_or_else(|| ConfigError::Invalid {
                key: "upstream.oauth2",
                message: "required when `upstream.auth` is `oauth2`".into(),
            })?;
            validate_oauth2(oauth2, "upstream.oauth2")
        }
        UpstreamAuth::SigV4 => {
            let invalid = |message: String| ConfigError::Invalid { key: "upstream.sigv4", message };
            let sigv4 =
                upstream.sigv4.as_ref().ok_or_else(|| invalid("required when `upstream.auth` is `sigv4`".into()))?;
            if sigv4.service.is_empty() || sigv4.region.is_empty() {
                return Err(invalid("`service` (e.g. `glue`, `s3tables`) and `region` are required".into()));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(auth: UpstreamAuth, oauth2: Option<OAuth2>) -> Upstream {
        Upstream { auth, oauth2, ..Upstream::default() }
    }

    #[test]
    fn a_bad_oauth2_section_says_what_is_wrong() {
        let message = |u: &Upstream| validate(u).unwrap_err().to_string();
        assert!(message(&with(UpstreamAuth::OAuth2, None)).contains("required when `upstream.auth` is `oauth2`"));
        let base = OAuth2 {
            token_endpoint: "ftp://idp/token".into(),
            client_id: "icegate".into(),
            client_secret_env: Some("ICEGATE_TEST_SURELY_UNSET_VARIABLE".into()),
            ..OAuth2::default()
        };
        let m = message(&with(UpstreamAuth::OAuth2, Some(base.clone())));
        assert!(m.contains("`ftp://idp/token` is not an http or https url"), "{m}");
        let unset = OAuth2 { token_endpoint: "https://idp/token".into(), ..base.clone() };
        let m = message(&with(UpstreamAuth::OAuth2, Some(unset.clone())));
        assert!(m.contains("environment variable `ICEGATE_TEST_SURELY_UNSET_VARIABLE` is not set"), "{m}");
        let unreadable = OAuth2 {
            client_secret_env: None,
            client_secret_file: Some("/nonexistent/icegate-secret".into()),
            ..unset.clone()
        };
        let m = message(&with(UpstreamAuth::OAuth2, Some(unreadable)));
        assert!(m.contains("cannot read `/nonexistent/icegate-secret`"), "{m}");
        let both = OAuth2 { client_secret_file: Some("/x".into()), ..unset };
        let m = message(&with(UpstreamAuth::OAuth2, Some(both)));
        assert!(m.contains("set one of `client_secret_file` and `client_secret_env`"), "{m}");
    }

    #[test]
    fn sigv4_needs_its_service_and_region() {
        let u = Upstream {
            auth: UpstreamAuth::SigV4,
            sigv4: Some(SigV4 { service: "glue".into(), ..SigV4::default() }),
            ..Upstream::default()
        };
        assert!(validate(&u).unwrap_err().to_string().contains("`region` are required"));
        let u = Upstream {
            sigv4: Some(SigV4 { service: "glue".into(), region: "eu-west-1".into(), sts_endpoint: None }),
            ..u
        };
        assert!(validate(&u).is_ok());
    }
}
