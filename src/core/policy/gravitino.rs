//! A Gravitino metalake as the policy source (docs/design.md §9): what was read from Gravitino's
//! REST API becomes a policy document in §3's format, written as canonical JSON, whose SHA-256
//! is the snapshot's content hash and which the one loader that loads policy files loads; its
//! YAML form is what `icegate policy export` prints. The reading itself (HTTP) is elsewhere.

mod document;
mod export;
pub mod wire;

pub use document::{Document, document};
pub use export::to_yaml;

use super::diagnostic::{LoadError, Loaded};
use super::load::{Source, load_sources};
use super::model::ObjectType;
use serde::Deserialize;
use std::path::{Path, PathBuf};
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

/// Parses a catalogs file strictly: `version: 1`, `default_catalog`, `catalogs`, nothing else.
pub fn parse_catalogs_file(path: &Path, text: &str) -> Result<CatalogsFile, GravitinoError> {
    let bad = |message: String| GravitinoError::CatalogsFile { path: path.to_owned(), message };
    let mut options = serde_saphyr::Options::default();
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    let file: CatalogsFile =
        serde_saphyr::from_str_with_options(text, options).map_err(|e| bad(e.without_snippet().to_string()))?;
    if file.version != 1 {
        return Err(bad(format!("unsupported version `{}`; expected 1", file.version)));
    }
    Ok(file)
}

/// Refuses a read that cannot be the metalake's whole policy: Gravitino's lists hide what the
/// caller may not see instead of answering 403, so an under-privileged account reads as empty.
/// `before` is the role count of the last good read, if any.
pub fn check_plausible(
    read: &Metalake,
    service_user: &str,
    before: Option<usize>,
    allow_no_roles: bool,
) -> Result<(), GravitinoError> {
    if !read.users.iter().any(|u| u.name == service_user) {
        return Err(GravitinoError::ServiceUserMissing(service_user.to_owned()));
    }
    match before {
        Some(before) if before > 0 && read.roles.is_empty() && !allow_no_roles => {
            Err(GravitinoError::NoRoles { before })
        }
        _ => Ok(()),
    }
}

/// The document as the one policy source a load reads: its canonical JSON, named
/// `gravitino:{metalake}` in diagnostics. Its content hash (`load::content_hash`) is `sha256:` +
/// the hex SHA-256 of that JSON.
pub fn source(document: &Document) -> Source {
    Source { path: PathBuf::from(format!("gravitino:{}", document.metalake)), text: document.canonical_json() }
}

/// Loads a source made by [`source`] into a snapshot, as a policy file is loaded.
pub fn load(source: Source) -> Result<Loaded, GravitinoError> {
    Ok(load_sources(vec![source])?)
}

/// The snapshot a Gravitino source holds before its first read: no users, so nothing is allowed;
/// it is never decided with (generation 0 is answered 503), but the decision state needs one.
pub fn placeholder(metalake: &str) -> Result<Loaded, GravitinoError> {
    let empty = Metalake { name: metalake.to_owned(), ..Metalake::default() };
    load(source(&document(&empty, None)?))
}

#[cfg(test)]
mod tests;
