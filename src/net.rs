//! The network pieces every layer that talks HTTP shares: the listener's TLS config (certificate
//! and key files, and a client CA for mTLS), the client roots (the system's, plus a configured
//! CA), all with rustls, and the builder of the pooled hyper clients of the forwarded requests
//! (to the catalog, through `upstream_proxy`'s route); the side calls' client is `outbound`'s,
//! and `oauth2` the client-credentials token request they make.

pub mod oauth2;
pub mod outbound;
pub mod upstream_proxy;

use rustls::RootCertStore;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TlsError {
    #[error("cannot read certificates from `{path}`: {message}")]
    Certs { path: PathBuf, message: String },
    #[error("cannot read a private key from `{path}`: {message}")]
    Key { path: PathBuf, message: String },
    #[error("invalid TLS setup: {0}")]
    Config(String),
}

pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| TlsError::Certs { path: path.to_owned(), message: e.to_string() })?;
    if certs.is_empty() {
        return Err(TlsError::Certs { path: path.to_owned(), message: "no certificate in the file".into() });
    }
    Ok(certs)
}

fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| TlsError::Key { path: path.to_owned(), message: e.to_string() })
}

/// The certificates of a PEM file, as trust anchors.
pub fn roots(path: &Path) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    for cert in load_certs(path)? {
        roots.add(cert).map_err(|e| TlsError::Certs { path: path.to_owned(), message: e.to_string() })?;
    }
    Ok(roots)
}

/// The listener's TLS config; ALPN offers HTTP/2 and HTTP/1.1.
pub fn server_config(tls: &crate::config::ListenerTls) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = match &tls.client_ca_file {
        Some(ca) => {
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots(ca)?), provider())
                .build()
                .map_err(|e| TlsError::Config(e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(load_certs(&tls.cert_file)?, load_key(&tls.key_file)?)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The upstream client's TLS config: the system's roots, plus `ca_file` when set.
pub fn client_config(ca_file: Option<&Path>) -> Result<rustls::ClientConfig, TlsError> {
    let mut roots = system_roots();
    if let Some(ca) = ca_file {
        for cert in load_certs(ca)? {
            roots.add(cert).map_err(|e| TlsError::Certs { path: ca.to_owned(), message: e.to_string() })?;
        }
    }
    Ok(client_builder()?.with_root_certificates(roots).with_no_client_auth())
}

/// The system's trusted roots (those that parse).
pub fn system_roots() -> RootCertStore {
    let mut roots = RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    roots
}

/// A client config builder with this crate's provider and safe protocol versions.
pub fn client_builder() -> Result<rustls::ConfigBuilder<rustls::ClientConfig, rustls::WantsVerifier>, TlsError> {
    rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))
}
/// An outgoing HTTP/1.1 client for `http://` and `https://` URLs.
pub type HttpsClient<B> = hyper_util::client::legacy::Client<hyper_rustls::HttpsConnector<upstream_proxy::Route>, B>;

/// How an outgoing client connects.
#[derive(Clone, Copy, Debug)]
pub struct ClientSettings {
    pub connect_timeout: std::time::Duration,
    /// `TCP_NODELAY` on its connections.
    pub nodelay: bool,
    /// How long an idle pooled connection is kept; `None`: hyper's default.
    pub pool_idle: Option<std::time::Duration>,
}

/// A pooled client verifying servers against `tls`'s roots, connecting through `proxy` when set.
pub fn https_client<B>(
    tls: rustls::ClientConfig,
    settings: ClientSettings,
    proxy: Option<&upstream_proxy::UpstreamProxy>,
) -> HttpsClient<B>
where
    B: hyper::body::Body + Send,
    B::Data: Send,
{
    let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
    http.set_connect_timeout(Some(settings.connect_timeout));
    http.set_nodelay(settings.nodelay);
    http.enforce_http(false);
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .wrap_connector(upstream_proxy::Route::new(http, proxy));
    let mut builder = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new());
    if let Some(idle) = settings.pool_idle {
        builder.pool_idle_timeout(idle);
    }
    builder.build(connector)
}
