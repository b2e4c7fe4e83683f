//! `jwt`: `Authorization: Bearer <JWT>` (docs/design.md §6). A bearer token that does not look like
//! a JWT (not three dot-separated parts, e.g. PyIceberg's `Bearer None`) is not this provider's;
//! one that does is verified or refused (401), never passed on to the next provider.
//!
//! Verification: the header's `alg` must be in `identity.jwt.algorithms` and of the key's kind
//! (a token signed with HMAC over an RSA public key is refused: the key-confusion attack); `exp`,
//! `iss` and `aud` are required, `nbf` is checked when present, with `leeway_secs` of skew. Keys
//! come from static PEM files, the JWK set of [`super::jwks`], and `hmac_secret` for `HS*`.
//! The user is the first present of `user_claims`, the groups a list claim, and the optional
//! active-roles claim becomes [`Principal::claim_roles`] (docs/design.md §5).

use super::error::{IdentityError, Recognized};
use super::jwks::{JwkKey, Jwks, Timing};
use crate::config::{ConfigError, JwtIdentity};
use crate::core::clock::Clock;
use crate::core::roles::Principal;
use http::HeaderMap;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// The `jwt` provider: its settings and the keys built from them once, at start-up (a key that
/// cannot be loaded is refused at start-up by [`validate`]; an in-process server built without
/// that check refuses every token with the reason in its log).
#[derive(Debug)]
pub struct Provider {
    config: JwtIdentity,
    keys: Result<Arc<Keys>, String>,
}

impl Provider {
    pub fn new(config: &JwtIdentity, clock: Clock) -> Self {
        Self { config: config.clone(), keys: Keys::load(config, clock).map(Arc::new) }
    }

    /// JWK set fetches so far (0 without `jwks_url`).
    pub fn jwks_fetches(&self) -> u64 {
        match &self.keys {
            Ok(keys) => keys.jwks.as_ref().map_or(0, |j| j.fetches()),
            Err(_) => 0,
        }
    }
}

/// Every key a token may be verified with.
#[derive(Debug)]
pub struct Keys {
    algorithms: Vec<Algorithm>,
    static_keys: Vec<DecodingKey>,
    hmac: Option<DecodingKey>,
    jwks: Option<Jwks>,
}

impl Keys {
    fn load(config: &JwtIdentity, clock: Clock) -> Result<Self, String> {
        let algorithms = config.algorithms.iter().filter_map(|a| Algorithm::from_str(a).ok()).collect();
        let mut static_keys = Vec::new();
        for path in &config.public_keys {
            let pem = std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
            let key = DecodingKey::from_rsa_pem(&pem)
                .or_else(|_| DecodingKey::from_ec_pem(&pem))
                .or_else(|_| DecodingKey::from_ed_pem(&pem))
                .map_err(|_| format!("`{}` holds no RSA, EC or Ed25519 public key in PEM", path.display()))?;
            static_keys.push(key);
        }
        let hmac = match &config.hmac_secret {
            Some(secret) => Some(DecodingKey::from_secret(secret.as_bytes()).map_err(|e| e.to_string())?),
            None => None,
        };
        let jwks = match &config.jwks_url {
            Some(url) => Some(Jwks::new(
                jwks_uri(url)?,
                Timing {
                    cooldown: Duration::from_secs(config.jwks_refresh_cooldown_secs),
                    ttl: Duration::from_secs(config.jwks_cache_secs),
                    max_stale: Duration::from_secs(config.jwks_max_stale_secs),
                },
                crate::net::outbound::shared().map_err(|e| e.to_string())?,
                clock,
            )),
            None => None,
        };
        Ok(Self { algorithms, static_keys, hmac, jwks })
    }
}

fn jwks_uri(url: &str) -> Result<http::Uri, String> {
    let uri: http::Uri = url.parse().map_err(|_| format!("`{url}` is not a URL"))?;
    match uri.scheme_str() {
        Some("http" | "https") if uri.authority().is_some() => Ok(uri),
        _ => Err(format!("`{url}`: expected `https://host[:port]/path` or `http://...`")),
    }
}

