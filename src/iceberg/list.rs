//! List responses: reading their entries and keeping the ones a caller may see.
//!
//! Only each entry's name is parsed; kept entries are copied byte for byte, and the rest of the
//! envelope passes through raw, so filtering costs a strict check and one streaming pass, with
//! no re-serialization of what passes through (DESIGN.md §4 "Lists").

mod entry;

use super::json::{self, JsonError};
use super::{Namespace, OperationId, TableIdent};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::error::Category;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use thiserror::Error;

/// The four list operations; they differ in the key and the shape of their entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListKind {
    Namespaces,
    Tables,
    Views,
    Functions,
}

impl ListKind {
    pub fn for_operation(op: OperationId) -> Option<Self> {
        match op {
            OperationId::ListNamespaces => Some(Self::Namespaces),
            OperationId::ListTables => Some(Self::Tables),
            OperationId::ListViews => Some(Self::Views),
            OperationId::ListFunctions => Some(Self::Functions),
            _ => None,
        }
    }

    /// The top-level key of the response's entries.
    pub fn list_key(self) -> &'static str {
        match self {
            Self::Namespaces => "namespaces",
            Self::Tables | Self::Views | Self::Functions => "identifiers",
        }
    }
}

/// One listed object, by name: a namespace, or a table, view or function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Namespace(Namespace),
    Object(TableIdent),
}

/// A list response icegate must filter but cannot read: 502, never passed through (DESIGN.md §7).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ListError {
    #[error("upstream list response is not valid: {0}")]
    Json(#[from] JsonError),
    #[error("upstream list response is not valid: it has no `{0}`")]
    MissingList(&'static str),
    #[error("upstream list response is not valid: {0}")]
    Shape(String),
}

impl ListError {
    pub fn status(&self) -> u16 {
        502
    }
}

const TOKEN_KEY: &str = "next-page-token";

/// A filtered page: the kept entries as the upstream sent them, the upstream's page token, and
/// the other top-level fields raw, in their order.
#[derive(Clone, Debug, Default)]
pub struct ListPage {
    fields: Vec<Field>,
    kept: Vec<Box<RawValue>>,
    next_page_token: Option<String>,
    hidden: usize,
}

#[derive(Clone, Debug)]
enum Field {
    /// Where the entries stood.
    List,
    /// Where `next-page-token` stood.
    Token,
    Other(String, Box<RawValue>),
}

impl ListPage {
    /// The kept entries, in upstream order, byte for byte.
    pub fn visible(&self) -> impl Iterator<Item = &RawValue> {
        self.kept.iter().map(|raw| &**raw)
    }

    /// The upstream's `next-page-token`; absent and `null` are both none.
    pub fn next_page_token(&self) -> Option<&str> {
        self.next_page_token.as_deref()
    }

    /// Entries removed: the ones the caller may not see and the ones without a valid name.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Adds the next upstream page of the same list: its entries after these, its token in
    /// place of this one; the other fields stay this page's.
    pub fn append(&mut self, next: ListPage) {
        self.kept.extend(next.kept);
        self.hidden += next.hidden;
        self.next_page_token = next.next_page_token;
    }

    /// The response to send: the kept entries, the other fields unchanged, and
    /// `next-page-token` replaced by `next_page_token` (omitted when `None`).
    pub fn render(&self, kind: ListKind, next_page_token: Option<&str>) -> Vec<u8> {
        let entries: usize = self.kept.iter().map(|raw| raw.get().len() + 1).sum();
        let others: usize = self.fields.iter().map(Field::len_hint).sum();
        let mut out = Vec::with_capacity(entries + others + 64);
        let mut sep = Separator::default();
        out.push(b'{');
        let mut token_written = false;
        for field in &self.fields {
            match field {
                Field::List => {
                    sep.key(&mut out, kind.list_key());
                    out.push(b'[');
                    for (i, raw) in self.kept.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        out.extend_from_slice(raw.get().as_bytes());
                    }
                    out.push(b']');
                }
                Field::Token => {
                    if let Some(token) = next_page_token {
                        sep.key(&mut out, TOKEN_KEY);
                        push_string(&mut out, token);
                    }
                    token_written = true;
                }
                Field::Other(key, raw) => {
                    sep.key(&mut out, key);
                    out.extend_from_slice(raw.get().as_bytes());
                }
            }
        }
        if let (false, Some(token)) = (token_written, next_page_token) {
            sep.key(&mut out, TOKEN_KEY);
            push_string(&mut out, token);
        }
        out.push(b'}');
        out
    }
}

impl Field {
    fn len_hint(&self) -> usize {
        match self {
            Self::Other(key, raw) => key.len() + raw.get().len() + 4,
            Self::List | Self::Token => 24,
        }
    }
}

/// Writes `,` before every key but the first.
#[derive(Default)]
struct Separator {
    started: bool,
}

