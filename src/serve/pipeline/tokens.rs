//! Page tokens: the upstream's token sealed with an AEAD and bound to the caller and the listed
//! parent, so a token never shows a hidden name and cannot be replayed by another user or on
//! another list (docs/design.md §4 "Lists").

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};

const NONCE_LEN: usize = 12;

/// Seals and opens page tokens with one key.
pub struct TokenCodec {
    cipher: ChaCha20Poly1305,
}

impl std::fmt::Debug for TokenCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenCodec(..)")
    }
}

/// A 32-byte key from 64 hex characters.
pub fn parse_key(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.trim();
    if hex.len() != 64 {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(key)
}

impl TokenCodec {
    pub fn new(key: [u8; 32]) -> Self {
        Self { cipher: ChaCha20Poly1305::new(Key::from_slice(&key)) }
    }

    /// A codec with a random key: tokens are valid only within this process.
    pub fn random() -> Self {
        Self { cipher: ChaCha20Poly1305::new(&ChaCha20Poly1305::generate_key(&mut OsRng)) }
    }

    /// `binding` names the caller and the list (user, catalog, operation, parent).
    pub fn seal(&self, binding: &str, upstream_token: &str) -> Option<String> {
        let nonce = ChaCha20Poly1305::generate_nonce(&mut OsRng);
        let sealed =
            self.cipher.encrypt(&nonce, Payload { msg: upstream_token.as_bytes(), aad: binding.as_bytes() }).ok()?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Some(URL_SAFE_NO_PAD.encode(out))
    }

    /// The upstream token, or `None` when `token` was not sealed by this key for `binding`.
    pub fn open(&self, binding: &str, token: &str) -> Option<String> {
        let bytes = URL_SAFE_NO_PAD.decode(token).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let plain =
            self.cipher.decrypt(Nonce::from_slice(nonce), Payload { msg: sealed, aad: binding.as_bytes() }).ok()?;
        String::from_utf8(plain).ok()
    }
}

/// What a page token is bound to: the caller and the list it came from, so a token sealed for
/// one list cannot page another's (or another caller's).
pub fn binding(user: &str, route: &crate::core::iceberg::routes::Route) -> String {
    let ns = route.namespace.as_ref().map(ToString::to_string).unwrap_or_default();
    let parent = route.query.parent.as_ref().map(ToString::to_string).unwrap_or_default();
    format!("{user}\n{}\n{}\n{ns}\n{parent}", route.prefix.as_deref().unwrap_or_default(), route.operation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_open_only_for_their_binding_and_key() {
        let codec = TokenCodec::random();
        let token = codec.seal("alice|prod|listTables|sales", "secret_table_name").unwrap();
        assert!(!token.contains("secret"));
        assert_eq!(codec.open("alice|prod|listTables|sales", &token).as_deref(), Some("secret_table_name"));
        assert_eq!(codec.open("bob|prod|listTables|sales", &token), None);
        assert_eq!(codec.open("alice|prod|listTables|hr", &token), None);
        assert_eq!(TokenCodec::random().open("alice|prod|listTables|sales", &token), None);
        let mut tampered = token.clone().into_bytes();
        let last = tampered.len() - 2;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(codec.open("alice|prod|listTables|sales", &String::from_utf8(tampered).unwrap()), None);
        assert_eq!(codec.open("alice|prod|listTables|sales", "lineitem"), None);
    }

    #[test]
    fn keys_are_64_hex_characters() {
        assert!(parse_key(&"ab".repeat(32)).is_some());
        assert!(parse_key("abc").is_none());
        assert!(parse_key(&"zz".repeat(32)).is_none());
        let key = parse_key(&"01".repeat(32)).unwrap();
        let a = TokenCodec::new(key);
        let b = TokenCodec::new(key);
        let t = a.seal("x", "y").unwrap();
        assert_eq!(b.open("x", &t).as_deref(), Some("y"), "replicas sharing a key accept each other's tokens");
    }
}
