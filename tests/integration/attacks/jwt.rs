//! Bearer tokens (docs/design.md §6): every forged, confused or stale JWT is 401 and never forwarded,
//! and a storm of bad tokens cannot turn icegate into a load on the JWK set endpoint.
//!
//! Covered elsewhere: HS256 keyed with the RSA public key and ES256 over RSA keys
//! (`identity_jwt::alg_none_and_key_confusion_are_refused`), expired, not yet valid, wrong
//! issuer and audience (`identity_jwt::time_issuer_and_audience_are_enforced`), a burst of
//! unknown `kid`s fetching once per cooldown (`identity_jwt::unknown_kids_refetch_once_per_cooldown`),
//! a failed fetch keeping the keys (`identity_jwt::a_stale_set_is_refetched_and_a_failed_fetch_keeps_the_keys`).

use super::{Lab, ORDERS};
use crate::fake_upstream::{Reply, send};
use crate::identity_jwt::{
    JwksServer, claims, identity, identity_on, jwk, now, pem, refused, rsa, sign, static_config, who,
};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use icegate::config::Provider;
use icegate::core::clock::Clock;
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use std::time::Duration;

fn enc(v: &Value) -> String {
    URL_SAFE_NO_PAD.encode(v.to_string())
}

/// A token with `header` and the standard claims, signed by rsa1 over exactly those bytes.
fn rs256_with_header(header: &Value) -> String {
    let signing_input = format!("{}.{}", enc(header), enc(&claims(json!({}))));
    let key = rsa("rsa1.key.pem");
    let sig = jsonwebtoken::crypto::sign(signing_input.as_bytes(), &key, Algorithm::RS256).unwrap();
    format!("{signing_input}.{sig}")
}

/// A lab with the `jwt` provider on the static keys (and `simple` after it).
async fn jwt_lab() -> Lab {
    Lab::with(
        |_| Reply::ok(),
        |c| {
            c.identity.providers = vec![Provider::Jwt, Provider::Simple, Provider::Anonymous];
            c.identity.jwt = static_config();
        },
    )
    .await
}

async fn assert_401(lab: &Lab, token: &str) {
    let auth = format!("Bearer {token}");
    let a = send(lab.addr(), "GET", ORDERS, &[("authorization", &auth)], b"").await;
    assert_eq!(a.status, 401, "{token}: {}", a.text());
    a.assert_error(401, "NotAuthorizedException");
}

#[tokio::test]
async fn unsigned_and_none_algorithm_tokens_are_401_at_the_gate() {
    let lab = jwt_lab().await;
    let body = enc(&claims(json!({})));
    let good = sign(Algorithm::RS256, &rsa("rsa1.key.pem"), None, &claims(json!({})));
    let good_sig = good.rsplit('.').next().unwrap();
    for alg in ["none", "None", "NONE", "nOnE", ""] {
        let header = enc(&json!({ "alg": alg, "typ": "JWT" }));
        assert_401(&lab, &format!("{header}.{body}.")).await;
        assert_401(&lab, &format!("{header}.{body}.{good_sig}")).await;
    }
    // no alg at all, alg as a list, a header that is not JSON
    for header in [json!({ "typ": "JWT" }), json!({ "alg": ["RS256"] }), json!("RS256")] {
        assert_401(&lab, &format!("{}.{body}.{good_sig}", enc(&header))).await;
    }
    assert_401(&lab, &format!("e30.{body}.{good_sig}")).await;
    lab.up.assert_untouched();
}

