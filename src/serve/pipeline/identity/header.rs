//! `header`: user and groups set by a trusted authenticating hop, accepted only from the
//! configured peers (anything else could set them).

use super::error::{IdentityError, Recognized};
use crate::config::HeaderIdentity;
use crate::core::roles::Principal;
use http::HeaderMap;
use std::net::IpAddr;

pub(super) fn recognize(
    config: &HeaderIdentity,
    headers: &HeaderMap,
    peer: IpAddr,
) -> Result<Recognized, IdentityError> {
    let user = headers.get(config.user_header.as_str());
    let groups = headers.get(config.groups_header.as_str());
    if user.is_none() && groups.is_none() {
        return Ok(Recognized::No);
    }
    if !config.trusted_peers.contains(&peer) {
        let (user, groups) = (config.user_header.clone(), config.groups_header.clone());
        return Err(IdentityError::UntrustedPeer { user, groups });
    }
    // A hop that appends instead of replacing would leave the caller's own value beside its own;
    // either could be the one meant, so neither is taken.
    for name in [&config.user_header, &config.groups_header] {
        if headers.get_all(name.as_str()).iter().nth(1).is_some() {
            return Err(IdentityError::Invalid(format!("`{name}` was sent more than once")));
        }
    }
    fn text<'a>(v: &'a http::HeaderValue, name: &str) -> Result<&'a str, IdentityError> {
        v.to_str().map(str::trim).map_err(|_| IdentityError::Invalid(format!("`{name}` is not ASCII")))
    }
    let Some(user) = user else { return Err(IdentityError::Invalid(format!("`{}` is missing", config.user_header))) };
    let user = text(user, &config.user_header)?;
    if user.is_empty() {
        return Err(IdentityError::Invalid(format!("`{}` is empty", config.user_header)));
    }
    let groups = match groups {
        Some(g) => text(g, &config.groups_header)?
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(str::to_owned)
            .collect(),
        None => Vec::new(),
    };
    Ok(Recognized::Yes(Principal { user: user.to_owned(), groups, claim_roles: None }))
}
