//! The upstream client: pooled keep-alive HTTP/1.1 to the catalog (directly, or through
//! `[upstream] proxy`), with the connect and response timeouts that are always on, and the
//! upstream's service credential applied to every request it sends (docs/design.md §6);
//! failures become 502, 503 and 504 (docs/design.md §7).

use crate::config::{Upstream as UpstreamConfig, UpstreamUrl};
use crate::core::clock::Clock;
use crate::net::upstream_proxy::{ProxyError, UpstreamProxy};
use crate::net::{ClientSettings, HttpsClient, https_client};
use crate::serve::upstream::upstream_auth::{AuthError, ServiceAuth};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// Bodies icegate sends: streamed through, or its own.
pub type Body = BoxBody<Bytes, BoxError>;

/// An empty body.
pub fn empty() -> Body {
    use http_body_util::BodyExt;
    http_body_util::Empty::new().map_err(|never| match never {}).boxed()
}

/// A body of `bytes`, icegate's own or the authorized request's.
pub fn full(bytes: Bytes) -> Body {
    use http_body_util::BodyExt;
    http_body_util::Full::new(bytes).map_err(|never| match never {}).boxed()
}

/// A body streamed through as it arrives.
pub fn streamed(body: Incoming) -> Body {
    use http_body_util::BodyExt;
    body.map_err(|e| Box::new(e) as BoxError).boxed()
}

/// A request body going upstream: bytes icegate holds, which it can hash into a signature and
/// send again (a retry after 401), or a stream it passes on as it arrives.
#[derive(Debug)]
pub enum Outgoing {
    Held(Bytes),
    Streamed(Body),
}

impl Outgoing {
    /// No body.
    pub fn empty() -> Self {
        Self::Held(Bytes::new())
    }

    fn into_body(self) -> Body {
        match self {
            Self::Held(bytes) if bytes.is_empty() => empty(),
            Self::Held(bytes) => full(bytes),
            Self::Streamed(body) => body,
        }
    }
}

