//! Strict JSON: the one reading of a request body that icegate and the upstream must share.
//!
//! serde_json alone lets a later duplicate key win silently and stops at 128 levels; icegate
//! rejects duplicates at any depth (two `source` keys could mean one thing to icegate and
//! another upstream) and accepts up to [`MAX_DEPTH`] levels, which real Iceberg schemas reach.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::fmt;
use thiserror::Error;

/// The deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 256;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum JsonError {
    #[error("body is empty")]
    Empty,
    #[error("body is not valid UTF-8")]
    InvalidUtf8,
    #[error("duplicate key `{0}`")]
    DuplicateKey(String),
    #[error("nesting deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error("{0}")]
    Syntax(String),
    #[error("unexpected shape: {0}")]
    Type(String),
}

/// Checks that `bytes` is one strict JSON value (DESIGN.md §7).
pub fn check_strict(bytes: &[u8]) -> Result<(), JsonError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(JsonError::Empty);
    }
    if std::str::from_utf8(bytes).is_err() {
        return Err(JsonError::InvalidUtf8);
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let outcome = Strict { depth: 0 }.deserialize(&mut de).and_then(|()| de.end());
    outcome.map_err(|e| classify(&e))
}

/// [`check_strict`], then a typed read with the same depth allowance.
pub fn from_slice<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, JsonError> {
    check_strict(bytes)?;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    T::deserialize(&mut de).map_err(|e| JsonError::Type(strip_position(&e.to_string())))
}

const DUPLICATE: &str = "icegate: duplicate key ";
const TOO_DEEP: &str = "icegate: too deep";

fn classify(e: &serde_json::Error) -> JsonError {
    let text = e.to_string();
    if let Some(rest) = text.strip_prefix(DUPLICATE) {
        return JsonError::DuplicateKey(strip_position(rest));
    }
    if text.starts_with(TOO_DEEP) {
        return JsonError::TooDeep;
    }
    JsonError::Syntax(text)
}

/// serde_json appends " at line L column C" to messages; keys must not carry it.
fn strip_position(s: &str) -> String {
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s.to_owned(),
    }
}

/// Visits a value, checking keys and depth, keeping nothing but the key sets of open objects.
struct Strict {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Strict {
    fn nested<E: de::Error>(&self) -> Result<Strict, E> {
        if self.depth >= MAX_DEPTH {
            return Err(E::custom(TOO_DEEP));
        }
        Ok(Strict { depth: self.depth + 1 })
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.nested()?;
        while seq.next_element_seed(Strict { depth: inner.depth })?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.nested()?;
        let mut keys: rustc_hash::FxHashSet<String> = rustc_hash::FxHashSet::default();
        // Keys come decoded, so `"a"` and `"\u0061"` collide as they should.
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(de::Error::custom(format!("{DUPLICATE}{key}")));
            }
            map.next_value_seed(Strict { depth: inner.depth })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn accepts_plain_json() {
        assert_eq!(check_strict(br#"{"a": [1, 2.5, "x", null, true, {"b": {}}]}"#), Ok(()));
    }

    #[test]
    fn rejects_duplicate_keys_at_any_depth_even_when_escaped() {
        assert_eq!(check_strict(br#"{"a":1,"a":2}"#), Err(JsonError::DuplicateKey("a".into())));
        assert_eq!(
            check_strict(br#"{"x":[{"source":{"name":"t"},"source":{"name":"u"}}]}"#),
            Err(JsonError::DuplicateKey("source".into()))
        );
        assert_eq!(check_strict(br#"{"a":1,"\u0061":2}"#), Err(JsonError::DuplicateKey("a".into())));
        assert_eq!(check_strict(br#"[{"a":1},{"a":2}]"#), Ok(()));
    }

    #[test]
    fn depth_limit_is_256() {
        assert_eq!(check_strict(nested(MAX_DEPTH).as_bytes()), Ok(()));
        assert_eq!(check_strict(nested(MAX_DEPTH + 1).as_bytes()), Err(JsonError::TooDeep));
        // far deeper input fails fast without exhausting the stack
        assert_eq!(check_strict(nested(100_000).as_bytes()), Err(JsonError::TooDeep));
    }

    #[test]
    fn a_deep_valid_schema_passes_the_typed_read_too() {
        let mut schema = String::from(r#"{"type":"struct","fields":[]}"#);
        // three levels per nested struct: 80 structs are about 243 levels
        for i in 0..80 {
            schema =
                format!(r#"{{"type":"struct","fields":[{{"id":{i},"name":"f","required":false,"type":{schema}}}]}}"#);
        }
        let body = format!(r#"{{"name":"t","schema":{schema}}}"#);
        assert_eq!(check_strict(body.as_bytes()), Ok(()));
        let v: serde_json::Value = from_slice(body.as_bytes()).unwrap();
        assert_eq!(v["name"], "t");
    }

    #[test]
    fn rejects_trailing_data_surrogates_bad_numbers_and_bad_utf8() {
        assert!(matches!(check_strict(b"{} {}"), Err(JsonError::Syntax(_))));
        assert!(matches!(check_strict(br#"{"a":"\ud800"}"#), Err(JsonError::Syntax(_))));
        assert!(matches!(check_strict(br#"{"a":NaN}"#), Err(JsonError::Syntax(_))));
        assert!(matches!(check_strict(br#"{"a":+1}"#), Err(JsonError::Syntax(_))));
        assert!(matches!(check_strict(br#"{"a":01}"#), Err(JsonError::Syntax(_))));
        assert_eq!(check_strict(b"{\"a\":\"\xff\"}"), Err(JsonError::InvalidUtf8));
        assert_eq!(check_strict(b"  "), Err(JsonError::Empty));
        assert_eq!(check_strict(br#"{"a":"\ud83d\ude00"}"#), Ok(()));
    }
}
