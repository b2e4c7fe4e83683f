//! The upstream client: pooled keep-alive HTTP/1.1 to the catalog, with the connect and
//! response timeouts that are always on; failures become 502 and 504 (docs/design.md §7).

use crate::config::{Upstream as UpstreamConfig, UpstreamUrl};
use crate::net::{ClientSettings, HttpsClient, https_client};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
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
}

/// The upstream catalog and a pool of connections to it.
#[derive(Clone, Debug)]
pub struct Upstream {
    client: HttpsClient<Body>,
    url: UpstreamUrl,
    response_timeout_ms: u64,
}

impl Upstream {
    pub fn new(url: UpstreamUrl, config: &UpstreamConfig) -> Result<Self, crate::net::TlsError> {
        let tls = crate::net::client_config(config.ca_file.as_deref())?;
        let settings = ClientSettings {
            connect_timeout: Duration::from_millis(config.connect_timeout_ms),
            nodelay: true,
            pool_idle: Some(Duration::from_secs(60)),
        };
        let client = https_client(tls, settings);
        Ok(Self { client, url, response_timeout_ms: config.response_timeout_ms })
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

    /// Sends `request` and waits for the response head within the response timeout.
    pub async fn send(&self, request: http::Request<Body>) -> Result<http::Response<Incoming>, ForwardError> {
        let timeout = Duration::from_millis(self.response_timeout_ms);
        match tokio::time::timeout(timeout, self.client.request(request)).await {
            Err(_) => Err(ForwardError::Timeout(self.response_timeout_ms)),
            Ok(Err(e)) => Err(ForwardError::Unreachable(crate::core::text::error_chain(&e))),
            Ok(Ok(response)) => Ok(response),
        }
    }
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
