//! A `config` map of a credential-bearing response (the table's, a storage credential's) or a
//! getConfig answer's object, read in place: its keys and values stay slices of the upstream's
//! answer unless icegate writes them, and it keeps the upstream's order. [`StringMap`] is what
//! the credential rules ask of such a map, so that they read the same over a `serde_json` map.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// A JSON object of string keys, each value its JSON text.
///
/// Invariant: keys are unique (a duplicate is refused when read, and [`ConfigMap::set`]
/// replaces), so removing a key removes every value a client could read for it.
#[derive(Clone, Debug, Default)]
pub struct ConfigMap<'a> {
    entries: Vec<(Cow<'a, str>, Cow<'a, RawValue>)>,
}

/// Up to this many keys a new key is checked against the others one by one; a larger map is
/// checked once, sorted, so that no upstream answer costs quadratic time.
const LINEAR_UP_TO: usize = 16;

impl<'a> ConfigMap<'a> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_ref())
    }

    /// The JSON text of `key`'s value.
    pub fn raw(&self, key: &str) -> Option<&str> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v.get())
    }

    /// Sets `key` to the JSON text `value`, where it was or else last.
    pub fn set_raw(&mut self, key: &str, value: Box<RawValue>) {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = Cow::Owned(value),
            None => self.entries.push((Cow::Owned(key.to_owned()), Cow::Owned(value))),
        }
    }

    /// The map as a `serde_json` value (tests and diagnostics).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// A map of `value`'s members, owned; `None` unless `value` is an object.
    pub fn from_value(value: &Value) -> Option<ConfigMap<'static>> {
        let entries = value
            .as_object()?
            .iter()
            .map(|(k, v)| Some((Cow::Owned(k.clone()), Cow::Owned(serde_json::value::to_raw_value(v).ok()?))))
            .collect::<Option<_>>()?;
        Some(ConfigMap { entries })
    }
}

/// Equal when the same keys hold the same JSON text, in the same order.
impl PartialEq for ConfigMap<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.entries.len() == other.entries.len()
            && self.entries.iter().zip(&other.entries).all(|((k, v), (l, w))| k == l && v.get() == w.get())
    }
}

/// What the credential rules read and change in a map of string properties.
pub trait StringMap {
    /// The value of `key` when it is a JSON string.
    fn string(&self, key: &str) -> Option<Cow<'_, str>>;
    fn has(&self, key: &str) -> bool;
    fn remove(&mut self, key: &str);
    fn retain_keys(&mut self, keep: impl FnMut(&str) -> bool);
    /// Sets `key` to the string `value`, where it was or else last.
    fn set(&mut self, key: &str, value: &str);
}

impl StringMap for ConfigMap<'_> {
    fn string(&self, key: &str) -> Option<Cow<'_, str>> {
        let text = self.raw(key)?;
        let inner = text.strip_prefix('"')?.strip_suffix('"')?;
        if inner.contains('\\') {
            return serde_json::from_str::<String>(text).ok().map(Cow::Owned);
        }
        Some(Cow::Borrowed(inner))
    }

    fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    fn remove(&mut self, key: &str) {
        self.entries.retain(|(k, _)| k != key);
    }

    fn retain_keys(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.entries.retain(|(k, _)| keep(k));
    }

    fn set(&mut self, key: &str, value: &str) {
        // A `String` always serializes.
        let Ok(value) = serde_json::value::to_raw_value(value) else { return };
        self.set_raw(key, value);
    }
}

impl StringMap for Map<String, Value> {
    fn string(&self, key: &str) -> Option<Cow<'_, str>> {
        self.get(key).and_then(Value::as_str).map(Cow::Borrowed)
    }

    fn has(&self, key: &str) -> bool {
        self.contains_key(key)
    }

    fn remove(&mut self, key: &str) {
        Map::remove(self, key);
    }

    fn retain_keys(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.retain(|k, _| keep(k));
    }

    fn set(&mut self, key: &str, value: &str) {
        self.insert(key.to_owned(), Value::String(value.to_owned()));
    }
}

impl Serialize for ConfigMap<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (key, value) in &self.entries {
            map.serialize_entry(key.as_ref(), value.as_ref())?;
        }
        map.end()
    }
}

/// Borrows from the input where it can (`serde_json::from_slice`): a value always, a key
/// unless it holds an escape.
impl<'de: 'a, 'a> Deserialize<'de> for ConfigMap<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MapVisitor)
    }
}

struct MapVisitor;

impl<'de> Visitor<'de> for MapVisitor {
    type Value = ConfigMap<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let mut entries: Vec<(Cow<'de, str>, Cow<'de, RawValue>)> = Vec::with_capacity(access.size_hint().unwrap_or(8));
        while let Some(Key(key)) = access.next_key()? {
            if entries.len() < LINEAR_UP_TO && entries.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom("duplicate key"));
            }
            let value: &'de RawValue = access.next_value()?;
            entries.push((key, Cow::Borrowed(value)));
        }
        if entries.len() > LINEAR_UP_TO {
            let mut keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_ref()).collect();
            keys.sort_unstable();
            if keys.windows(2).any(|w| w.first() == w.get(1)) {
                return Err(de::Error::custom("duplicate key"));
            }
        }
        Ok(ConfigMap { entries })
    }
}

/// A key, borrowed when the input holds it as it reads.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests;