impl Separator {
    fn key(&mut self, out: &mut Vec<u8>, key: &str) {
        if self.started {
            out.push(b',');
        }
        self.started = true;
        push_string(out, key);
        out.push(b':');
    }
}

/// A JSON string literal; written by hand since writing to a `Vec` cannot fail, and
/// serde_json's writer would make that a `Result`.
fn push_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if c < ' ' => out.extend_from_slice(format!("\\u{:04x}", u32::from(c)).as_bytes()),
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out.push(b'"');
}

/// Reads an upstream list response of `kind` and keeps the entries `keep` accepts. An entry
/// without a name icegate could authorize (wrong shape, a level with `.`) is hidden without
/// asking `keep`. The response is held to [`json::check_strict`] as a whole, checked piece by
/// piece as it streams by, so that the document is not walked twice.
pub fn filter(
    kind: ListKind,
    bytes: &[u8],
    separators: &[String],
    mut keep: impl FnMut(&Entry) -> bool,
) -> Result<ListPage, ListError> {
    let text = std::str::from_utf8(bytes).map_err(|_| JsonError::InvalidUtf8)?;
    if text.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        return Err(JsonError::Empty.into());
    }
    let mut page = ListPage::default();
    let reason = Cell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    // raw values are captured without recursion, and each is then walked within the depth bound
    de.disable_recursion_limit();
    let envelope = Envelope { kind, separators, keep: &mut keep, page: &mut page, reason: &reason };
    if let Err(err) = envelope.deserialize(&mut de) {
        return Err(match reason.take() {
            Some(why) => ListError::Json(why),
            None if err.classify() == Category::Data => ListError::Shape(err.to_string()),
            None => ListError::Json(JsonError::Syntax(err.to_string())),
        });
    }
    de.end().map_err(|_| JsonError::TrailingData)?;
    if !page.fields.iter().any(|f| matches!(f, Field::List)) {
        return Err(ListError::MissingList(kind.list_key()));
    }
    Ok(page)
}

/// Depth of the values directly inside the envelope object, as [`json::check_strict_nested`]
/// counts it.
const FIELD_DEPTH: usize = 1;

/// The top-level object, read in one pass: entries are judged as they stream by.
struct Envelope<'a, F> {
    kind: ListKind,
    separators: &'a [String],
    keep: &'a mut F,
    page: &'a mut ListPage,
    /// The strictness error behind a failed read; serde's own errors carry only text.
    reason: &'a Cell<Option<JsonError>>,
}

impl<F> Envelope<'_, F> {
    fn fail<E: de::Error>(&self, why: JsonError) -> E {
        let err = E::custom(&why);
        self.reason.set(Some(why));
        err
    }
}

impl<'de, F: FnMut(&Entry) -> bool> DeserializeSeed<'de> for Envelope<'_, F> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: FnMut(&Entry) -> bool> Visitor<'de> for Envelope<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an object with `{}`", self.kind.list_key())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        while let Some(key) = map.next_key_seed(json::Key)? {
            if keys.contains(&key) {
                return Err(self.fail(JsonError::DuplicateKey(json::quote(&key))));
            }
            if key == self.kind.list_key() {
                let entries = Entries {
                    kind: self.kind,
                    separators: self.separators,
                    keep: &mut *self.keep,
                    reason: self.reason,
                };
                let (kept, hidden) = map.next_value_seed(entries)?;
                self.page.kept = kept;
                self.page.hidden = hidden;
                self.page.fields.push(Field::List);
            } else if key == TOKEN_KEY {
                self.page.next_page_token = map.next_value()?;
                self.page.fields.push(Field::Token);
            } else {
                let raw: &'de RawValue = map.next_value()?;
                json::check_strict_nested(raw.get(), FIELD_DEPTH).map_err(|why| self.fail(why))?;
                self.page.fields.push(Field::Other(key.to_string(), raw.to_owned()));
            }
            keys.push(key);
        }
        Ok(())
    }
}

struct Entries<'a, F> {
    kind: ListKind,
    separators: &'a [String],
    keep: &'a mut F,
    reason: &'a Cell<Option<JsonError>>,
}

impl<'de, F: FnMut(&Entry) -> bool> DeserializeSeed<'de> for Entries<'_, F> {
    /// The kept entries and the hidden count.
    type Value = (Vec<Box<RawValue>>, usize);

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(&Entry) -> bool> Visitor<'de> for Entries<'_, F> {
    type Value = (Vec<Box<RawValue>>, usize);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of {}", self.kind.list_key())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut kept = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        let mut hidden = 0;
        while let Some(raw) = seq.next_element::<&'de RawValue>()? {
            match entry::read(self.kind, raw, self.separators) {
                Err(why) => {
                    let err = de::Error::custom(&why);
                    self.reason.set(Some(why));
                    return Err(err);
                }
                Ok(Some(e)) if (self.keep)(&e) => kept.push(raw.to_owned()),
                Ok(_) => hidden += 1,
            }
        }
        Ok((kept, hidden))
    }
}

#[cfg(test)]
mod tests;
