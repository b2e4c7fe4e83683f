//! TLS on the listener, and mTLS with a client CA: a test CA made at test time with rcgen.

use crate::fake_upstream::{FakeUpstream, Reply, basic, gate};
use crate::support::TempDir;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use icegate::config::ListenerTls;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::ServerName;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;

const POLICY: &str = "version: 1\nmetalake: lake\ndefault_catalog: prod\nusers: [{ name: alice }]\n";

pub(crate) struct Ca {
    pub(crate) pem: String,
    issuer: Issuer<'static, KeyPair>,
}

pub(crate) fn ca(name: &str) -> Ca {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let pem = params.self_signed(&key).unwrap().pem();
    Ca { pem, issuer: Issuer::new(params, key) }
}

/// A leaf certificate and its key, as PEM.
fn leaf(ca: &Ca, san: &str) -> (String, String) {
    leaf_with(ca, san, |_| {})
}

fn leaf_with(ca: &Ca, san: &str, tweak: impl FnOnce(&mut CertificateParams)) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec![san.to_owned()]).unwrap();
    params.distinguished_name.push(DnType::CommonName, san);
    tweak(&mut params);
    (params.signed_by(&key, &ca.issuer).unwrap().pem(), key.serialize_pem())
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// GET /v1/config over TLS; `Err` when the handshake or the request fails.
async fn get_config(addr: std::net::SocketAddr, ca_pem: &str, client: Option<(String, String)>) -> Result<u16, String> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let config = match client {
        Some((cert, key)) => {
            let certs = CertificateDer::pem_slice_iter(cert.as_bytes()).map(Result::unwrap).collect();
            builder.with_client_auth_cert(certs, PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap()).unwrap()
        }
        None => builder.with_no_client_auth(),
    };
    let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(TokioIo::new(tls)).await.map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let request = http::Request::get("/v1/config")
        .header("host", "localhost")
        .header("authorization", basic("alice"))
        .body(Empty::<Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.map_err(|e| format!("request: {e}"))?;
    let status = response.status().as_u16();
    let _ = response.into_body().collect().await;
    Ok(status)
}

struct Setup {
    _dir: TempDir,
    _upstream: FakeUpstream,
    gate: crate::fake_upstream::Gate,
    ca: Ca,
}

async fn setup(mtls: bool) -> Setup {
    setup_with(mtls, |_| {}).await
}

async fn setup_with(mtls: bool, tweak: impl FnOnce(&mut icegate::config::Config)) -> Setup {
    let dir = TempDir::new("tls");
    let ca = ca("icegate test CA");
    let (cert, key) = leaf(&ca, "localhost");
    let cert_file = dir.write("server.pem", &cert);
    let key_file = dir.write("server.key", &key);
    let client_ca_file = mtls.then(|| dir.write("ca.pem", &ca.pem));
    let upstream =
        FakeUpstream::start(|_| Reply::json(200, serde_json::json!({"defaults": {}, "overrides": {}}))).await;
    let gate = gate(&upstream.url(""), POLICY, |c| {
        c.tls = Some(ListenerTls { cert_file, key_file, client_ca_file });
        tweak(c);
    })
    .await;
    Setup { _dir: dir, _upstream: upstream, gate, ca }
}

#[tokio::test]
async fn the_listener_serves_https() {
    let s = setup(false).await;
    assert_eq!(get_config(s.gate.addr, &s.ca.pem, None).await, Ok(200));
    // a client that does not trust the server's CA refuses the handshake
    let other = ca("other CA");
    assert!(get_config(s.gate.addr, &other.pem, None).await.is_err());
}

