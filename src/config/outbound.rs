//! `[outbound]`: how icegate's own side calls (the JWK set, OAuth2 token endpoints, STS, the
//! container and instance credential endpoints) leave the host: an egress proxy, the hosts that
//! bypass it, and a CA they trust beside the system's. The forwarded requests to the catalog
//! never use it: an upstream reached through a proxy names it itself (`[upstream] proxy`, a
//! [`ProxyUrl`]). Proxy URLs are shown only redacted.

use super::error::ConfigError;
use serde::Deserialize;
use std::path::PathBuf;

/// `[outbound]`. Unset `proxy`: the environment's `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and
/// `NO_PROXY` (either case), as curl reads them.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Outbound {
    /// `http://[user:password@]host:port`: every side call goes through it (the environment's
    /// proxy variables are then ignored).
    pub proxy: Option<String>,
    /// Hosts reached directly: a name (and its subdomains), an IP address or a CIDR block, or
    /// `*`; added to `NO_PROXY` when the proxy comes from the environment.
    pub no_proxy: Vec<String>,
    /// A PEM bundle trusted beside the system's roots (an internal identity provider, or a proxy
    /// that inspects TLS).
    pub ca_file: Option<PathBuf>,
}

/// The proxy's credentials are never shown.
impl std::fmt::Debug for Outbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbound")
            .field("proxy", &self.proxy.as_deref().map(redact))
            .field("no_proxy", &self.no_proxy)
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

/// A proxy URL as it may be shown: `scheme://host:port`, without its credentials or path.
pub fn redact(url: &str) -> String {
    match url.parse::<http::Uri>() {
        Ok(uri) => {
            let scheme = uri.scheme_str().unwrap_or("http");
            let host = uri.host().unwrap_or_default();
            match uri.port_u16() {
                Some(port) => format!("{scheme}://{host}:{port}"),
                None => format!("{scheme}://{host}"),
            }
        }
        Err(_) => "(a proxy url that does not parse)".into(),
    }
}

/// Whether `url` is a proxy url of one of `schemes`, with a host.
fn proxy_url(url: &str, schemes: &[&str]) -> bool {
    url.parse::<http::Uri>().ok().is_some_and(|u| {
        u.scheme_str().is_some_and(|s| schemes.contains(&s)) && u.host().is_some_and(|h| !h.is_empty())
    })
}

/// `[upstream] proxy`: the HTTP proxy the forwarded requests to that upstream go through,
/// `http://[user:password@]host:port`. Its `Debug` shows it redacted.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct ProxyUrl(pub String);

impl std::fmt::Debug for ProxyUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&redact(&self.0))
    }
}

impl ProxyUrl {
    /// Only `http://`: the forwarded path speaks plain HTTP to the proxy (an `https://`
    /// upstream through a CONNECT tunnel), and the url holds no path or query.
    pub fn validate(&self, key: &'static str) -> Result<(), ConfigError> {
        let bare = self.0.parse::<http::Uri>().ok().is_some_and(|u| u.path_and_query().is_none_or(|p| p == "/"));
        if proxy_url(&self.0, &["http"]) && bare {
            return Ok(());
        }
        Err(ConfigError::Invalid { key, message: format!("`{}` is not an `http://host:port` url", redact(&self.0)) })
    }
}

impl Outbound {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(proxy) = &self.proxy
            && !proxy_url(proxy, &["http", "https"])
        {
            return Err(ConfigError::Invalid {
                key: "outbound.proxy",
                message: format!("`{}` is not an `http://host:port` url", redact(proxy)),
            });
        }
        for entry in &self.no_proxy {
            if entry.trim().is_empty() || entry.contains(',') {
                return Err(ConfigError::Invalid {
                    key: "outbound.no_proxy",
                    message: format!("`{entry}`: name one host, address or CIDR block per entry"),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_is_shown_without_its_credentials() {
        assert_eq!(redact("http://user:s3cret@proxy.internal:3128/"), "http://proxy.internal:3128");
        let config = Outbound { proxy: Some("http://u:s3cret@p:8080".into()), ..Outbound::default() };
        assert!(!format!("{config:?}").contains("s3cret"));
        let bad = Outbound { proxy: Some("ftp://u:s3cret@p".into()), ..Outbound::default() };
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("outbound.proxy") && !e.contains("s3cret"), "{e}");
        assert!(Outbound { no_proxy: vec!["a,b".into()], ..Outbound::default() }.validate().is_err());
    }

    #[test]
    fn an_upstream_proxy_is_plain_http_without_a_path() {
        let url = |u: &str| ProxyUrl(u.into());
        assert!(url("http://u:s3cret@proxy.internal:3128").validate("upstream.proxy").is_ok());
        assert!(url("http://proxy.internal:3128/").validate("upstream.proxy").is_ok());
        for bad in ["https://u:s3cret@proxy.internal:3128", "http://u:s3cret@proxy.internal:3128/x", "proxy:3128"] {
            let e = url(bad).validate("upstream.proxy").unwrap_err().to_string();
            assert!(e.contains("upstream.proxy") && !e.contains("s3cret"), "{e}");
        }
        assert_eq!(format!("{:?}", url("http://u:s3cret@p:1")), "http://p:1");
    }
}
