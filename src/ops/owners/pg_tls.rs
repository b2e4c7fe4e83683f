//! TLS to the PostgreSQL ownership store: libpq's `sslmode` and `sslrootcert`, read from the
//! connection string (tokio-postgres's own parser knows neither `verify-full` nor
//! `sslrootcert`), and the connection made through rustls.
//!
//! Every TLS mode verifies the server's certificate: `require` and `verify-ca` its chain (to
//! `sslrootcert`, else the system's roots), `verify-full` its host name too. libpq's `require`
//! verifies nothing unless a root certificate is there; a store whose records grant access is
//! not worth a connection an attacker in the middle could take over. `disable`, `allow`,
//! `prefer` and no `sslmode` connect without TLS (libpq's `prefer` would try TLS without
//! verifying it).

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::Socket;
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    /// `disable`, `allow`, `prefer` or none.
    Off,
    /// `require` or `verify-ca`: the chain is verified.
    VerifyCa,
    /// `verify-full`: the chain and the host name.
    VerifyFull,
}

/// The TLS settings of a connection string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub mode: SslMode,
    pub root_cert: Option<PathBuf>,
}

/// Splits a connection string (URL or `key=value` form) into what tokio-postgres parses and
/// the TLS settings.
pub fn split(url: &str) -> Result<(String, Settings), String> {
    let (rest, pairs) = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        split_url(url)
    } else {
        split_key_values(url)?
    };
    let mut settings = Settings { mode: SslMode::Off, root_cert: None };
    for (key, value) in pairs {
        match key.as_str() {
            "sslmode" => {
                settings.mode = match value.as_str() {
                    "disable" | "allow" | "prefer" => SslMode::Off,
                    "require" | "verify-ca" => SslMode::VerifyCa,
                    "verify-full" => SslMode::VerifyFull,
                    other => return Err(format!("unknown `sslmode` `{other}`")),
                }
            }
            _ => settings.root_cert = Some(PathBuf::from(value)),
        }
    }
    Ok((rest, settings))
}

fn ours(key: &str) -> bool {
    key == "sslmode" || key == "sslrootcert"
}

/// `postgresql://...?a=b&sslmode=...`: the query pairs that are ours, decoded, taken out.
fn split_url(url: &str) -> (String, Vec<(String, String)>) {
    let Some((head, query)) = url.split_once('?') else { return (url.to_owned(), Vec::new()) };
    let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
    let (mut kept, mut taken) = (Vec::new(), Vec::new());
    for part in query.split('&') {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        if ours(&decode(k)) {
            taken.push((decode(k), decode(v)));
        } else {
            kept.push(part);
        }
    }
    let rest = if kept.is_empty() { head.to_owned() } else { format!("{head}?{}", kept.join("&")) };
    (rest, taken)
}

/// `host=h sslmode='verify-full'`: libpq's grammar (spaces around `=`, single quotes, backslash
/// escapes); the pairs that are ours taken out, the rest kept as written.
fn split_key_values(text: &str) -> Result<(String, Vec<(String, String)>), String> {
    let bytes = text.as_bytes();
    let (mut rest, mut taken) = (String::new(), Vec::new());
    // past the bytes from `i` on that `more` accepts
    let skip = |mut i: usize, more: &dyn Fn(u8) -> bool| {
        while bytes.get(i).is_some_and(|b| more(*b)) {
            i += 1;
        }
        i
    };
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let key_start = skip(i, &|b| b.is_ascii_whitespace());
        i = skip(key_start, &|b| b != b'=' && !b.is_ascii_whitespace());
        // whitespace and `=` are ASCII: `key_start` and `i` are character boundaries
        let key = text.get(key_start..i).unwrap_or_default();
        i = skip(i, &|b| b.is_ascii_whitespace());
        if key.is_empty() {
            break;
        }
        if bytes.get(i) != Some(&b'=') {
            return Err(format!("expected `=` after `{key}` in the connection string"));
        }
        i = skip(i + 1, &|b| b.is_ascii_whitespace());
        let mut value = String::new();
        let quoted = bytes.get(i) == Some(&b'\'');
        i += usize::from(quoted);
        let mut chars = text.get(i..).unwrap_or_default().char_indices();
        let mut end = text.len() - i;
        let mut closed = !quoted;
        while let Some((at, c)) = chars.next() {
            match c {
                '\\' => value.extend(chars.next().map(|(_, c)| c)),
                '\'' if quoted => {
                    end = at + 1;
                    closed = true;
                    break;
                }
                c if !quoted && c.is_ascii_whitespace() => {
                    end = at;
                    break;
                }
                c => value.push(c),
            }
        }
        if !closed {
            return Err(format!("unterminated quoted value of `{key}` in the connection string"));
        }
        i += end;
        if ours(key) {
            taken.push((key.to_owned(), value));
        } else {
            rest.push_str(text.get(start..i).unwrap_or_default());
        }
    }
    Ok((rest.trim().to_owned(), taken))
}

