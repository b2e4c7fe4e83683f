//! Identify the caller (docs/design.md §6): providers are tried in order; the first that recognizes
//! the request's credential decides, and a credential that is present but invalid is 401,
//! never a fall-through to a weaker provider.

mod anonymous;
mod error;
mod header;
mod jwks;
mod jwt;
pub mod mtls;
mod peer;
pub mod simple;

pub use error::IdentityError;
use error::Recognized;
pub use jwt::validate as validate_jwt;
pub use peer::{Ambiguity, Peer};

use crate::config::{Identity, Provider};
use crate::core::clock::Clock;
use crate::core::roles::Principal;
use http::HeaderMap;

/// The configured providers, with what they build once (the `jwt` provider's keys).
#[derive(Debug)]
pub struct Identifier {
    config: Identity,
    jwt: jwt::Provider,
}

impl Identifier {
    pub fn new(config: &Identity) -> Self {
        Self::with_clock(config, Clock::real())
    }

    /// As [`Identifier::new`], reading `clock` for the JWK set's expiry.
    pub fn with_clock(config: &Identity, clock: Clock) -> Self {
        Self { config: config.clone(), jwt: jwt::Provider::new(&config.jwt, clock) }
    }

    /// Who is calling (see [`identify`]).
    pub async fn identify(&self, headers: &HeaderMap, peer: &Peer) -> Result<Principal, IdentityError> {
        identify(&self.config, &self.jwt, headers, peer).await
    }

    /// The `jwt` provider's JWK set fetches so far.
    pub fn jwks_fetches(&self) -> u64 {
        self.jwt.jwks_fetches()
    }
}

/// Who is calling, from the request's headers and peer. Awaits only when a `jwt` token names a
/// key the JWK set cache does not hold and a refetch is due.
async fn identify(
    config: &Identity,
    jwt: &jwt::Provider,
    headers: &HeaderMap,
    peer: &Peer,
) -> Result<Principal, IdentityError> {
    // A spoofing attempt is refused whatever the order of the providers (docs/design.md §6), never
    // ignored in favour of another credential the request also carries.
    if config.providers.contains(&Provider::Header) && !config.header.trusted_peers.contains(&peer.ip) {
        refuse_identity_headers(config, headers)?;
    }
    for provider in &config.providers {
        let outcome = match provider {
            Provider::Simple => simple::recognize(headers)?,
            Provider::Header => header::recognize(&config.header, headers, peer.ip)?,
            Provider::Mtls => mtls::recognize(&config.mtls, peer)?,
            Provider::Jwt => jwt::recognize(jwt, headers).await?,
            Provider::Anonymous => anonymous::recognize(headers),
        };
        if let Recognized::Yes(principal) = outcome {
            return Ok(principal);
        }
    }
    // Identity headers from a peer no header provider trusts are refused, not ignored.
    refuse_identity_headers(config, headers)?;
    let hint = if config.providers.contains(&Provider::Jwt) { " or `Authorization: Bearer <JWT>`" } else { "" };
    Err(IdentityError::Missing(hint))
}

/// 401 when the request carries the `header` provider's user or groups header.
fn refuse_identity_headers(config: &Identity, headers: &HeaderMap) -> Result<(), IdentityError> {
    let (user, groups) = (&config.header.user_header, &config.header.groups_header);
    if headers.contains_key(user.as_str()) || headers.contains_key(groups.as_str()) {
        return Err(IdentityError::UntrustedPeer { user: user.clone(), groups: groups.clone() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::HeaderIdentity;
    use std::net::IpAddr;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    const LOCAL: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    fn config(providers: Vec<Provider>) -> Identity {
        Identity {
            providers,
            header: HeaderIdentity { trusted_peers: vec![LOCAL], ..HeaderIdentity::default() },
            ..Identity::default()
        }
    }

    /// `identify` outside a runtime (no provider here awaits).
    fn identify(config: &Identity, headers: &HeaderMap, peer: IpAddr) -> Result<Principal, IdentityError> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(Identifier::new(config).identify(headers, &Peer::plain(peer)))
    }

    #[test]
    fn simple_takes_the_user_before_the_first_colon() {
        let c = config(vec![Provider::Simple]);
        // alice:pw:with:colons
        let p = identify(&c, &headers(&[("authorization", "Basic YWxpY2U6cHc6d2l0aDpjb2xvbnM=")]), LOCAL).unwrap();
        assert_eq!(p.user, "alice");
        // "bob" without a colon is the user itself
        assert_eq!(identify(&c, &headers(&[("authorization", "Basic Ym9i")]), LOCAL).unwrap().user, "bob");
        for bad in ["Basic !!!", "Basic ", "Basic Og==", "Basic /w=="] {
            assert!(
                matches!(identify(&c, &headers(&[("authorization", bad)]), LOCAL), Err(IdentityError::Invalid(_))),
                "{bad}"
            );
        }
        assert!(matches!(identify(&c, &headers(&[]), LOCAL), Err(IdentityError::Missing(_))));
        // a bearer token is not a simple credential, and nothing else recognizes it
        assert!(identify(&c, &headers(&[("authorization", "Bearer None")]), LOCAL).is_err());
    }

    #[test]
    fn header_identity_needs_a_trusted_peer() {
        let c = config(vec![Provider::Header, Provider::Simple]);
        let h = headers(&[("x-forwarded-user", "carol"), ("x-forwarded-groups", "hr, eng")]);
        let p = identify(&c, &h, LOCAL).unwrap();
        assert_eq!((p.user.as_str(), p.groups.clone()), ("carol", vec!["hr".to_owned(), "eng".to_owned()]));
        let other: IpAddr = "10.0.0.9".parse().unwrap();
        assert!(matches!(identify(&c, &h, other), Err(IdentityError::UntrustedPeer { .. })));
        // whatever the order of the providers, and whatever other credential comes with it
        let c = config(vec![Provider::Simple, Provider::Header]);
        let h = headers(&[("x-forwarded-groups", "admins"), ("authorization", "Basic Ym9i")]);
        assert!(matches!(identify(&c, &h, other), Err(IdentityError::UntrustedPeer { .. })));
        assert_eq!(identify(&c, &h, LOCAL).unwrap().user, "bob", "a trusted hop's headers do not block simple");
        // a simple-only setup refuses spoofed identity headers outright
        let c = config(vec![Provider::Simple]);
        let h = headers(&[("x-forwarded-user", "admin"), ("authorization", "Basic Ym9i")]);
        assert_eq!(identify(&c, &h, LOCAL).unwrap().user, "bob", "a valid credential decides first");
        let h = headers(&[("x-forwarded-user", "admin")]);
        assert!(matches!(identify(&c, &h, LOCAL), Err(IdentityError::UntrustedPeer { .. })));
    }

    #[test]
    fn anonymous_only_without_a_credential() {
        let c = config(vec![Provider::Simple, Provider::Anonymous]);
        assert_eq!(identify(&c, &headers(&[]), LOCAL).unwrap().user, "anonymous");
        assert!(identify(&c, &headers(&[("authorization", "Basic !!")]), LOCAL).is_err(), "invalid is never anonymous");
        assert!(
            identify(&c, &headers(&[("authorization", "Bearer x")]), LOCAL).is_err(),
            "an unrecognized credential is not absent"
        );
    }
}
