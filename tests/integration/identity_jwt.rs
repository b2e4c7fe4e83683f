//! The `jwt` identity provider (docs/design.md §6): verification, claims, the JWK set cache and its
//! refetch rate limit, and how it sits among the other providers. Keys are the test-only PEMs
//! of tests/data/jwt/ (made once with `openssl genpkey`).

use crate::fake_upstream::{FakeUpstream, Reply, basic, gate, send};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::HeaderMap;
use icegate::config::{Identity, JwtIdentity, Provider};
use icegate::core::clock::Clock;
use icegate::serve::pipeline::identity::{Identifier, IdentityError, validate_jwt};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const PEER: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
pub(crate) const ISSUER: &str = "https://idp.example";
pub(crate) const AUDIENCE: &str = "icegate";

pub(crate) fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/jwt")).join(name)
}

pub(crate) fn pem(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).unwrap()
}

pub(crate) fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

/// Standard claims for a valid token, plus `extra`.
pub(crate) fn claims(extra: Value) -> Value {
    let mut c = json!({ "sub": "alice", "iss": ISSUER, "aud": AUDIENCE, "exp": now() + 600, "iat": now() });
    for (k, v) in extra.as_object().unwrap() {
        if v.is_null() {
            c.as_object_mut().unwrap().remove(k);
        } else {
            c[k] = v.clone();
        }
    }
    c
}

