//! One list entry's name: read strictly from its raw JSON, or rebuilt in place from names the
//! scanner already read.
//!
//! [`read`] takes any entry: the usual one has exactly the expected shape and is read and
//! checked at once; anything else (a wrong shape, a duplicate key) is walked again by
//! [`json::check_strict_nested`] only to tell a malformed entry, which is hidden, from a
//! response that is not strict JSON (502). [`Reused`] serves the scanner's common entries.

use super::model::Entry;
use crate::core::iceberg::ListKind;
use crate::core::iceberg::json::{self, JsonError};
use crate::core::iceberg::{Namespace, TableIdent, names};
use serde::Deserialize;
use serde::de::{self, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// Entries sit in the list array of the envelope object.
const ENTRY_DEPTH: usize = 2;

/// The entry's name; `Ok(None)` when it has none icegate could authorize.
pub(super) fn read(kind: ListKind, text: &str, separators: &[String]) -> Result<Option<Entry>, JsonError> {
    let entry = match kind {
        ListKind::Namespaces => {
            levels(text).map(|levels| Namespace::new(levels, separators).ok().map(Entry::Namespace))
        }
        ListKind::Tables | ListKind::Views => match parse(text, IdentVisitor) {
            Some((namespace, name, extras)) => {
                for extra in extras {
                    json::check_strict_nested(extra.get(), ENTRY_DEPTH + 1)?;
                }
                Some(object(namespace, name, separators))
            }
            None => None,
        },
        ListKind::Functions => levels(text).map(|mut levels| {
            // a `CatalogObjectIdentifier`: the namespace's levels, then the function's name
            let name = levels.pop()?;
            object(levels, name, separators)
        }),
    };
    match entry {
        Some(entry) => Ok(entry),
        None => json::check_strict_nested(text, ENTRY_DEPTH).map(|()| None),
    }
}

fn object(namespace: Vec<String>, name: String, separators: &[String]) -> Option<Entry> {
    let namespace = Namespace::new(namespace, separators).ok()?;
    TableIdent::new(namespace, name).ok().map(Entry::Object)
}

/// An array of strings; serde decodes every one, so lone surrogates fail here too.
fn levels(text: &str) -> Option<Vec<String>> {
    let mut de = serde_json::Deserializer::from_str(text);
    Vec::<String>::deserialize(&mut de).ok()
}

/// `None` on any error: the caller then decides between hidden and not strict.
fn parse<'de, V: Visitor<'de>>(text: &'de str, visitor: V) -> Option<V::Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    de::Deserializer::deserialize_map(&mut de, visitor).ok()
}

/// A `TableIdentifier` object: its namespace and name, and the raw values of other keys, which
/// must still be checked.
struct IdentVisitor;

impl<'de> Visitor<'de> for IdentVisitor {
    type Value = (Vec<String>, String, Vec<&'de RawValue>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table identifier")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut namespace, mut name) = (None, None);
        let mut others: Vec<Cow<'de, str>> = Vec::new();
        let mut extras = Vec::new();
        while let Some(key) = map.next_key_seed(json::Key)? {
            match &*key {
                "namespace" if namespace.is_none() => namespace = Some(map.next_value()?),
                "name" if name.is_none() => name = Some(map.next_value()?),
                "namespace" | "name" => return Err(de::Error::custom("duplicate key")),
                _ if others.contains(&key) => return Err(de::Error::custom("duplicate key")),
                _ => {
                    extras.push(map.next_value::<&'de RawValue>()?);
                    others.push(key);
                }
            }
        }
        match (namespace, name) {
            (Some(namespace), Some(name)) => Ok((namespace, name, extras)),
            _ => Err(de::Error::custom("missing field")),
        }
    }
}

/// The entry handed to `keep`, rebuilt in place for each entry the scanner reads: its namespace
/// stays while consecutive entries share it and its name's buffer is overwritten, so the usual
/// entry allocates nothing. Each method gives what [`read`] gives for an entry with these
/// decoded names.
#[derive(Debug, Default)]
pub(super) struct Reused {
    entry: Option<Entry>,
}

impl Reused {
    /// A table, view or function `levels`.`name`; `None` when `Namespace::new` or
    /// `TableIdent::new` would refuse it.
    pub(super) fn object(&mut self, levels: &[&str], name: &str, separators: &[String]) -> Option<&Entry> {
        if !names::name_ok(name) {
            return None;
        }
        match &mut self.entry {
            Some(Entry::Object(ident)) => {
                if !same(ident.namespace.levels(), levels) {
                    ident.namespace.set_levels(levels, separators).ok()?;
                }
                // the name passed `name_ok`, the checks `TableIdent::new` applies
                ident.name.clear();
                ident.name.push_str(name);
            }
            _ => self.entry = object(owned(levels), name.to_owned(), separators),
        }
        self.entry.as_ref()
    }

    /// A namespace of `levels`; `None` when `Namespace::new` would refuse it.
    pub(super) fn namespace(&mut self, levels: &[&str], separators: &[String]) -> Option<&Entry> {
        match &mut self.entry {
            Some(Entry::Namespace(namespace)) => namespace.set_levels(levels, separators).ok()?,
            _ => self.entry = Some(Entry::Namespace(Namespace::new(owned(levels), separators).ok()?)),
        }
        self.entry.as_ref()
    }
}

/// Whether the levels are equal: entries mostly repeat the previous entry's namespace, which is
/// then neither checked nor copied again.
fn same(levels: &[String], other: &[&str]) -> bool {
    crate::core::wordscan::same_texts(levels, other)
}

fn owned(levels: &[&str]) -> Vec<String> {
    levels.iter().map(|level| (*level).to_owned()).collect()
}
