//! The list filter as it was before the scanner, kept verbatim (its pages hold copies of the
//! kept entries) as the reference the differential tests compare the new one against. One rule
//! changed since, in both: a token field the upstream wrote is rendered `null` when there is no
//! token to give back.

use super::super::{Entry, ListError, ListKind, TOKEN_KEY, entry, push_string};
use crate::core::iceberg::json::{self, JsonError};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::error::Category;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

#[derive(Clone, Debug, Default)]
pub struct ListPage {
    fields: Vec<Field>,
    pub kept: Vec<Box<RawValue>>,
    pub next_page_token: Option<String>,
    pub hidden: usize,
}

#[derive(Clone, Debug)]
enum Field {
    List,
    Token,
    Other(String, Box<RawValue>),
}

impl ListPage {
    pub fn append(&mut self, next: ListPage) {
        self.kept.extend(next.kept);
        self.hidden += next.hidden;
        self.next_page_token = next.next_page_token;
    }

    pub fn render(&self, kind: ListKind, next_page_token: Option<&str>) -> Vec<u8> {
        let mut out = Vec::new();
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
                    sep.key(&mut out, TOKEN_KEY);
                    match next_page_token {
                        Some(token) => push_string(&mut out, token),
                        None => out.extend_from_slice(b"null"),
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

const FIELD_DEPTH: usize = 1;

struct Envelope<'a, F> {
    kind: ListKind,
    separators: &'a [String],
    keep: &'a mut F,
    page: &'a mut ListPage,
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
            match entry::read(self.kind, raw.get(), self.separators) {
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