/// Why the upstream client cannot be built.
#[derive(Debug, Error)]
pub enum ClientError {
    #[error(transparent)]
    Tls(#[from] crate::net::TlsError),
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error(transparent)]
    Url(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Proxy(#[from] ProxyError),
}

#[derive(Debug, Error)]
pub enum ForwardError {
    #[error("upstream is unreachable: {0}")]
    Unreachable(String),
    #[error("upstream did not answer within {0} ms")]
    Timeout(u64),
    #[error("cannot build the upstream request: {0}")]
    Request(String),
    /// A getToken request that could not be rebuilt for the upstream, in the builder's words.
    #[error("{0}")]
    Rebuild(String),
    /// icegate's own credential for the upstream could not be had.
    #[error("{0}")]
    Credential(#[from] AuthError),
}

/// The upstream catalog, a pool of connections to it, and the credential it gets.
#[derive(Clone, Debug)]
pub struct Upstream {
    client: HttpsClient<Body>,
    url: UpstreamUrl,
    response_timeout_ms: u64,
    auth: Arc<ServiceAuth>,
    /// `[upstream] proxy`: what each request needs for it, and the name failures give.
    proxy: Option<Arc<UpstreamProxy>>,
}

impl Upstream {
    pub fn new(url: UpstreamUrl, config: &UpstreamConfig) -> Result<Self, ClientError> {
        Self::with_clock(url, config, Clock::real())
    }

    /// As [`Upstream::new`], the token's expiry and the signing time read from `clock`.
    pub fn with_clock(url: UpstreamUrl, config: &UpstreamConfig, clock: Clock) -> Result<Self, ClientError> {
        Self::with_metrics(url, config, clock, crate::ops::metrics::UpstreamAuthMetrics::default())
    }

    /// As [`Upstream::with_clock`], its credential's metrics kept in `metrics`.
    pub fn with_metrics(
        url: UpstreamUrl,
        config: &UpstreamConfig,
        clock: Clock,
        metrics: crate::ops::metrics::UpstreamAuthMetrics,
    ) -> Result<Self, ClientError> {
        let auth = Arc::new(ServiceAuth::from_config(config, clock, metrics)?);
        let tls = crate::net::client_config(config.ca_file.as_deref())?;
        let settings = ClientSettings {
            connect_timeout: Duration::from_millis(config.connect_timeout_ms),
            nodelay: true,
            pool_idle: Some(Duration::from_secs(60)),
        };
        let proxy = config.proxy.as_ref().map(UpstreamProxy::new).transpose()?.map(Arc::new);
        if let Some(proxy) = &proxy {
            let (upstream, proxy) = (url.authority.as_str(), proxy.shown());
            tracing::info!(upstream, proxy, "forwarded requests go through the upstream's proxy");
        }
        let client = https_client(tls, settings, proxy.as_deref());
        Ok(Self { client, url, response_timeout_ms: config.response_timeout_ms, auth, proxy })
    }

    /// The credential this upstream gets.
    pub fn auth(&self) -> &ServiceAuth {
        &self.auth
    }

    /// The upstream URI for a canonical path (after icegate's base path) and query; the scheme
    /// and authority were parsed once, with the configuration.
    pub fn uri(&self, path: &str, query: &str) -> Result<http::Uri, ForwardError> {
        let base = &self.url.base_path;
        let mut target = String::with_capacity(base.len() + path.len() + query.len() + 1);
        target.push_str(base);
        target.push_str(path);
        if !query.is_empty() {
            target.push('?');
            target.push_str(query);
        }
        let mut parts = http::uri::Parts::default();
        parts.scheme = Some(self.url.scheme.clone());
        parts.authority = Some(self.url.authority.clone());
        parts.path_and_query = Some(
            http::uri::PathAndQuery::from_maybe_shared(Bytes::from(target))
                .map_err(|e| ForwardError::Request(e.to_string()))?,
        );
        http::Uri::from_parts(parts).map_err(|e| ForwardError::Request(e.to_string()))
    }

    pub fn authority(&self) -> &str {
        self.url.authority.as_str()
    }

    /// The catalog URI its own clients use: scheme, authority and base path.
    pub fn catalog_uri(&self) -> String {
        format!("{}://{}{}", self.url.scheme, self.url.authority, self.url.base_path)
    }

    /// Sends `request` with the upstream's credential and waits for the response head within
    /// the response timeout. With an OAuth2 token, a 401 is answered by one retry with a token
    /// fetched after the refused one, when the body is held; a streamed body cannot be sent
    /// again, so its 401 goes to the caller and the next request gets a new token.
    pub async fn send(&self, request: http::Request<Outgoing>) -> Result<http::Response<Incoming>, ForwardError> {
        let (mut parts, body) = request.into_parts();
        match &*self.auth {
            ServiceAuth::Passthrough => {}
            ServiceAuth::Static(value) => {
                parts.headers.insert(http::header::AUTHORIZATION, value.current());
            }
            ServiceAuth::SigV4(signer) => {
                let Outgoing::Held(bytes) = &body else { return Err(AuthError::Streamed.into()) };
                signer.sign(&mut parts, bytes).await?;
            }
            ServiceAuth::OAuth2(source) => {
                let token = source.token().await?;
                parts.headers.insert(http::header::AUTHORIZATION, token.header.clone());
                let Outgoing::Held(bytes) = body else {
                    let response = self.exchange(http::Request::from_parts(parts, body.into_body())).await?;
                    if response.status() == http::StatusCode::UNAUTHORIZED {
                        source.forget(token.generation);
                    }
                    return Ok(response);
                };
                let again = copy(&parts);
                let first = self.exchange(http::Request::from_parts(parts, Outgoing::Held(bytes.clone()).into_body()));
                let first = first.await?;
                if first.status() != http::StatusCode::UNAUTHORIZED {
                    return Ok(first);
                }
                drop(first);
                let fresh = source.token_after(token.generation).await?;
                source.metrics.retried();
                tracing::debug!(
                    generation = fresh.generation,
                    "the upstream refused its token; sending again with a new one"
                );
                let mut again = again;
                again.headers_mut().insert(http::header::AUTHORIZATION, fresh.header.clone());
                *again.body_mut() = Outgoing::Held(bytes).into_body();
                return self.exchange(again).await;
            }
        }
        self.exchange(http::Request::from_parts(parts, body.into_body())).await
    }

    /// Sends `request` as it is, without the upstream's credential: getToken, a client's
    /// exchange of its own credential.
    pub async fn send_as_is(&self, request: http::Request<Body>) -> Result<http::Response<Incoming>, ForwardError> {
        self.exchange(request).await
    }

    /// One call site of the client: the direct path compiles as it did before `[upstream] proxy`.
    async fn exchange(&self, mut request: http::Request<Body>) -> Result<http::Response<Incoming>, ForwardError> {
        if let Some(proxy) = &self.proxy {
            proxy.prepare(&mut request);
        }
        let timeout = Duration::from_millis(self.response_timeout_ms);
        match tokio::time::timeout(timeout, self.client.request(request)).await {
            Err(_) => Err(ForwardError::Timeout(self.response_timeout_ms)),
            Ok(Err(e)) => {
                Err(ForwardError::Unreachable(format!("{}{}", crate::core::text::error_chain(&e), self.through())))
            }
            // only a proxy reading the request answers 407: not the catalog's answer
            Ok(Ok(response))
                if response.status() == http::StatusCode::PROXY_AUTHENTICATION_REQUIRED && self.proxy.is_some() =>
            {
                Err(ForwardError::Unreachable(format!(
                    "the proxy refused to forward the request: 407{}",
                    self.through()
                )))
            }
            Ok(Ok(response)) => Ok(response),
        }
    }

    /// ` (through the proxy `…`)` with `[upstream] proxy`, else nothing: a failure's tail.
    fn through(&self) -> String {
        self.proxy.as_ref().map(|p| format!(" (through the proxy `{}`)", p.shown())).unwrap_or_default()
    }
}

/// A request with the head of `parts` and no body yet.
fn copy(parts: &http::request::Parts) -> http::Request<Body> {
    let mut request = http::Request::new(empty());
    *request.method_mut() = parts.method.clone();
    *request.uri_mut() = parts.uri.clone();
    *request.version_mut() = parts.version;
    *request.headers_mut() = parts.headers.clone();
    request
}

/// A rewritten credential-bearing response, written as its chunks (most of them slices of the
/// upstream's buffer).
#[derive(Debug)]
pub struct ChunkBody(pub crate::core::credentials::response::Chunks);

impl hyper::body::Body for ChunkBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        std::task::Poll::Ready(self.get_mut().0.pop_front().map(|b| Ok(hyper::body::Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.part_count() == 0
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::SizeHint::with_exact(self.0.len() as u64)
    }
}
