//! The general reading of a list response, through serde, as icegate always read them: every
//! response the scanner gives up on (any with an error) is read again here, so that each keeps
//! exactly the result and the error it always had.
//!
//! Entries are captured raw and read by [`entry::read`]; the other fields are captured raw and
//! held to [`json::check_strict_nested`], so the response is held to [`json::check_strict`] as
//! a whole in one streaming pass.

use super::entry;
use super::model::{Entry, Field, ListError, Read, TOKEN_KEY};
use crate::core::iceberg::ListKind;
use crate::core::iceberg::json::{self, JsonError};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::error::Category;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::ops::Range;

/// Depth of the values directly inside the envelope object, as [`json::check_strict_nested`]
/// counts it.
pub(super) const FIELD_DEPTH: usize = 1;

/// What the scanner decided before it gave up: `keep`'s answers for the entries that start
/// before `until`, which are not asked again (`kept` holds the ones it kept, in order).
#[derive(Debug, Default)]
pub(super) struct Replay {
    pub(super) until: usize,
    pub(super) kept: Vec<Range<usize>>,
}

/// Reads `text`, a whole list response that is not blank; `keep` is asked about the entries
/// `replay` does not answer.
pub(super) fn read<F: FnMut(&Entry) -> bool>(
    kind: ListKind,
    text: &str,
    separators: &[String],
    keep: &mut F,
    replay: &Replay,
) -> Result<Read, ListError> {
    let mut page = Read::default();
    let reason = Cell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    // raw values are captured without recursion, and each is then walked within the depth bound
    de.disable_recursion_limit();
    let mut entries = Entries { kind, text, separators, keep, replay, replayed: 0, reason: &reason };
    let envelope = Envelope { entries: &mut entries, page: &mut page };
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

/// Where `raw`, a value borrowed from `text`, stands in it.
fn span(text: &str, raw: &RawValue) -> Range<usize> {
    let start = raw.get().as_ptr().addr() - text.as_ptr().addr();
    start..start + raw.get().len()
}

/// The top-level object, read in one pass: entries are judged as they stream by.
struct Envelope<'e, 'a, F> {
    entries: &'e mut Entries<'a, F>,
    page: &'e mut Read,
}

impl<'de, F: FnMut(&Entry) -> bool> DeserializeSeed<'de> for Envelope<'_, '_, F> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: FnMut(&Entry) -> bool> Visitor<'de> for Envelope<'_, '_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an object with `{}`", self.entries.kind.list_key())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        while let Some(key) = map.next_key_seed(json::Key)? {
            if keys.contains(&key) {
                return Err(self.entries.fail(JsonError::DuplicateKey(json::quote(&key))));
            }
            if key == self.entries.kind.list_key() {
                (self.page.kept, self.page.hidden) = map.next_value_seed(&mut *self.entries)?;
                self.page.fields.push(Field::List);
            } else if key == TOKEN_KEY {
                self.page.next_page_token = map.next_value()?;
                self.page.fields.push(Field::Token);
            } else {
                let raw: &'de RawValue = map.next_value()?;
                json::check_strict_nested(raw.get(), FIELD_DEPTH).map_err(|why| self.entries.fail(why))?;
                self.page.fields.push(Field::Other(key.to_string(), span(self.entries.text, raw)));
            }
            keys.push(key);
        }
        Ok(())
    }
}

/// The list array: each entry captured raw, read, and judged.
struct Entries<'a, F> {
    kind: ListKind,
    text: &'a str,
    separators: &'a [String],
    keep: &'a mut F,
    replay: &'a Replay,
    /// How many of `replay.kept` were met.
    replayed: usize,
    /// The strictness error behind a failed read; serde's own errors carry only text.
    reason: &'a Cell<Option<JsonError>>,
}

impl<F: FnMut(&Entry) -> bool> Entries<'_, F> {
    fn fail<E: de::Error>(&self, why: JsonError) -> E {
        let err = E::custom(&why);
        self.reason.set(Some(why));
        err
    }

    /// `keep`'s answer, or the scanner's when it already asked about the entry at `at`.
    fn keeps(&mut self, at: &Range<usize>, entry: &Entry) -> bool {
        if at.start >= self.replay.until {
            return (self.keep)(entry);
        }
        let kept = self.replay.kept.get(self.replayed).is_some_and(|k| k.start == at.start);
        self.replayed += usize::from(kept);
        kept
    }
}

impl<'de, F: FnMut(&Entry) -> bool> DeserializeSeed<'de> for &mut Entries<'_, F> {
    /// The kept entries and the hidden count.
    type Value = (Vec<Range<usize>>, usize);

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(&Entry) -> bool> Visitor<'de> for &mut Entries<'_, F> {
    type Value = (Vec<Range<usize>>, usize);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of {}", self.kind.list_key())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut kept = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        let mut hidden = 0;
        while let Some(raw) = seq.next_element::<&'de RawValue>()? {
            let at = span(self.text, raw);
            match entry::read(self.kind, raw.get(), self.separators) {
                Err(why) => return Err(self.fail(why)),
                Ok(Some(e)) if self.keeps(&at, &e) => kept.push(at),
                Ok(_) => hidden += 1,
            }
        }
        Ok((kept, hidden))
    }
}