#[tokio::test]
async fn mtls_requires_a_client_certificate_from_the_client_ca() {
    let s = setup(true).await;
    assert!(get_config(s.gate.addr, &s.ca.pem, None).await.is_err(), "no client certificate");
    let good = leaf(&s.ca, "spark-job");
    assert_eq!(get_config(s.gate.addr, &s.ca.pem, Some(good)).await, Ok(200));
    let untrusted = leaf(&ca("rogue CA"), "spark-job");
    assert!(get_config(s.gate.addr, &s.ca.pem, Some(untrusted)).await.is_err(), "a certificate from another CA");
    let expired = leaf_with(&s.ca, "spark-job", |p| {
        p.not_before = rcgen::date_time_ymd(2020, 1, 1);
        p.not_after = rcgen::date_time_ymd(2021, 1, 1);
    });
    assert!(get_config(s.gate.addr, &s.ca.pem, Some(expired)).await.is_err(), "an expired certificate");
}

fn with_uri(uri: &'static str) -> impl FnOnce(&mut CertificateParams) {
    move |p| p.subject_alt_names.push(rcgen::SanType::URI(rcgen::string::Ia5String::try_from(uri).unwrap()))
}

#[tokio::test]
async fn the_mtls_provider_maps_a_spiffe_id_to_the_user() {
    let s = setup_with(true, |c| {
        c.identity.providers = vec![icegate::config::Provider::Mtls];
        c.identity.mtls.san_uri_prefix = "spiffe://test.example/ns/jobs/sa/".into();
    })
    .await;
    let alice = leaf_with(&s.ca, "job", with_uri("spiffe://test.example/ns/jobs/sa/alice"));
    assert_eq!(get_config(s.gate.addr, &s.ca.pem, Some(alice)).await, Ok(200));
    // a certificate outside the prefix names no user: 401, never a fall-through
    let stranger = leaf_with(&s.ca, "job", with_uri("spiffe://other.example/sa/alice"));
    assert_eq!(get_config(s.gate.addr, &s.ca.pem, Some(stranger)).await, Ok(401));
    // a listed prefix but an unknown user: the user check refuses it
    let bob = leaf_with(&s.ca, "job", with_uri("spiffe://test.example/ns/jobs/sa/bob"));
    assert_eq!(get_config(s.gate.addr, &s.ca.pem, Some(bob)).await, Ok(403));
}

#[tokio::test]
async fn the_mtls_provider_can_use_the_subject_cn() {
    let s = setup_with(true, |c| {
        c.identity.providers = vec![icegate::config::Provider::Mtls];
        c.identity.mtls.source = icegate::config::MtlsSource::Cn;
    })
    .await;
    assert_eq!(get_config(s.gate.addr, &s.ca.pem, Some(leaf(&s.ca, "alice"))).await, Ok(200));
}

/// A minimal HTTPS upstream for `localhost`, answering getConfig; counts its requests.
pub(crate) async fn https_upstream(ca: &Ca) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let (cert, key) = leaf(ca, "localhost");
    let certs = CertificateDer::pem_slice_iter(cert.as_bytes()).map(Result::unwrap).collect();
    let config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap())
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let counter = counter.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let service = hyper::service::service_fn(move |_req| {
                    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    async {
                        Ok::<_, std::convert::Infallible>(http::Response::new(http_body_util::Full::new(
                            Bytes::from_static(br#"{"defaults":{},"overrides":{}}"#),
                        )))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tls), service).await;
            });
        }
    });
    (format!("https://localhost:{port}"), hits)
}

#[tokio::test]
async fn an_https_upstream_is_verified_against_the_configured_ca() {
    let dir = TempDir::new("https-upstream");
    let ca = ca("upstream CA");
    let (url, hits) = https_upstream(&ca).await;
    let ca_file = dir.write("upstream-ca.pem", &ca.pem);
    let trusted = gate(&url, POLICY, |c| c.upstream.ca_file = Some(ca_file)).await;
    let a =
        crate::fake_upstream::send(trusted.addr, "GET", "/v1/config", &[("authorization", &basic("alice"))], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    // without the CA the upstream's certificate is not trusted: 502, nothing served
    let untrusting = gate(&url, POLICY, |_| {}).await;
    let a =
        crate::fake_upstream::send(untrusting.addr, "GET", "/v1/config", &[("authorization", &basic("alice"))], b"")
            .await;
    a.assert_error(502, "BadGatewayException");
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
}
