//! How the forwarded requests reach their catalog: directly, or through the HTTP proxy of
//! `[upstream] proxy` — an `https://` upstream through a CONNECT tunnel (TLS end to end, the
//! proxy's credentials on the CONNECT only), an `http://` one by absolute-form requests to the
//! proxy (its credentials on each). The choice is made once, when the upstream's client is
//! built; a direct connection costs what it did before. The environment's proxy variables are
//! never read here: they are the side calls' (`net::outbound`).

use crate::config::ProxyUrl;
use crate::config::outbound::redact;
use base64::Engine;
use http::{HeaderValue, Uri};
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use thiserror::Error;
use tokio::net::TcpStream;
use tower_service::Service;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, Error)]
pub enum ProxyError {
    #[error("the upstream proxy `{0}` is not an `http://host:port` url")]
    Url(String),
    #[error("the credentials of the upstream proxy `{0}` cannot be sent in a header")]
    Credentials(String),
}

/// `[upstream] proxy`, parsed once: where to dial, and the `Proxy-Authorization` its
/// credentials make. Neither `Debug` nor any message shows the credentials.
#[derive(Clone)]
pub struct UpstreamProxy {
    /// `http://host:port`, without credentials.
    uri: Uri,
    auth: Option<HeaderValue>,
}

impl std::fmt::Debug for UpstreamProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamProxy").field("uri", &self.shown()).finish_non_exhaustive()
    }
}

impl UpstreamProxy {
    pub fn new(url: &ProxyUrl) -> Result<Self, ProxyError> {
        let shown = redact(&url.0);
        let bad = || ProxyError::Url(shown.clone());
        let parsed: Uri = url.0.parse().map_err(|_| bad())?;
        if parsed.scheme_str() != Some("http") {
            return Err(bad());
        }
        let authority = parsed.authority().ok_or_else(bad)?.as_str();
        let (userinfo, host) = match authority.rsplit_once('@') {
            Some((userinfo, host)) => (Some(userinfo), host),
            None => (None, authority),
        };
        let uri = Uri::builder().scheme("http").authority(host).path_and_query("/").build().map_err(|_| bad())?;
        let auth = userinfo.map(|u| basic(u).ok_or_else(|| ProxyError::Credentials(shown.clone()))).transpose()?;
        Ok(Self { uri, auth })
    }

    /// The proxy as it may be shown: `http://host:port`.
    pub fn shown(&self) -> String {
        redact(&self.uri.to_string())
    }

    /// What a request sent through the proxy needs: its credentials when the proxy reads the
    /// request (`http://`); an `https://` request goes in a tunnel, where the upstream would
    /// read them.
    pub fn prepare<B>(&self, request: &mut http::Request<B>) {
        if let Some(auth) = &self.auth
            && request.uri().scheme() == Some(&http::uri::Scheme::HTTP)
        {
            request.headers_mut().insert(http::header::PROXY_AUTHORIZATION, auth.clone());
        }
    }
}

/// `Basic` of `user[:password]`, percent-decoded as curl and reqwest read a url's userinfo.
fn basic(userinfo: &str) -> Option<HeaderValue> {
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8().map(|s| s.into_owned()).ok();
    let pair = format!("{}:{}", decode(user)?, decode(password)?);
    let mut value =
        HeaderValue::try_from(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// How the upstream client opens a connection (the inner connector of its TLS connector).
/// hyper's client clones its connector for every request, pooled connection or not, so a route
/// is one pointer besides the direct connector's, and cloning it allocates nothing.
#[derive(Clone, Debug)]
pub enum Route {
    Direct(HttpConnector),
    Proxied(Arc<Proxied>),
}

#[derive(Debug)]
pub struct Proxied {
    proxy: Uri,
    http: HttpConnector,
    tunnel: Tunnel<HttpConnector>,
}

impl Route {
    pub fn new(http: HttpConnector, proxy: Option<&UpstreamProxy>) -> Self {
        let Some(proxy) = proxy else { return Self::Direct(http) };
        let mut tunnel = Tunnel::new(proxy.uri.clone(), http.clone());
        if let Some(auth) = &proxy.auth {
            tunnel = tunnel.with_auth(auth.clone());
        }
        Self::Proxied(Arc::new(Proxied { proxy: proxy.uri.clone(), http, tunnel }))
    }
}

impl Service<Uri> for Route {
    type Response = Conn;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Conn, BoxError>> + Send>>;

    /// `HttpConnector` and `Tunnel` over it are always ready.
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        match self {
            Self::Direct(http) => http.poll_ready(cx).map_err(Into::into),
            Self::Proxied(_) => Poll::Ready(Ok(())),
        }
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        match self {
            Self::Direct(http) => {
                let connecting = http.call(dst);
                Box::pin(async move { Ok(Conn { io: connecting.await?, proxied: false }) })
            }
            Self::Proxied(route) if dst.scheme() == Some(&http::uri::Scheme::HTTPS) => {
                let connecting = route.tunnel.clone().call(dst);
                Box::pin(async move { Ok(Conn { io: connecting.await?, proxied: false }) })
            }
            Self::Proxied(route) => {
                let connecting = route.http.clone().call(route.proxy.clone());
                Box::pin(async move { Ok(Conn { io: connecting.await?, proxied: true }) })
            }
        }
    }
}

/// A connection of the upstream client. `proxied`: to a proxy that reads each request, so hyper
/// sends them in absolute form (`GET http://catalog:8181/v1/config`).
#[derive(Debug)]
pub struct Conn {
    io: TokioIo<TcpStream>,
    proxied: bool,
}

impl Connection for Conn {
    fn connected(&self) -> Connected {
        self.io.connected().proxy(self.proxied)
    }
}

impl hyper::rt::Read for Conn {
    #[inline]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Conn {
    #[inline]
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    #[inline]
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    #[inline]
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    #[inline]
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    #[inline]
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_become_a_sensitive_header_and_are_never_shown() {
        let proxy = UpstreamProxy::new(&ProxyUrl("http://ice%40gate:s3cret@proxy.internal:3128".into())).unwrap();
        assert_eq!(proxy.shown(), "http://proxy.internal:3128");
        assert!(!format!("{proxy:?}").contains("s3cret"));
        let auth = proxy.auth.as_ref().unwrap();
        // base64("ice@gate:s3cret")
        assert_eq!(auth.to_str().unwrap(), "Basic aWNlQGdhdGU6czNjcmV0");
        assert!(auth.is_sensitive());
        let mut plain = http::Request::get("http://catalog:8181/v1/config").body(()).unwrap();
        proxy.prepare(&mut plain);
        assert_eq!(plain.headers().get("proxy-authorization"), Some(auth));
        // inside a tunnel the upstream would read it
        let mut tls = http::Request::get("https://catalog/v1/config").body(()).unwrap();
        proxy.prepare(&mut tls);
        assert!(tls.headers().get("proxy-authorization").is_none());
        let bare = UpstreamProxy::new(&ProxyUrl("http://proxy.internal:3128".into())).unwrap();
        assert!(bare.auth.is_none());
        let e = UpstreamProxy::new(&ProxyUrl("https://u:s3cret@p:1".into())).unwrap_err().to_string();
        assert!(e.contains("`https://p:1`") && !e.contains("s3cret"), "{e}");
    }
}
