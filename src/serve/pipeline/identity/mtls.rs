//! `mtls`: the client certificate the TLS listener verified against its client CA names the
//! user — a SAN URI (e.g. a SPIFFE ID) after a configured prefix, or the subject CN.

use super::error::{IdentityError, Recognized};
use super::peer::Peer;
use crate::config::{MtlsIdentity, MtlsSource};
use crate::core::roles::Principal;
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer, X509Certificate};

pub(super) fn recognize(config: &MtlsIdentity, peer: &Peer) -> Result<Recognized, IdentityError> {
    let Some(der) = peer.client_cert.as_deref() else { return Ok(Recognized::No) };
    let invalid = |why: &str| IdentityError::Invalid(format!("client certificate {why}"));
    let (_, cert) = X509Certificate::from_der(der).map_err(|_| invalid("cannot be read"))?;
    let user = match config.source {
        MtlsSource::Cn => cert
            .subject()
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| invalid("has no subject CN"))?,
        MtlsSource::SanUri => {
            let sans = cert.subject_alternative_name().map_err(|_| invalid("has an unreadable SAN"))?;
            let uris = sans.iter().flat_map(|s| s.value.general_names.iter()).filter_map(|n| match n {
                GeneralName::URI(uri) => Some(*uri),
                _ => None,
            });
            let mapped = uris.filter_map(|u| u.strip_prefix(config.san_uri_prefix.as_str())).find(|u| !u.is_empty());
            mapped
                .map(str::to_owned)
                .ok_or_else(|| invalid(&format!("has no SAN URI under `{}`", config.san_uri_prefix.escape_debug())))?
        }
    };
    if user.is_empty() || user.chars().any(char::is_control) || user.contains('/') {
        return Err(invalid("maps to no valid user name"));
    }
    Ok(Recognized::Yes(Principal { user, ..Principal::default() }))
}
