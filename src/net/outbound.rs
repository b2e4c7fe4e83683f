//! The one HTTP client of icegate's own side calls — the JWK set, OAuth2 token endpoints, STS,
//! the container and instance credential endpoints, and any later source (a Gravitino policy
//! source) — as opposed to the forwarded requests, which keep their pooled hyper clients
//! (`net::https_client`). It is `reqwest` on rustls (this crate's ring provider), trusting the
//! system's roots plus `[outbound] ca_file`; it follows no redirect, and goes through the egress
//! proxy of `[outbound] proxy`, else of the environment (`HTTPS_PROXY`, `HTTP_PROXY`,
//! `ALL_PROXY`, `NO_PROXY`, either case, as curl reads them). A proxy is only ever shown as
//! `scheme://host:port`: its credentials reach no log and no error message.

use crate::config::outbound::{Outbound as Config, redact};
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper_util::client::proxy::matcher::Matcher;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use thiserror::Error;

/// Connection set-up, TLS included; each caller bounds its whole exchange with its own timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const POOL_IDLE: Duration = Duration::from_secs(60);
/// The AWS credential endpoints are link-local: a proxy would answer with its own host's
/// credentials, or not at all, so they are always reached directly.
const ALWAYS_DIRECT: &str = "169.254.169.254,169.254.170.2,169.254.170.23,fd00:ec2::23,fd00:ec2::254";

#[derive(Debug, Error)]
pub enum OutboundError {
    #[error(transparent)]
    Tls(#[from] super::TlsError),
    #[error("the proxy `{proxy}` of `{from}` is not a proxy url")]
    Proxy { proxy: String, from: &'static str },
    #[error("cannot build the outbound http client: {0}")]
    Client(String),
}

/// A side call that got no answer: why, and through which proxy it went.
#[derive(Debug, Error)]
#[error("{message}{}", .via.as_ref().map(|p| format!(" (through the proxy `{p}`)")).unwrap_or_default())]
pub struct SendError {
    pub message: String,
    /// The proxy, as it may be shown.
    pub via: Option<String>,
}

/// Where side calls go: the proxies of each scheme and the hosts that bypass them.
struct Route {
    http: Option<String>,
    https: Option<String>,
    /// `NO_PROXY`'s syntax.
    no: String,
    /// The same rules as reqwest's, to name the proxy a call went through.
    matcher: Matcher,
    /// Where `http`/`https` came from, for messages.
    from: &'static str,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route")
            .field("http", &self.http.as_deref().map(redact))
            .field("https", &self.https.as_deref().map(redact))
            .field("no", &self.no)
            .finish_non_exhaustive()
    }
}

impl Route {
    fn new(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> Self {
        // curl takes `host:port` for `http://host:port`
        let with_scheme = |v: String| if v.contains("://") { v } else { format!("http://{v}") };
        let first = |names: [&str; 2]| names.into_iter().find_map(|n| env(n).filter(|v| !v.trim().is_empty()));
        let proxy = |names: [&str; 2]| first(names).map(with_scheme);
        let mut no: Vec<String> = vec![ALWAYS_DIRECT.into()];
        let (http, https, from) = match &config.proxy {
            Some(proxy) => (Some(proxy.clone()), Some(proxy.clone()), "outbound.proxy"),
            None => {
                let all = proxy(["ALL_PROXY", "all_proxy"]);
                no.extend(first(["NO_PROXY", "no_proxy"]));
                let http = proxy(["HTTP_PROXY", "http_proxy"]).or_else(|| all.clone());
                (http, proxy(["HTTPS_PROXY", "https_proxy"]).or(all), "the proxy environment variables")
            }
        };
        no.extend(config.no_proxy.iter().cloned());
        let no = no.join(",");
        let matcher = Matcher::builder()
            .http(http.clone().unwrap_or_default())
            .https(https.clone().unwrap_or_default())
            .no(no.clone())
            .build();
        Self { http, https, no, matcher, from }
    }

    fn via(&self, url: &reqwest::Url) -> Option<String> {
        let uri: http::Uri = url.as_str().parse().ok()?;
        self.matcher.intercept(&uri).map(|i| redact(&i.uri().to_string()))
    }
}

/// The side calls' client and the route it takes; cheap to clone (both are shared).
#[derive(Clone, Debug)]
pub struct Outbound {
    client: reqwest::Client,
    route: Arc<Route>,
    config: Arc<Config>,
}

impl Outbound {
    /// The client `[outbound]` describes, with the environment's proxy when it names none.
    pub fn new(config: &Config) -> Result<Self, OutboundError> {
        Self::with_env(config, &|name| std::env::var(name).ok())
    }

