//! `simple`, Gravitino's default: `Authorization: Basic base64(user:anything)`; the user is the
//! text before the first `:`, and no password is checked (trusted networks only).

use super::error::{IdentityError, Recognized};
use crate::core::roles::Principal;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::HeaderMap;

/// The start-up warning when `simple` serves beyond this machine (docs/design.md §6: "for trusted
/// networks and development only"); `None` on a loopback listener or without `simple`.
pub fn network_warning(config: &crate::config::Config) -> Option<String> {
    let simple = config.identity.providers.contains(&crate::config::Provider::Simple);
    (simple && !config.listen.ip().is_loopback()).then(|| {
        format!(
            "the `simple` identity provider takes the user name of Basic credentials without checking a password, and icegate listens on `{}`, beyond this machine: anyone who reaches it can act as any user of the policy. Use `jwt`, `mtls`, or `header` behind an authenticating proxy in `[identity] providers`; keep `simple` only where the catalog behind icegate checks the password itself (`upstream.auth = \"passthrough\"`) or the network is trusted",
            config.listen
        )
    })
}

pub(super) fn recognize(headers: &HeaderMap) -> Result<Recognized, IdentityError> {
    let Some(value) = headers.get(http::header::AUTHORIZATION) else { return Ok(Recognized::No) };
    let Some(encoded) = value.to_str().ok().and_then(|v| v.strip_prefix("Basic ")) else { return Ok(Recognized::No) };
    let invalid = |why: &str| IdentityError::Invalid(format!("`Authorization: Basic` {why}"));
    let decoded = STANDARD.decode(encoded.trim()).map_err(|_| invalid("is not base64"))?;
    let text = String::from_utf8(decoded).map_err(|_| invalid("is not UTF-8"))?;
    let user = text.split(':').next().unwrap_or_default();
    if user.is_empty() || user.chars().any(char::is_control) {
        return Err(invalid("names no user"));
    }
    Ok(Recognized::Yes(Principal { user: user.to_owned(), ..Principal::default() }))
}