pub(crate) fn sign(alg: Algorithm, key: &EncodingKey, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

pub(crate) fn rsa(name: &str) -> EncodingKey {
    EncodingKey::from_rsa_pem(&pem(name)).unwrap()
}

pub(crate) fn identity(jwt: JwtIdentity, providers: Vec<Provider>) -> Arc<Identifier> {
    identity_on(jwt, providers, &Clock::real())
}

/// The providers, reading `clock` for the JWK set's cooldown, expiry and staleness.
pub(crate) fn identity_on(jwt: JwtIdentity, providers: Vec<Provider>, clock: &Clock) -> Arc<Identifier> {
    Arc::new(Identifier::with_clock(&Identity { providers, jwt, ..Identity::default() }, clock.clone()))
}

pub(crate) async fn identify(
    c: &Identifier,
    h: &HeaderMap,
    peer: &icegate::serve::pipeline::identity::Peer,
) -> Result<icegate::core::roles::Principal, IdentityError> {
    c.identify(h, peer).await
}

/// The provider with the static RSA and EC public keys.
pub(crate) fn static_config() -> JwtIdentity {
    JwtIdentity {
        issuer: Some(ISSUER.into()),
        audience: Some(AUDIENCE.into()),
        public_keys: vec![data("rsa1.pub.pem"), data("ec1.pub.pem")],
        active_roles_claim: Some("active_roles".into()),
        ..JwtIdentity::default()
    }
}

pub(crate) fn bearer(token: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("authorization", format!("Bearer {token}").parse().unwrap());
    h
}

pub(crate) async fn who(config: &Identifier, token: &str) -> Result<icegate::core::roles::Principal, IdentityError> {
    identify(config, &bearer(token), &icegate::serve::pipeline::identity::Peer::plain(PEER)).await
}

pub(crate) async fn refused(config: &Identifier, token: &str) -> String {
    match who(config, token).await {
        Err(IdentityError::Invalid(m)) => m,
        other => panic!("expected an invalid credential, got {other:?}"),
    }
}

#[tokio::test]
async fn a_valid_token_names_the_user_groups_and_claim_roles() {
    let jwt = static_config();
    validate_jwt(&jwt).unwrap();
    let c = identity(jwt, vec![Provider::Jwt]);
    let extra = json!({ "groups": ["eng", "hr"], "active_roles": ["analyst", "writer"] });
    let p = who(&c, &sign(Algorithm::RS256, &rsa("rsa1.key.pem"), None, &claims(extra))).await.unwrap();
    assert_eq!(p.user, "alice");
    assert_eq!(p.groups, vec!["eng".to_owned(), "hr".to_owned()]);
    assert_eq!(p.claim_roles, Some(vec!["analyst".to_owned(), "writer".to_owned()]));
    // ES256 with the static EC key; a comma-separated claim; an empty claim is `NONE`
    let ec = EncodingKey::from_ec_pem(&pem("ec1.key.pem")).unwrap();
    let p = who(&c, &sign(Algorithm::ES256, &ec, None, &claims(json!({ "active_roles": " a , b" })))).await.unwrap();
    assert_eq!((p.groups.len(), p.claim_roles), (0, Some(vec!["a".to_owned(), "b".to_owned()])));
    let p = who(&c, &sign(Algorithm::ES256, &ec, None, &claims(json!({ "active_roles": "" })))).await.unwrap();
    assert_eq!(p.claim_roles, Some(vec![]));
    let p = who(&c, &sign(Algorithm::ES256, &ec, None, &claims(json!({})))).await.unwrap();
    assert_eq!(p.claim_roles, None, "no claim, no identity-bound narrowing");
}

#[tokio::test]
async fn user_claims_are_tried_in_order() {
    let jwt = JwtIdentity { user_claims: vec!["preferred_username".into(), "sub".into()], ..static_config() };
    let c = identity(jwt, vec![Provider::Jwt]);
    let key = rsa("rsa1.key.pem");
    let t = sign(Algorithm::RS256, &key, None, &claims(json!({ "preferred_username": "bob" })));
    assert_eq!(who(&c, &t).await.unwrap().user, "bob");
    assert_eq!(who(&c, &sign(Algorithm::RS256, &key, None, &claims(json!({})))).await.unwrap().user, "alice");
    let t = sign(Algorithm::RS256, &key, None, &claims(json!({ "sub": null })));
    assert!(refused(&c, &t).await.contains("no user claim"));
    let t = sign(Algorithm::RS256, &key, None, &claims(json!({ "groups": "eng" })));
    assert!(refused(&c, &t).await.contains("`groups` must be a list of strings"));
}

#[tokio::test]
async fn time_issuer_and_audience_are_enforced() {
    let c = identity(static_config(), vec![Provider::Jwt, Provider::Simple]);
    let key = rsa("rsa1.key.pem");
    let cases = [
        (json!({ "exp": now() - 120 }), "expired"),
        (json!({ "nbf": now() + 120 }), "not valid yet"),
        (json!({ "aud": "someone-else" }), "audience"),
        (json!({ "iss": "https://evil.example" }), "issuer"),
        (json!({ "exp": null }), "missing claim `exp`"),
        (json!({ "iss": null }), "missing claim `iss`"),
        (json!({ "aud": null }), "missing claim `aud`"),
    ];
    for (extra, why) in cases {
        let m = refused(&c, &sign(Algorithm::RS256, &key, None, &claims(extra.clone()))).await;
        assert!(m.contains(why), "{extra}: {m}");
    }
    // within the leeway (30 s by default)
    let t = sign(Algorithm::RS256, &key, None, &claims(json!({ "exp": now() - 10, "nbf": now() + 10 })));
    assert_eq!(who(&c, &t).await.unwrap().user, "alice");
    // a key the provider does not have
    let m = refused(&c, &sign(Algorithm::RS256, &rsa("rsa2.key.pem"), None, &claims(json!({})))).await;
    assert!(m.contains("signature"), "{m}");
}

#[tokio::test]
async fn alg_none_and_key_confusion_are_refused() {
    let c = identity(static_config(), vec![Provider::Jwt, Provider::Simple, Provider::Anonymous]);
    let enc = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
    let unsigned = format!("{}.{}.", enc(&json!({ "alg": "none", "typ": "JWT" })), enc(&claims(json!({}))));
    refused(&c, &unsigned).await;
    // HS256 keyed with the RSA public key's bytes: HS256 is not allowed without a secret...
    let confused =
        sign(Algorithm::HS256, &EncodingKey::from_secret(&pem("rsa1.pub.pem")).unwrap(), None, &claims(json!({})));
    assert!(refused(&c, &confused).await.contains("`HS256` is not accepted"));
    // ...and when it is, only the configured secret verifies it, never a public key.
    let jwt = JwtIdentity {
        algorithms: vec!["RS256".into(), "HS256".into()],
        hmac_secret: Some("a shared secret of at least 32 bytes".into()),
        ..static_config()
    };
    validate_jwt(&jwt).unwrap();
    let c = identity(jwt, vec![Provider::Jwt]);
    assert!(refused(&c, &confused).await.contains("signature"));
    let good = EncodingKey::from_secret(b"a shared secret of at least 32 bytes").unwrap();
    assert_eq!(who(&c, &sign(Algorithm::HS256, &good, None, &claims(json!({})))).await.unwrap().user, "alice");
    // an allowed algorithm of another kind than the key: ES256 over an RSA-only setup
    let jwt = JwtIdentity { public_keys: vec![data("rsa1.pub.pem")], ..static_config() };
    let c = identity(jwt, vec![Provider::Jwt]);
    let ec = EncodingKey::from_ec_pem(&pem("ec1.key.pem")).unwrap();
    assert!(refused(&c, &sign(Algorithm::ES256, &ec, None, &claims(json!({})))).await.contains("no `ES256` key"));
}

#[tokio::test]
async fn a_bearer_that_is_not_a_jwt_is_not_recognized() {
    let c = identity(static_config(), vec![Provider::Jwt, Provider::Simple]);
    // PyIceberg sends `Bearer None` when it has no token: nobody recognizes it
    assert_eq!(
        identify(&c, &bearer("None"), &icegate::serve::pipeline::identity::Peer::plain(PEER)).await,
        Err(IdentityError::Missing(" or `Authorization: Bearer <JWT>`"))
    );
    assert_eq!(
        identify(&c, &bearer("opaque.token"), &icegate::serve::pipeline::identity::Peer::plain(PEER)).await,
        Err(IdentityError::Missing(" or `Authorization: Bearer <JWT>`"))
    );
    // Basic still goes to `simple`; a JWT-shaped garbage token is refused, never passed on
    let mut h = HeaderMap::new();
    h.insert("authorization", basic("carol").parse().unwrap());
    assert_eq!(identify(&c, &h, &icegate::serve::pipeline::identity::Peer::plain(PEER)).await.unwrap().user, "carol");
    let c = identity(static_config(), vec![Provider::Jwt, Provider::Anonymous]);
    assert!(matches!(
        identify(&c, &bearer("a.b.c"), &icegate::serve::pipeline::identity::Peer::plain(PEER)).await,
        Err(IdentityError::Invalid(_))
    ));
    // ...and an unrecognized credential is not an absent one: no anonymous fall-back
    assert_eq!(
        identify(&c, &bearer("None"), &icegate::serve::pipeline::identity::Peer::plain(PEER)).await,
        Err(IdentityError::Missing(" or `Authorization: Bearer <JWT>`"))
    );
}

#[test]
fn the_config_is_checked() {
    let ok = static_config();
    validate_jwt(&ok).unwrap();
    let bad = [
        (JwtIdentity { issuer: None, ..static_config() }, "identity.jwt.issuer"),
        (JwtIdentity { audience: None, ..static_config() }, "identity.jwt.audience"),
        (JwtIdentity { algorithms: vec!["none".into()], ..static_config() }, "`none` is never accepted"),
        (JwtIdentity { algorithms: vec!["HS256".into()], ..static_config() }, "needs `identity.jwt.hmac_secret`"),
        (JwtIdentity { algorithms: vec!["XS1".into()], ..static_config() }, "unknown algorithm"),
        (JwtIdentity { hmac_secret: Some("short".into()), ..static_config() }, "32 bytes"),
        (JwtIdentity { leeway_secs: 61, ..static_config() }, "at most 60"),
        (JwtIdentity { public_keys: vec![], ..static_config() }, "no key would verify"),
        (JwtIdentity { public_keys: vec![data("missing.pem")], ..static_config() }, "cannot read"),
        (JwtIdentity { public_keys: vec![data("../jwt")], ..static_config() }, "cannot read"),
        (JwtIdentity { jwks_url: Some("ftp://idp/jwks".into()), ..static_config() }, "https://"),
        (JwtIdentity { jwks_url: Some("idp/jwks".into()), ..static_config() }, "jwks_url"),
    ];
    // an https JWK set is accepted (verified against the system's roots)
    assert!(
        validate_jwt(&JwtIdentity { jwks_url: Some("https://idp.example/jwks".into()), ..static_config() }).is_ok()
    );
    for (config, why) in bad {
        let e = validate_jwt(&config).unwrap_err().to_string();
        assert!(e.contains(why), "{why}: {e}");
    }
    // the documented `[identity.jwt]` keys parse, and `none` is refused through the whole config
    let c: icegate::config::Config = toml::from_str(
        "[identity]\nproviders = [\"jwt\"]\n[identity.jwt]\nissuer = \"i\"\naudience = \"a\"\n\
         algorithms = [\"ES256\"]\njwks_url = \"http://127.0.0.1:1/jwks\"\nleeway_secs = 5\n",
    )
    .unwrap();
    assert_eq!((c.identity.providers, c.identity.jwt.leeway_secs), (vec![Provider::Jwt], 5));
    assert!(toml::from_str::<icegate::config::Config>("[identity.jwt]\nissuer_url = \"x\"").is_err());
}

/// A JWK set endpoint whose keys the test can swap, counting its hits.
pub(crate) struct JwksServer {
    upstream: FakeUpstream,
    pub(crate) keys: Arc<Mutex<Vec<Jwk>>>,
    /// Answer 500 instead of the set.
    pub(crate) failing: Arc<AtomicBool>,
}

impl JwksServer {
    pub(crate) async fn start(keys: Vec<Jwk>) -> Self {
        let keys = Arc::new(Mutex::new(keys));
        let failing = Arc::new(AtomicBool::new(false));
        let (served, fail) = (keys.clone(), failing.clone());
        let upstream = FakeUpstream::start(move |_| {
            if fail.load(Ordering::SeqCst) {
                return Reply::raw(500, "down");
            }
            let set = JwkSet { keys: served.lock().unwrap().clone() };
            Reply::raw(200, &serde_json::to_string(&set).unwrap())
        })
        .await;
        Self { upstream, keys, failing }
    }

    pub(crate) fn hits(&self) -> usize {
        self.upstream.requests().len()
    }

    pub(crate) fn config(&self, cooldown: u64) -> JwtIdentity {
        JwtIdentity {
            issuer: Some(ISSUER.into()),
            audience: Some(AUDIENCE.into()),
            jwks_url: Some(self.upstream.url("/jwks.json")),
            jwks_refresh_cooldown_secs: cooldown,
            ..JwtIdentity::default()
        }
    }
}

pub(crate) fn jwk(private_pem: &str, kid: &str) -> Jwk {
    let mut jwk = Jwk::from_encoding_key(&rsa(private_pem), Algorithm::RS256).unwrap();
    jwk.common.key_id = Some(kid.to_owned());
    jwk
}

/// `n` requests at once with `token`; how many were accepted.
pub(crate) async fn burst(c: &Arc<Identifier>, token: &str, n: usize) -> usize {
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let (c, token) = (c.clone(), token.to_owned());
            tokio::spawn(async move { who(&c, &token).await.is_ok() })
        })
        .collect();
    let mut ok = 0;
    for t in tasks {
        ok += usize::from(t.await.unwrap());
    }
    ok
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn unknown_kids_refetch_once_per_cooldown() {
    // A 3 s cooldown: long enough that a slow, loaded CI machine stays inside it for a burst.
    let server = JwksServer::start(vec![jwk("rsa1.key.pem", "k1")]).await;
    let jwt = server.config(3);
    validate_jwt(&jwt).unwrap();
    let clock = Clock::manual();
    let c = identity_on(jwt, vec![Provider::Jwt], &clock);
    let good = sign(Algorithm::RS256, &rsa("rsa1.key.pem"), Some("k1"), &claims(json!({})));
    let unknown: Vec<String> = (0..20)
        .map(|i| sign(Algorithm::RS256, &rsa("rsa1.key.pem"), Some(&format!("nope{i}")), &claims(json!({}))))
        .collect();
    assert_eq!(burst(&c, &good, 20).await, 20);
    assert_eq!(server.hits(), 1, "the first burst fetches once");
    assert_eq!(burst(&c, &good, 20).await, 20);
    assert_eq!(server.hits(), 1, "a known kid is served from the cache");
    clock.advance(Duration::from_millis(3_100));
    // 20 tokens at once, each with a kid nobody knows
    let tasks: Vec<_> = unknown
        .into_iter()
        .map(|token| {
            let c = c.clone();
            tokio::spawn(async move { who(&c, &token).await })
        })
        .collect();
    for t in tasks {
        assert!(matches!(t.await.unwrap(), Err(IdentityError::Invalid(_))));
    }
    assert_eq!(server.hits(), 2, "one fetch for the whole burst of unknown kids");
    let unknown = sign(Algorithm::RS256, &rsa("rsa1.key.pem"), Some("nope0"), &claims(json!({})));
    assert_eq!(burst(&c, &unknown, 20).await, 0);
    assert_eq!(server.hits(), 2, "the negative cache and the cooldown hold until it passes");
    assert_eq!(c.jwks_fetches(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rotated_key_is_picked_up_after_the_cooldown() {
    let server = JwksServer::start(vec![jwk("rsa1.key.pem", "k1")]).await;
    let clock = Clock::manual();
    let c = identity_on(server.config(1), vec![Provider::Jwt], &clock);
    let old = sign(Algorithm::RS256, &rsa("rsa1.key.pem"), Some("k1"), &claims(json!({})));
    let new = sign(Algorithm::RS256, &rsa("rsa2.key.pem"), Some("k2"), &claims(json!({ "sub": "bob" })));
    assert_eq!(who(&c, &old).await.unwrap().user, "alice");
    assert!(refused(&c, &new).await.contains("no `RS256` key with id `k2`"));
    assert_eq!(server.hits(), 1, "within the cooldown nothing is refetched");
    // the issuer rotates: k2 published, k1 retired
    *server.keys.lock().unwrap() = vec![jwk("rsa2.key.pem", "k2")];
    assert!(who(&c, &new).await.is_err(), "still within the cooldown");
    clock.advance(Duration::from_millis(1_100));
    assert_eq!(who(&c, &new).await.unwrap().user, "bob");
    assert_eq!(server.hits(), 2);
    // k1 is gone from the refetched set: a token naming it is refused (no fetch: cooldown)
    assert!(refused(&c, &old).await.contains("`k1`"));
    // a key signed by the wrong key under a known kid never verifies
    let forged = sign(Algorithm::RS256, &rsa("rsa1.key.pem"), Some("k2"), &claims(json!({})));
    assert!(refused(&c, &forged).await.contains("signature"));
}

#[tokio::test]
async fn a_stale_set_is_refetched_and_a_failed_fetch_keeps_the_keys() {
    let server = JwksServer::start(vec![jwk("rsa1.key.pem", "k1")]).await;
    let clock = Clock::manual();
    let c = identity_on(JwtIdentity { jwks_cache_secs: 1, ..server.config(1) }, vec![Provider::Jwt], &clock);
    let token = sign(Algorithm::RS256, &rsa("rsa1.key.pem"), Some("k1"), &claims(json!({})));
    assert!(who(&c, &token).await.is_ok());
    clock.advance(Duration::from_millis(1_100));
    assert!(who(&c, &token).await.is_ok());
    assert_eq!(server.hits(), 2, "a set older than jwks_cache_secs is refetched");
    server.failing.store(true, Ordering::SeqCst);
    clock.advance(Duration::from_millis(1_100));
    assert!(who(&c, &token).await.is_ok(), "the last good keys outlive a failed fetch");
    assert_eq!(server.hits(), 3);
}

#[tokio::test]
async fn the_gate_answers_401_for_a_bad_token_and_serves_a_good_one() {
    let catalog = FakeUpstream::start(|_| Reply::json(200, json!({ "defaults": {}, "overrides": {} }))).await;
    let policy = "version: 1\nmetalake: lake\nusers: [{ name: alice }]\n";
    let gate = gate(&catalog.url(""), policy, |c| {
        c.identity.providers = vec![Provider::Jwt, Provider::Simple];
        c.identity.jwt = static_config();
    })
    .await;
    let good = format!("Bearer {}", sign(Algorithm::RS256, &rsa("rsa1.key.pem"), None, &claims(json!({}))));
    let a = send(gate.addr, "GET", "/v1/config", &[("authorization", &good)], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    let expired = claims(json!({ "exp": now() - 3600 }));
    let bad = format!("Bearer {}", sign(Algorithm::RS256, &rsa("rsa1.key.pem"), None, &expired));
    let a = send(gate.addr, "GET", "/v1/config", &[("authorization", &bad)], b"").await;
    assert!(a.assert_error(401, "NotAuthorizedException").contains("expired"));
    let a = send(gate.addr, "GET", "/v1/config", &[("authorization", "Bearer None")], b"").await;
    assert!(a.assert_error(401, "NotAuthorizedException").contains("Bearer <JWT>"), "{}", a.text());
    assert_eq!(catalog.requests().len(), 1, "only the good token reached the catalog");
}

static POLICY: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| crate::support::sales_policy(&["{ name: alice, roles: [analyst, editor] }"]));

#[tokio::test]
async fn the_active_roles_claim_narrows_end_to_end() {
    let catalog = FakeUpstream::start(|_| Reply::ok()).await;
    let gate = gate(&catalog.url(""), &POLICY, |c| {
        c.identity.providers = vec![Provider::Jwt];
        c.identity.jwt = static_config();
    })
    .await;
    let token = sign(Algorithm::RS256, &rsa("rsa1.key.pem"), None, &claims(json!({ "active_roles": ["analyst"] })));
    let auth = format!("Bearer {token}");
    let table = "/v1/prod/namespaces/sales/tables/orders";
    let a = send(gate.addr, "GET", table, &[("authorization", &auth)], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(catalog.only().header("x-gravitino-active-roles"), Some("analyst"), "the claim is the active set");
    // the header can only narrow within the claim
    let a =
        send(gate.addr, "GET", table, &[("authorization", &auth), ("x-gravitino-active-roles", "editor")], b"").await;
    let m = a.assert_error(403, "ForbiddenException");
    assert!(m.starts_with("user 'alice' cannot assume active role(s) that are not held: editor"), "{m}");
    // analyst alone cannot drop the table, though alice holds editor
    let a = send(gate.addr, "DELETE", table, &[("authorization", &auth)], b"").await;
    a.assert_error(403, "ForbiddenException");
    assert_eq!(catalog.requests().len(), 1);
}
