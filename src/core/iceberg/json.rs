//! Strict JSON: the one reading of a request body that icegate and the upstream must share.
//!
//! The upstream's Jackson lets a later duplicate key win and nests far deeper than serde_json's
//! default, so a body is held to the reading on which the two cannot differ (docs/design.md §7): one
//! value, no duplicate keys (decoded, so `"a"` and `"\u0061"` collide), no lone surrogates, no
//! non-JSON numbers, and at most [`MAX_DEPTH`] levels.

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;
use thiserror::Error;

/// The deepest nesting of arrays and objects a body may have; a scalar at the top is depth 0.
pub const MAX_DEPTH: usize = 256;

/// Keys quoted in messages are cut here, so that an error never echoes a huge input.
const QUOTE_LIMIT: usize = 100;

/// Why a document is not strict JSON (400 for a request body).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum JsonError {
    #[error("body is empty")]
    Empty,
    #[error("body is not valid UTF-8")]
    InvalidUtf8,
    #[error("duplicate key `{0}`")]
    DuplicateKey(String),
    #[error("nesting is deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error("trailing data after the JSON value")]
    TrailingData,
    #[error("malformed JSON: {0}")]
    Syntax(String),
    #[error("unexpected shape: {0}")]
    Type(String),
}

/// `bytes` as text, or [`JsonError::InvalidUtf8`]. Whole answers pass here before they are
/// scanned, a large list among them: simdutf8 checks many bytes per instruction where
/// `std::str::from_utf8` checks a word at a time, and both accept exactly the UTF-8 texts.
pub fn text(bytes: &[u8]) -> Result<&str, JsonError> {
    simdutf8::basic::from_utf8(bytes).map_err(|_| JsonError::InvalidUtf8)
}

/// Checks that `bytes` is exactly one strict JSON value (surrounding whitespace allowed).
pub fn check_strict(bytes: &[u8]) -> Result<(), JsonError> {
    let text = text(bytes)?;
    if text.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        return Err(JsonError::Empty);
    }
    check_strict_nested(text, 0)
}

/// [`check_strict`] for a value that sits `depth` containers deep in a larger document (a raw
/// value cut out of it), so that the whole document's depth bound still holds.
pub fn check_strict_nested(text: &str, depth: usize) -> Result<(), JsonError> {
    let reason = Cell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    // The depth bound is ours, enforced before each descent; serde_json's own limit of 128
    // would only reject legitimate schemas.
    de.disable_recursion_limit();
    if let Err(err) = (Walk { depth, reason: &reason }).deserialize(&mut de) {
        return Err(reason.take().unwrap_or_else(|| classify(&err)));
    }
    de.end().map_err(|_| JsonError::TrailingData)
}

/// [`check_strict`], then a typed reading of the same bytes.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, JsonError> {
    from_slice_borrowed(bytes)
}

/// [`from_slice`] for types that borrow from the input (`&RawValue`, `Cow<str>`).
pub fn from_slice_borrowed<'de, T: de::Deserialize<'de>>(bytes: &'de [u8]) -> Result<T, JsonError> {
    check_strict(bytes)?;
    typed(serde_json::Deserializer::from_slice(bytes))
}

/// A typed reading of text that is part of a document which already passed [`check_strict`]
/// (a raw value cut out of it), so the strict walk is not repeated.
pub fn from_checked_str<'de, T: de::Deserialize<'de>>(text: &'de str) -> Result<T, JsonError> {
    typed(serde_json::Deserializer::from_str(text))
}

fn typed<'de, R, T>(mut de: serde_json::Deserializer<R>) -> Result<T, JsonError>
where
    R: serde_json::de::Read<'de>,
    T: de::Deserialize<'de>,
{
    de.disable_recursion_limit();
    let value = T::deserialize(&mut de).map_err(|e| classify(&e))?;
    de.end().map_err(|_| JsonError::TrailingData)?;
    Ok(value)
}

fn classify(err: &serde_json::Error) -> JsonError {
    match err.classify() {
        serde_json::error::Category::Data => JsonError::Type(err.to_string()),
        _ => JsonError::Syntax(err.to_string()),
    }
}

/// `s` made safe to quote in a message: escaped and cut to a bounded length.
pub fn quote(s: &str) -> String {
    let escaped: String = s.escape_debug().collect();
    match escaped.char_indices().nth(QUOTE_LIMIT) {
        Some((cut, _)) => format!("{}…", escaped.get(..cut).unwrap_or_default()),
        None => escaped,
    }
}

/// Walks one value without building it. serde's custom errors carry only text, so `reason`
/// carries the precise error out.
#[derive(Clone, Copy)]
struct Walk<'r> {
    depth: usize,
    reason: &'r Cell<Option<JsonError>>,
}

impl Walk<'_> {
    fn fail<E: de::Error>(self, why: JsonError) -> E {
        let err = E::custom(&why);
        self.reason.set(Some(why));
        err
    }

    /// The walker for the values inside a container: refuses before descending too far, so the
    /// stack stays bounded whatever the input.
    fn enter<E: de::Error>(self) -> Result<Self, E> {
        if self.depth >= MAX_DEPTH {
            return Err(self.fail(JsonError::TooDeep));
        }
        Ok(Self { depth: self.depth + 1, reason: self.reason })
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
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
        let inner = self.enter()?;
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.enter()?;
        let mut seen = Seen::default();
        while let Some(key) = map.next_key_seed(Key)? {
            if let Some(key) = seen.insert(key) {
                return Err(self.fail(JsonError::DuplicateKey(quote(&key))));
            }
            map.next_value_seed(inner)?;
        }
        Ok(())
    }
}

/// A seed for a decoded object key, borrowed when it has no escapes, for visitors that must
/// compare keys as [`check_strict`] does.
#[derive(Clone, Copy, Debug)]
pub struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

/// The keys of one object. Most objects are small, where a scan beats hashing.
enum Seen<'de> {
    Few(Vec<Cow<'de, str>>),
    Many(HashSet<Cow<'de, str>>),
}

impl Default for Seen<'_> {
    fn default() -> Self {
        Self::Few(Vec::new())
    }
}

impl<'de> Seen<'de> {
    const FEW: usize = 16;

    /// Records `key`; gives it back when it was already there.
    fn insert(&mut self, key: Cow<'de, str>) -> Option<Cow<'de, str>> {
        match self {
            Self::Few(keys) if keys.contains(&key) => Some(key),
            Self::Few(keys) if keys.len() < Self::FEW => {
                keys.push(key);
                None
            }
            Self::Few(keys) => {
                let mut set: HashSet<_> = keys.drain(..).collect();
                set.insert(key);
                *self = Self::Many(set);
                None
            }
            Self::Many(set) if set.contains(&key) => Some(key),
            Self::Many(set) => {
                set.insert(key);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests;