    /// As [`Outbound::new`], reading the proxy variables through `env`.
    pub fn with_env(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> Result<Self, OutboundError> {
        let route = Arc::new(Route::new(config, env));
        let config = Arc::new(config.clone());
        let client = build(&config, &route, None)?;
        Ok(Self { client, route, config })
    }

    /// The same client trusting `ca` too (a caller's own CA, as `[upstream.oauth2] ca_file`).
    pub fn with_ca(&self, ca: &Path) -> Result<Self, OutboundError> {
        let client = build(&self.config, &self.route, Some(ca))?;
        Ok(Self { client, route: Arc::clone(&self.route), config: Arc::clone(&self.config) })
    }

    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// The proxy a request to `url` goes through, as it may be shown; `None`: directly.
    pub fn via(&self, url: &reqwest::Url) -> Option<String> {
        self.route.via(url)
    }

    /// ` (through the proxy `…`)` when a request to `url` goes through one, else nothing: the
    /// tail of a message about that request.
    pub fn through(&self, url: &reqwest::Url) -> String {
        self.via(url).map(|p| format!(" (through the proxy `{p}`)")).unwrap_or_default()
    }

    /// The proxies in use, for the start-up log line (`None`: side calls go directly).
    pub fn describe(&self) -> Option<String> {
        let (http, https) = (self.route.http.as_deref().map(redact), self.route.https.as_deref().map(redact));
        let proxies = match (http, https) {
            (None, None) => return None,
            (Some(a), Some(b)) if a == b => a,
            (a, b) => format!("http: {}, https: {}", a.unwrap_or("none".into()), b.unwrap_or("none".into())),
        };
        Some(format!("{proxies} (from {}; direct: {})", self.route.from, self.route.no))
    }

    /// Sends `request`. A proxy refusing to forward it (407, on a plain `http://` call, where
    /// the proxy's answer is the response) is an error naming the proxy, like a failed tunnel.
    pub async fn send(&self, request: reqwest::Request) -> Result<reqwest::Response, SendError> {
        let via = self.via(request.url());
        match self.client.execute(request).await {
            Ok(response) if via.is_some() && response.status() == http::StatusCode::PROXY_AUTHENTICATION_REQUIRED => {
                Err(SendError { message: "the proxy refused to forward the request: 407".into(), via })
            }
            Ok(response) => Ok(response),
            Err(e) => Err(SendError { message: crate::core::text::error_chain(&e.without_url()), via }),
        }
    }
}

/// Reads at most `limit` bytes of `response`'s body.
pub async fn read(response: reqwest::Response, limit: usize) -> Result<Bytes, String> {
    let body = Limited::new(reqwest::Body::from(response), limit).collect().await;
    body.map(|b| b.to_bytes()).map_err(|e| crate::core::text::error_chain(&*e))
}

fn build(config: &Config, route: &Route, extra_ca: Option<&Path>) -> Result<reqwest::Client, OutboundError> {
    let mut roots = super::system_roots();
    for ca in config.ca_file.as_deref().into_iter().chain(extra_ca) {
        roots.extend(super::roots(ca)?.roots);
    }
    let tls = super::client_builder()?.with_root_certificates(roots).with_no_client_auth();
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .pool_idle_timeout(POOL_IDLE)
        .tcp_nodelay(true)
        .no_proxy();
    let proxy = |url: &str, make: fn(&str) -> reqwest::Result<reqwest::Proxy>| {
        make(url)
            .map(|p| p.no_proxy(reqwest::NoProxy::from_string(&route.no)))
            .map_err(|_| OutboundError::Proxy { proxy: redact(url), from: route.from })
    };
    if let Some(url) = &route.http {
        builder = builder.proxy(proxy(url, |u| reqwest::Proxy::http(u))?);
    }
    if let Some(url) = &route.https {
        builder = builder.proxy(proxy(url, |u| reqwest::Proxy::https(u))?);
    }
    // reqwest's own message names no proxy url
    builder.build().map_err(|e| OutboundError::Client(crate::core::text::error_chain(&e.without_url())))
}

static SHARED: OnceLock<Outbound> = OnceLock::new();

/// Makes `config`'s client the one [`shared`] returns (at start-up, before any side call).
pub fn install(config: &Config) -> Result<&'static Outbound, OutboundError> {
    let outbound = Outbound::new(config)?;
    Ok(SHARED.get_or_init(|| outbound))
}

/// The process's side-call client: the installed one, else one built now from the environment
/// alone (a library user, a test, or the checks that run before [`install`]).
pub fn shared() -> Result<Outbound, OutboundError> {
    match SHARED.get() {
        Some(outbound) => Ok(outbound.clone()),
        None => Outbound::new(&Config::default()),
    }
}
