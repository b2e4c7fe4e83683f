//! The shape of a policy file, format version 1 (DESIGN.md §3), with source locations.
//!
//! Kinds (privilege names, conditions, types) stay strings here so that the validator can report
//! a bad one with its line; names keep their spans for the same reason.

use super::json;
use super::model::{self, Condition, ObjectType};
use serde::{Deserialize, Deserializer};
use serde_saphyr::Spanned;

/// A string and the line it was on. Read through the parser's `Spanned` and narrowed at once:
/// a `Spanned` holds two full locations, several times the string it wraps, and a large
/// policy has a million of them. On the JSON path (`super::json`) the line comes from where
/// the string lies in the text instead.
#[derive(Clone, Debug)]
pub struct Text {
    pub value: String,
    line: u32,
}

impl Text {
    pub(super) fn new(value: String, line: u32) -> Self {
        Self { value, line }
    }

    pub fn line(&self) -> u64 {
        u64::from(self.line)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if json::active() {
            return deserializer.deserialize_str(json::TextVisitor);
        }
        let s = Spanned::<String>::deserialize(deserializer)?;
        Ok(Self { line: narrow(s.referenced.line()), value: s.value })
    }
}

/// A keyword of the policy (an object type, a privilege, a condition), read into what it names
/// as it is parsed: a large policy has millions of them, and a string each was most of the
/// parsed form's allocations. The text is kept only when it names nothing, for the error.
#[derive(Clone, Debug)]
pub struct Word<T> {
    pub value: Result<T, Box<str>>,
    line: u32,
}

/// What a [`Word`] can name.
pub trait Keyword: Sized {
    fn parse(text: &str) -> Option<Self>;
}

impl<T: Keyword> Word<T> {
    pub(super) fn read(text: &str, line: u32) -> Self {
        Self { value: T::parse(text).ok_or_else(|| text.into()), line }
    }

    pub fn line(&self) -> u64 {
        u64::from(self.line)
    }
}

impl<'de, T: Keyword> Deserialize<'de> for Word<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if json::active() {
            return deserializer.deserialize_str(json::WordVisitor(std::marker::PhantomData));
        }
        let s = Spanned::<String>::deserialize(deserializer)?;
        Ok(Self::read(&s.value, narrow(s.referenced.line())))
    }
}

macro_rules! keyword {
    ($($ty:ty),+) => {$(
        impl Keyword for $ty {
            fn parse(text: &str) -> Option<Self> {
                <$ty>::parse(text)
            }
        }
    )+};
}

keyword!(ObjectType, model::Privilege, Condition);

/// A value other than a string (a number, a boolean), and the line it was on.
#[derive(Clone, Debug)]
pub struct Located<T> {
    pub value: T,
    line: u32,
}

impl<T> Located<T> {
    pub fn line(&self) -> u64 {
        u64::from(self.line)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if json::active() {
            let (value, line) = json::located(deserializer)?;
            return Ok(Self { value, line });
        }
        let s = Spanned::<T>::deserialize(deserializer)?;
        Ok(Self { line: narrow(s.referenced.line()), value: s.value })
    }
}

/// A value the model accepts and ignores (Gravitino's role `properties` and `audit`).
#[derive(Clone, Copy, Debug)]
pub struct Ignored;

impl<'de> Deserialize<'de> for Ignored {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if json::active() {
            return deserializer.deserialize_any(json::UniqueKeys);
        }
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| Self)
    }
}

/// A list without the room a growing vector leaves: most lists in a policy hold one or two
/// entries, for which a vector reserves four, and a large policy has a million of them.
fn exact<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Vec<T>, D::Error> {
    let mut list = Vec::deserialize(deserializer)?;
    list.shrink_to_fit();
    Ok(list)
}

fn narrow(line: u64) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX)
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    pub version: Located<u64>,
    pub metalake: Option<Text>,
    pub default_catalog: Option<Text>,
    pub require_known_user: Option<Located<bool>>,
    #[serde(default)]
    pub catalogs: Vec<CatalogPrefix>,
    #[serde(default)]
    pub users: Vec<User>,
    #[serde(default)]
    pub groups: Vec<Group>,
    #[serde(default)]
    pub roles: Vec<Role>,
    #[serde(default)]
    pub owners: Vec<Owner>,
}

/// One entry of `catalogs` (DESIGN.md §2): a prefix the catalog is reached by (its name when
/// absent), and whether the catalog compares names exactly.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogPrefix {
    pub prefix: Option<Text>,
    pub name: Text,
    pub case_sensitive: Option<Located<bool>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct User {
    pub name: Text,
    #[serde(default, deserialize_with = "exact")]
    pub roles: Vec<Text>,
    #[serde(default, deserialize_with = "exact")]
    pub groups: Vec<Text>,
    pub enabled: Option<bool>,
    pub default_active_roles: Option<Vec<Text>>,
    pub max_active_roles: Option<Vec<Text>>,
    #[serde(default, deserialize_with = "exact")]
    pub blocked_roles: Vec<Text>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    pub name: Text,
    #[serde(default, deserialize_with = "exact")]
    pub roles: Vec<Text>,
    pub default_active_roles: Option<Vec<Text>>,
    pub max_active_roles: Option<Vec<Text>>,
    #[serde(default, deserialize_with = "exact")]
    pub blocked_roles: Vec<Text>,
}

/// A role in the shape of Gravitino's role API, so an exported role drops in.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Role {
    pub name: Text,
    #[serde(rename = "securableObjects", default, deserialize_with = "exact")]
    pub securable_objects: Vec<SecurableObject>,
    /// Gravitino's role properties: accepted and ignored.
    #[serde(default, rename = "properties")]
    pub _properties: Option<Ignored>,
    /// Gravitino's audit info: accepted and ignored.
    #[serde(default, rename = "audit")]
    pub _audit: Option<Ignored>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecurableObject {
    #[serde(rename = "type")]
    pub kind: Word<ObjectType>,
    #[serde(rename = "fullName")]
    pub full_name: Text,
    #[serde(default, deserialize_with = "exact")]
    pub privileges: Vec<Privilege>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Privilege {
    pub name: Word<model::Privilege>,
    pub condition: Word<Condition>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Owner {
    #[serde(rename = "type")]
    pub kind: Word<ObjectType>,
    #[serde(rename = "fullName")]
    pub full_name: Text,
    pub owner: Text,
    #[serde(rename = "ownerType")]
    pub owner_type: Text,
}