/// Checks `[identity.jwt]` when the provider is enabled, and loads its keys (fail fast).
pub fn validate(config: &JwtIdentity) -> Result<(), ConfigError> {
    let invalid = |key: &'static str, message: String| ConfigError::Invalid { key, message };
    if config.issuer.as_deref().is_none_or(str::is_empty) {
        return Err(invalid("identity.jwt.issuer", "required when the `jwt` provider is enabled".into()));
    }
    if config.audience.as_deref().is_none_or(str::is_empty) {
        return Err(invalid("identity.jwt.audience", "required when the `jwt` provider is enabled".into()));
    }
    if config.algorithms.is_empty() {
        return Err(invalid("identity.jwt.algorithms", "name at least one algorithm".into()));
    }
    for name in &config.algorithms {
        if name.eq_ignore_ascii_case("none") {
            return Err(invalid("identity.jwt.algorithms", "`none` is never accepted".into()));
        }
        let alg = Algorithm::from_str(name)
            .map_err(|_| invalid("identity.jwt.algorithms", format!("unknown algorithm `{name}`")))?;
        if alg.family() == jsonwebtoken::AlgorithmFamily::Hmac && config.hmac_secret.is_none() {
            return Err(invalid("identity.jwt.algorithms", format!("`{name}` needs `identity.jwt.hmac_secret`")));
        }
    }
    if config.hmac_secret.as_ref().is_some_and(|s| s.len() < 32) {
        return Err(invalid("identity.jwt.hmac_secret", "must be at least 32 bytes".into()));
    }
    if config.jwks_url.is_none() && config.public_keys.is_empty() && config.hmac_secret.is_none() {
        return Err(invalid(
            "identity.jwt",
            "set `jwks_url`, `public_keys` or `hmac_secret`: no key would verify a token".into(),
        ));
    }
    if config.user_claims.is_empty() {
        return Err(invalid("identity.jwt.user_claims", "name at least one claim".into()));
    }
    if config.leeway_secs > 60 {
        return Err(invalid("identity.jwt.leeway_secs", "at most 60".into()));
    }
    if config.jwks_refresh_cooldown_secs == 0 {
        return Err(invalid("identity.jwt.jwks_refresh_cooldown_secs", "at least 1".into()));
    }
    if config.jwks_max_stale_secs < config.jwks_cache_secs {
        return Err(invalid("identity.jwt.jwks_max_stale_secs", "at least `jwks_cache_secs`".into()));
    }
    if let Some(url) = &config.jwks_url {
        jwks_uri(url).map_err(|m| invalid("identity.jwt.jwks_url", m))?;
    }
    Keys::load(config, Clock::real()).map(|_| ()).map_err(|m| invalid("identity.jwt.public_keys", m))
}

pub(super) async fn recognize(provider: &Provider, headers: &HeaderMap) -> Result<Recognized, IdentityError> {
    let config = &provider.config;
    let Some(value) = headers.get(http::header::AUTHORIZATION) else { return Ok(Recognized::No) };
    let Some(token) = value.to_str().ok().and_then(bearer) else { return Ok(Recognized::No) };
    if token.split('.').count() != 3 {
        return Ok(Recognized::No);
    }
    let keys = provider.keys.as_ref().map_err(|m| {
        tracing::warn!("identity.jwt: {m}");
        invalid("the provider's keys could not be loaded".into())
    })?;
    let claims = verify(config, keys, token).await?;
    principal(config, &claims).map(Recognized::Yes)
}

/// The token of `Bearer <token>` (the scheme is case-insensitive).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

fn invalid(why: String) -> IdentityError {
    IdentityError::Invalid(format!("bearer token: {why}"))
}

async fn verify(config: &JwtIdentity, keys: &Keys, token: &str) -> Result<Map<String, Value>, IdentityError> {
    let header = jsonwebtoken::decode_header(token)
        .map_err(|_| invalid("malformed JWT header, or an algorithm that is never accepted".into()))?;
    let alg = header.alg;
    if !keys.algorithms.contains(&alg) {
        return Err(invalid(format!("algorithm `{alg:?}` is not accepted")));
    }
    let family = alg.family();
    let mut candidates: Vec<Candidate<'_>> = Vec::new();
    if family == jsonwebtoken::AlgorithmFamily::Hmac {
        candidates.extend(keys.hmac.iter().map(Candidate::Static));
    } else {
        let from_set = match (&header.kid, &keys.jwks) {
            (Some(kid), Some(jwks)) => jwks.key(kid).await.into_iter().collect(),
            (None, Some(jwks)) => jwks.all().await,
            (_, None) => Vec::new(),
        };
        candidates.extend(from_set.into_iter().map(Candidate::Set));
        candidates.extend(keys.static_keys.iter().map(Candidate::Static));
    }
    // A key pinned to another `alg`, or of another kind, never verifies this token.
    candidates.retain(|c| c.key().family() == family && c.alg().is_none_or(|a| a == alg));
    if candidates.is_empty() {
        return Err(invalid(match &header.kid {
            Some(kid) => format!("no `{alg:?}` key with id `{}`", shorten(kid)),
            None => format!("no `{alg:?}` key"),
        }));
    }
    let mut validation = Validation::new(alg);
    validation.leeway = config.leeway_secs;
    validation.validate_nbf = true;
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    validation.set_issuer(&[config.issuer.as_deref().unwrap_or_default()]);
    validation.set_audience(&[config.audience.as_deref().unwrap_or_default()]);
    for candidate in &candidates {
        match jsonwebtoken::decode::<Map<String, Value>>(token, candidate.key(), &validation) {
            Ok(data) => return Ok(data.claims),
            Err(e) if matches!(e.kind(), ErrorKind::InvalidSignature) => continue,
            Err(e) => return Err(invalid(describe(e.kind()))),
        }
    }
    Err(invalid("the signature does not verify".into()))
}

