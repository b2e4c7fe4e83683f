//! Basic and Bearer parsing (the `simple` and `jwt` providers, and how `identify` chooses).
//! Properties: an accepted Basic credential names exactly the text before its first `:`; no
//! Bearer value is ever accepted (the fuzzer holds no private key, so any "valid" token would be
//! a forgery); an accepted user is never empty and holds no control character.
#![no_main]

use base64::Engine;
use icegate::config::{Identity, JwtIdentity, Provider};
use icegate::serve::pipeline::identity::{Identifier, Peer};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn setup() -> &'static (Identifier, tokio::runtime::Runtime) {
    static SETUP: OnceLock<(Identifier, tokio::runtime::Runtime)> = OnceLock::new();
    SETUP.get_or_init(|| {
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/jwt/");
        let jwt = JwtIdentity {
            issuer: Some("https://idp.example".into()),
            audience: Some("icegate".into()),
            algorithms: vec!["RS256".into(), "ES256".into(), "HS256".into()],
            hmac_secret: Some("a shared secret of at least 32 bytes".into()),
            public_keys: vec![format!("{data}rsa1.pub.pem").into(), format!("{data}ec1.pub.pem").into()],
            active_roles_claim: Some("active_roles".into()),
            ..JwtIdentity::default()
        };
        let identity = Identity { providers: vec![Provider::Jwt, Provider::Simple], jwt, ..Identity::default() };
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        (Identifier::new(&identity), rt)
    })
}

fuzz_target!(|data: &[u8]| {
    let (identity, rt) = setup();
    let Ok(value) = http::HeaderValue::from_bytes(data) else { return };
    let mut headers = http::HeaderMap::new();
    headers.insert(http::header::AUTHORIZATION, value);
    let peer = Peer::plain(std::net::Ipv4Addr::LOCALHOST.into());
    let Ok(principal) = rt.block_on(identity.identify(&headers, &peer)) else { return };
    assert!(!principal.user.is_empty() && !principal.user.chars().any(char::is_control), "{data:?}");
    let text = std::str::from_utf8(data).expect("an accepted credential is ASCII");
    let encoded = text.strip_prefix("Basic ").unwrap_or_else(|| panic!("only Basic is ever accepted here: {text:?}"));
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).expect("base64");
    let decoded = String::from_utf8(decoded).expect("UTF-8");
    assert_eq!(decoded.split(':').next(), Some(principal.user.as_str()), "{text:?}");
});