#[tokio::test]
async fn embedded_keys_and_unknown_crit_are_never_trusted() {
    let lab = jwt_lab().await;
    // a token carrying its own key (`jwk`), or pointing at one (`jku`, `x5u`), signed by a key
    // icegate does not have: the embedded key is never used
    let attacker = jsonwebtoken::jwk::Jwk::from_encoding_key(&rsa("rsa2.key.pem"), Algorithm::RS256).unwrap();
    let mut header = jsonwebtoken::Header::new(Algorithm::RS256);
    header.jwk = Some(attacker);
    header.jku = Some("http://127.0.0.1:1/evil.json".into());
    header.x5u = Some("http://127.0.0.1:1/evil.pem".into());
    let token = jsonwebtoken::encode(&header, &claims(json!({})), &rsa("rsa2.key.pem")).unwrap();
    assert_401(&lab, &token).await;
    // RFC 7515 §4.1.11: an unknown critical header is refused even under a good signature
    for crit in [json!(["exp-ext"]), json!([]), json!(["b64"]), json!("b64")] {
        assert_401(&lab, &rs256_with_header(&json!({ "alg": "RS256", "typ": "JWT", "crit": crit, "exp-ext": 1 })))
            .await;
    }
    // the same signed header without `crit` is fine: the refusals above are about `crit`
    let a = send(
        lab.addr(),
        "GET",
        ORDERS,
        &[("authorization", &format!("Bearer {}", rs256_with_header(&json!({ "alg": "RS256", "typ": "JWT" }))))],
        b"",
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(lab.up.requests().len(), 1);
}

#[tokio::test]
async fn kid_path_tricks_and_huge_kids_are_401_and_fetch_at_most_once() {
    let server = JwksServer::start(vec![jwk("rsa1.key.pem", "k1")]).await;
    let c = identity(server.config(30), vec![Provider::Jwt]);
    let huge = "k".repeat(8_000);
    for kid in [
        "../../../../etc/passwd",
        "/dev/null",
        "file:///etc/passwd",
        "http://127.0.0.1:1/jwks.json",
        "k1/../k1",
        "k1\u{0}",
        "K1",
        " k1",
        "' OR '1'='1",
        "k1\r\nx-forwarded-user: root",
        huge.as_str(),
    ] {
        let token = sign(Algorithm::RS256, &rsa("rsa1.key.pem"), Some(kid), &claims(json!({})));
        let m = refused(&c, &token).await;
        assert!(m.len() < 300, "the kid is shortened in messages: {} bytes", m.len());
        assert!(!m.contains('\n') && !m.contains('\0'), "{m:?}");
    }
    assert_eq!(server.hits(), 1, "one fetch for all the unknown kids within the cooldown");
    let good = sign(Algorithm::RS256, &rsa("rsa1.key.pem"), Some("k1"), &claims(json!({})));
    assert_eq!(who(&c, &good).await.unwrap().user, "alice");
}

#[tokio::test]
async fn malformed_ecdsa_signatures_are_401() {
    let lab = jwt_lab().await;
    let ec = EncodingKey::from_ec_pem(&pem("ec1.key.pem")).unwrap();
    let good = sign(Algorithm::ES256, &ec, None, &claims(json!({})));
    let (input, sig) = good.rsplit_once('.').unwrap();
    let raw_sig = URL_SAFE_NO_PAD.decode(sig).unwrap();
    assert_eq!(raw_sig.len(), 64);
    // the P-256 group order n
    let n = hex_bytes("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551");
    let mut der = vec![0x30, 0x44, 0x02, 0x20];
    der.extend_from_slice(&raw_sig[..32]);
    der.extend_from_slice(&[0x02, 0x20]);
    der.extend_from_slice(&raw_sig[32..]);
    let mut flipped = raw_sig.clone();
    flipped[63] ^= 1;
    let r_n = [n.clone(), raw_sig[32..].to_vec()].concat();
    let s_n = [raw_sig[..32].to_vec(), n.clone()].concat();
    for bad in [
        Vec::new(),
        vec![0; 64],
        raw_sig[..63].to_vec(),
        [raw_sig.clone(), vec![0]].concat(),
        der,
        flipped,
        r_n,
        s_n,
        [n.clone(), n].concat(),
        vec![0xff; 64],
        vec![0; 4096],
    ] {
        assert_401(&lab, &format!("{input}.{}", URL_SAFE_NO_PAD.encode(&bad))).await;
    }
    // not base64url at all, padding, and a standard-alphabet signature
    for sig in ["!!!", "AAAA====", &base64::engine::general_purpose::STANDARD.encode(&raw_sig)] {
        if sig.contains(['+', '/', '=', '!']) {
            assert_401(&lab, &format!("{input}.{sig}")).await;
        }
    }
    lab.up.assert_untouched();
    let a = send(lab.addr(), "GET", ORDERS, &[("authorization", &format!("Bearer {good}"))], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

#[tokio::test]
async fn finding_a_jwks_endpoint_kept_down_fails_closed_after_max_staleness() {
    let server = JwksServer::start(vec![jwk("rsa1.key.pem", "k1")]).await;
    let jwt = icegate::config::JwtIdentity { jwks_cache_secs: 1, jwks_max_stale_secs: 2, ..server.config(1) };
    icegate::serve::pipeline::identity::validate_jwt(&jwt).unwrap();
    let clock = Clock::manual();
    let c = identity_on(jwt, vec![Provider::Jwt], &clock);
    let token = sign(Algorithm::RS256, &rsa("rsa1.key.pem"), Some("k1"), &claims(json!({})));
    let unnamed = sign(Algorithm::RS256, &rsa("rsa1.key.pem"), None, &claims(json!({})));
    assert!(who(&c, &token).await.is_ok());
    server.failing.store(true, Ordering::SeqCst);
    clock.advance(Duration::from_millis(1_200));
    assert!(who(&c, &token).await.is_ok(), "within max staleness the last good keys serve");
    clock.advance(Duration::from_millis(1_000));
    let m = refused(&c, &token).await;
    assert!(m.contains("k1"), "{m}");
    assert!(who(&c, &unnamed).await.is_err(), "a token without kid fails closed too");
    // the endpoint recovers: the next fetch (after the cooldown) restores service
    server.failing.store(false, Ordering::SeqCst);
    clock.advance(Duration::from_millis(1_100));
    assert_eq!(who(&c, &token).await.unwrap().user, "alice");
    // and the setting cannot be shorter than the cache period
    let bad = icegate::config::JwtIdentity { jwks_cache_secs: 10, jwks_max_stale_secs: 5, ..server.config(1) };
    let e = icegate::serve::pipeline::identity::validate_jwt(&bad).unwrap_err().to_string();
    assert!(e.contains("jwks_max_stale_secs"), "{e}");
}

#[tokio::test]
async fn tokens_outside_their_time_or_audience_are_401_at_the_gate() {
    let lab = jwt_lab().await;
    let key = rsa("rsa1.key.pem");
    for extra in [
        json!({ "exp": now() - 120 }),
        json!({ "nbf": now() + 120 }),
        json!({ "aud": "someone-else" }),
        json!({ "aud": ["someone-else", "x"] }),
        json!({ "iss": "https://evil.example" }),
        json!({ "exp": null }),
        json!({ "exp": "never" }),
        json!({ "sub": null }),
    ] {
        assert_401(&lab, &sign(Algorithm::RS256, &key, None, &claims(extra))).await;
    }
    lab.up.assert_untouched();
}