/// The rustls connector of `settings`; `None` when TLS is off.
pub fn connector(settings: &Settings) -> Result<MakeRustls, crate::net::TlsError> {
    if settings.mode == SslMode::Off {
        return Ok(MakeRustls(None));
    }
    let roots = match &settings.root_cert {
        Some(path) => crate::net::roots(path)?,
        None => crate::net::system_roots(),
    };
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), crate::net::provider())
        .build()
        .map_err(|e| crate::net::TlsError::Config(e.to_string()))?;
    let builder = crate::net::client_builder()?.dangerous();
    let config = match settings.mode {
        SslMode::VerifyFull => builder.with_custom_certificate_verifier(webpki),
        _ => builder.with_custom_certificate_verifier(Arc::new(ChainOnly(webpki))),
    };
    Ok(MakeRustls(Some(Arc::new(config.with_no_client_auth()))))
}

/// `require` and `verify-ca`: the chain must verify; the host name need not match.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // webpki checks the chain before the name: a name error means the chain verified.
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// tokio-postgres's connector over rustls (`None`: TLS is off, and tokio-postgres is told
/// `sslmode=disable`, so it never asks for a TLS connection).
#[derive(Clone, Debug)]
pub struct MakeRustls(Option<Arc<rustls::ClientConfig>>);

impl MakeTlsConnect<Socket> for MakeRustls {
    type Stream = RustlsStream;
    type TlsConnect = RustlsConnect;
    type Error = std::io::Error;

    fn make_tls_connect(&mut self, domain: &str) -> Result<RustlsConnect, std::io::Error> {
        let name = ServerName::try_from(domain.to_owned()).map_err(std::io::Error::other)?;
        Ok(RustlsConnect { config: self.0.clone(), name })
    }
}

#[derive(Debug)]
pub struct RustlsConnect {
    config: Option<Arc<rustls::ClientConfig>>,
    name: ServerName<'static>,
}

impl TlsConnect<Socket> for RustlsConnect {
    type Stream = RustlsStream;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<RustlsStream>> + Send>>;

    fn connect(self, stream: Socket) -> Self::Future {
        Box::pin(async move {
            let config = self.config.ok_or_else(|| std::io::Error::other("TLS is off for the ownership store"))?;
            let tls = tokio_rustls::TlsConnector::from(config).connect(self.name, stream).await?;
            Ok(RustlsStream(Box::new(tls)))
        })
    }
}

#[derive(Debug)]
pub struct RustlsStream(Box<tokio_rustls::client::TlsStream<Socket>>);

impl TlsStream for RustlsStream {
    /// No channel binding: the certificate is verified instead (SCRAM without `-PLUS`).
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}

impl AsyncRead for RustlsStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for RustlsStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut *self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.0).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_settings_are_taken_out_of_both_forms() {
        let (rest, s) =
            split("host=db port=5432 sslmode = 'verify-full' password='a b\\'c' sslrootcert=/etc/ca.crt dbname=x")
                .unwrap();
        assert_eq!(rest, "host=db port=5432 password='a b\\'c' dbname=x");
        assert_eq!(s, Settings { mode: SslMode::VerifyFull, root_cert: Some("/etc/ca.crt".into()) });
        let (rest, s) =
            split("postgresql://u@db:5432/x?connect_timeout=2&sslmode=require&sslrootcert=%2Fca.pem").unwrap();
        assert_eq!(rest, "postgresql://u@db:5432/x?connect_timeout=2");
        assert_eq!(s, Settings { mode: SslMode::VerifyCa, root_cert: Some("/ca.pem".into()) });
        assert_eq!(
            split("postgresql://db/x?sslmode=prefer").unwrap(),
            ("postgresql://db/x".into(), Settings { mode: SslMode::Off, root_cert: None })
        );
        assert_eq!(split("host=db").unwrap().1.mode, SslMode::Off);
        assert!(split("host=db sslmode=verify-everything").unwrap_err().contains("`verify-everything`"));
        assert!(split("host='db").is_err());
        assert!(split("host").is_err());
    }
}
