//! What a read of a metalake holds, the catalogs file beside it, and why a read is refused.

use super::wire;
use crate::core::policy::diagnostic::LoadError;
use crate::core::policy::model::ObjectType;
use serde::Deserialize;
use std::path::PathBuf;
use thiserror::Error;

/// What one poll read from a metalake.
#[derive(Clone, Debug, Default)]
pub struct Metalake {
    pub name: String,
    pub roles: Vec<wire::Role>,
    pub users: Vec<wire::User>,
    pub groups: Vec<wire::Group>,
    /// The owners of the metalake, its catalogs, schemas, tables and views (objects without
    /// one are absent).
    pub owners: Vec<ObjectOwner>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectOwner {
    pub kind: ObjectType,
    pub full_name: String,
    pub owner: wire::Owner,
}

/// `gravitino.catalogs_file`: what Gravitino does not hold (docs/design.md §2's prefixes).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CatalogsFile {
    pub version: u64,
    pub default_catalog: Option<String>,
    #[serde(default)]
    pub catalogs: Vec<CatalogPrefix>,
}

#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CatalogPrefix {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case_sensitive: Option<bool>,
}

#[derive(Debug, Error)]
pub enum GravitinoError {
    #[error(
        "role `{role}` holds unknown privilege `{privilege}` on {kind} `{full_name}`: the whole read is refused \
         (a DENY that cannot be read must not be dropped)"
    )]
    UnknownPrivilege { role: String, privilege: String, kind: ObjectType, full_name: String },
    #[error(
        "role `{role}` holds `{privilege}` on {kind} `{full_name}` with condition `{condition}`; expected ALLOW or DENY"
    )]
    UnknownCondition { role: String, privilege: String, kind: ObjectType, full_name: String, condition: String },
    #[error("the owner of {kind} `{full_name}` has type `{owner_type}`; expected USER or GROUP")]
    UnknownOwnerType { kind: ObjectType, full_name: String, owner_type: String },
    #[error("catalogs file `{}`: {message}", path.display())]
    CatalogsFile { path: PathBuf, message: String },
    #[error(
        "the metalake shows no roles where the last good read had {before}: refused (a service account that lost \
         its grants sees an empty metalake); set `gravitino.allow_no_roles = true` to accept it"
    )]
    NoRoles { before: usize },
    #[error(
        "the service account's user `{0}` is not among the metalake's users: refused (an account that cannot \
         see itself cannot see the policy either)"
    )]
    ServiceUserMissing(String),
    #[error("the metalake does not make a valid policy:\n{0}")]
    Invalid(#[from] LoadError),
}
