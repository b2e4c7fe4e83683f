//! The shape of a policy file, format version 1 (docs/design.md §3), with source locations.
//!
//! Kinds (privilege names, conditions, types) stay strings here so that the validator can report
//! a bad one with its line; names keep their spans for the same reason.

use super::located::{Ignored, Located, Text, Word};
use super::model::{self, Condition, ObjectType};
use serde::{Deserialize, Deserializer};

/// A list without the room a growing vector leaves: most lists in a policy hold one or two
/// entries, for which a vector reserves four, and a large policy has a million of them.
fn exact<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Vec<T>, D::Error> {
    let mut list = Vec::deserialize(deserializer)?;
    list.shrink_to_fit();
    Ok(list)
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
    #[serde(default)]
    pub restrictions: Vec<Restriction>,
    pub restriction_enforcers: Option<Enforcers>,
}

/// One entry of `restrictions` (docs/design.md §8 "Read restrictions"). The filter and the
/// columns are read whole, with their line, and checked by the builder.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Restriction {
    pub name: Option<Text>,
    pub object: RestrictedObject,
    #[serde(default)]
    pub unless_roles: Vec<Text>,
    pub row_filter: Option<Located<serde_json::Value>>,
    pub columns: Option<Located<serde_json::Map<String, serde_json::Value>>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestrictedObject {
    #[serde(rename = "type")]
    pub kind: Word<ObjectType>,
    #[serde(rename = "fullName")]
    pub full_name: Text,
}

/// `restriction_enforcers`: the users and groups trusted to apply read restrictions.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Enforcers {
    #[serde(default)]
    pub users: Vec<Text>,
    #[serde(default)]
    pub groups: Vec<Text>,
}

/// One entry of `catalogs` (docs/design.md §2): a prefix the catalog is reached by (its name when
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
