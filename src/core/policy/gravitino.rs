//! A Gravitino metalake as the policy source (docs/design.md §9): what was read from Gravitino's
//! REST API becomes a policy document in §3's format, written as canonical JSON, whose SHA-256
//! is the snapshot's content hash and which the one loader that loads policy files loads; its
//! YAML form is what `icegate policy export` prints. The reading itself (HTTP) is elsewhere.

mod document;
mod export;
mod read;
pub mod wire;

pub use document::{Document, document};
pub use export::to_yaml;
pub use read::{CatalogPrefix, CatalogsFile, GravitinoError, Metalake, ObjectOwner};

use super::diagnostic::Loaded;
use super::load::{Source, load_sources};
use std::path::{Path, PathBuf};

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