enum Candidate<'a> {
    Static(&'a DecodingKey),
    Set(Arc<JwkKey>),
}

impl Candidate<'_> {
    fn key(&self) -> &DecodingKey {
        match self {
            Candidate::Static(k) => k,
            Candidate::Set(k) => &k.key,
        }
    }

    fn alg(&self) -> Option<Algorithm> {
        match self {
            Candidate::Static(_) => None,
            Candidate::Set(k) => k.alg,
        }
    }
}

fn describe(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (`nbf`)".into(),
        ErrorKind::InvalidIssuer => "wrong issuer (`iss`)".into(),
        ErrorKind::InvalidAudience => "wrong audience (`aud`)".into(),
        ErrorKind::MissingRequiredClaim(c) => format!("missing claim `{c}`"),
        ErrorKind::InvalidClaimFormat(c) => format!("malformed claim `{c}`"),
        ErrorKind::InvalidAlgorithm => "the algorithm does not match the key".into(),
        _ => "malformed JWT".into(),
    }
}

/// User input shown in an error, cut to a readable length.
fn shorten(s: &str) -> String {
    let cut: String = s.chars().take(64).filter(|c| !c.is_control()).collect();
    if cut.len() < s.len() { format!("{cut}...") } else { cut }
}

fn principal(config: &JwtIdentity, claims: &Map<String, Value>) -> Result<Principal, IdentityError> {
    let user = config
        .user_claims
        .iter()
        .find_map(|c| claims.get(c).and_then(Value::as_str).filter(|u| !u.is_empty()))
        .ok_or_else(|| invalid(format!("no user claim: expected one of `{}`", config.user_claims.join("`, `"))))?;
    if user.chars().any(char::is_control) {
        return Err(invalid("the user claim holds a control character".into()));
    }
    let groups = match claims.get(&config.groups_claim) {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => string_list(v)
            .ok_or_else(|| invalid(format!("claim `{}` must be a list of strings", config.groups_claim)))?,
    };
    let claim_roles = match &config.active_roles_claim {
        None => None,
        Some(name) => match claims.get(name) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(
                s.split(',').map(|r| r.trim_matches([' ', '\t'])).filter(|r| !r.is_empty()).map(String::from).collect(),
            ),
            Some(v) => Some(string_list(v).ok_or_else(|| {
                invalid(format!("claim `{name}` must be a list of strings or a comma-separated string"))
            })?),
        },
    };
    Ok(Principal { user: user.to_owned(), groups, claim_roles })
}

fn string_list(v: &Value) -> Option<Vec<String>> {
    v.as_array()?.iter().map(|s| s.as_str().map(str::to_owned)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer("Bearer a.b.c"), Some("a.b.c"));
        assert_eq!(bearer("bearer  a.b.c "), Some("a.b.c"));
        assert_eq!(bearer("Basic a.b.c"), None);
        assert_eq!(bearer("Bearer"), None);
    }

    #[test]
    fn claims_become_a_principal() {
        let config = JwtIdentity { active_roles_claim: Some("roles".into()), ..JwtIdentity::default() };
        let p = principal(&config, &claims(json!({ "sub": "u", "groups": ["g"], "roles": "a,\tb ,," }))).unwrap();
        assert_eq!(
            (p.user.as_str(), p.groups, p.claim_roles),
            ("u", vec!["g".to_owned()], Some(vec!["a".into(), "b".into()]))
        );
        let p = principal(&config, &claims(json!({ "sub": "u", "groups": null, "roles": [] }))).unwrap();
        assert_eq!((p.groups.len(), p.claim_roles), (0, Some(vec![])));
        for bad in [
            json!({ "sub": "" }),
            json!({ "sub": 7 }),
            json!({ "sub": "a\nb" }),
            json!({ "sub": "u", "groups": [1] }),
            json!({ "sub": "u", "roles": {"a": 1} }),
            json!({ "sub": "u", "roles": ["a", 2] }),
        ] {
            assert!(principal(&config, &claims(bad.clone())).is_err(), "{bad}");
        }
    }

    #[test]
    fn user_input_in_messages_is_cut() {
        assert_eq!(shorten("k1"), "k1");
        assert_eq!(shorten(&"x".repeat(100)), format!("{}...", "x".repeat(64)));
    }
}
