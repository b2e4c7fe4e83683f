//! Inspected request bodies: what a body adds to the objects an operation touches.
//!
//! Only the fields authorization reads are typed; the rest may be anything (forward
//! compatibility), but a field icegate reads with the wrong type is 400.

use super::json::{self, JsonError};
use super::names::{NameError, check_name};
use super::routes::Route;
use super::{Namespace, OperationId, TableIdent};
use serde::Deserialize;
use thiserror::Error;

/// A body icegate refuses (400, 413 or 415).
#[derive(Debug, Error)]
pub enum BodyError {
    #[error("request body is missing; `{0}` requires one")]
    Missing(&'static str),
    #[error("request body is larger than the limit of {limit} bytes")]
    TooLarge { limit: usize },
    #[error("request body has content encoding `{0}`; send it unencoded")]
    UnsupportedEncoding(String),
    #[error("request body has content type `{0}`; expected `application/json`")]
    UnsupportedMediaType(String),
    #[error("invalid request body: {0}")]
    Json(#[from] JsonError),
    #[error("invalid name in request body: {0}")]
    Name(#[from] NameError),
    #[error("body identifier `{body}` differs from the path `{path}`")]
    IdentifierMismatch { body: String, path: String },
    #[error("transaction names table `{0}` more than once")]
    RepeatedTable(String),
    #[error("transaction change {0} has no `identifier`")]
    MissingIdentifier(usize),
    #[error("`{0}` does not inspect a request body")]
    NotInspected(&'static str),
}

impl BodyError {
    pub fn status(&self) -> u16 {
        match self {
            Self::TooLarge { .. } => 413,
            Self::UnsupportedEncoding(_) | Self::UnsupportedMediaType(_) => 415,
            _ => 400,
        }
    }
}

/// What an inspected body says, for authorization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    CreateNamespace {
        namespace: Namespace,
    },
    /// `explicit_location`: the body has a non-null `location` (`""` included).
    CreateTable {
        name: String,
        explicit_location: bool,
        stage_create: bool,
    },
    RegisterTable {
        name: String,
    },
    UpdateTable(TableUpdate),
    /// renameTable and renameView.
    Rename {
        source: TableIdent,
        destination: TableIdent,
    },
    /// Invariant: every change has an identifier and no table appears twice.
    CommitTransaction(Vec<TableChange>),
    SignRequest(SignRequest),
    CreateView {
        name: String,
    },
    RegisterView {
        name: String,
    },
    ReplaceView,
}

/// One table commit, as far as authorization cares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableUpdate {
    /// It has an `assert-create` requirement (the commit of a staged create).
    pub asserts_create: bool,
    /// It has `set-location`, or sets or removes a location property (DESIGN.md §4).
    pub moves_data: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableChange {
    pub identifier: TableIdent,
    pub update: TableUpdate,
}

/// A table-scoped remote-signing request (S3 signer spec's `S3SignRequest`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignRequest {
    pub region: String,
    /// The HTTP method to sign, exactly as sent.
    pub method: String,
    pub uri: String,
    pub provider: Option<String>,
    /// The request body to sign (the XML of a batch delete), when present.
    pub body: Option<String>,
}

/// The table properties that say where data and metadata live (DESIGN.md §8).
pub const LOCATION_PROPERTIES: [&str; 5] =
    ["location", "write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path"];

#[derive(Deserialize)]
struct RawIdent {
    namespace: Vec<String>,
    name: String,
}

impl RawIdent {
    fn checked(self, separators: &[String]) -> Result<TableIdent, NameError> {
        TableIdent::new(Namespace::new(self.namespace, separators)?, self.name)
    }
}

#[derive(Deserialize)]
struct Named {
    name: String,
}

#[derive(Deserialize)]
struct CreateNamespace {
    namespace: Vec<String>,
}

#[derive(Deserialize)]
struct CreateTable {
    name: String,
    #[serde(default)]
    location: Option<serde::de::IgnoredAny>,
    #[serde(default, rename = "stage-create")]
    stage_create: Option<bool>,
}

#[derive(Deserialize)]
struct RegisterTable {
    name: String,
    #[serde(rename = "metadata-location")]
    _metadata_location: String,
}

#[derive(Deserialize)]
struct Requirement {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct Update {
    action: String,
    #[serde(default)]
    updates: Option<std::collections::BTreeMap<String, serde::de::IgnoredAny>>,
    #[serde(default)]
    removals: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct Commit {
    #[serde(default)]
    identifier: Option<RawIdent>,
    #[serde(default)]
    requirements: Option<Vec<Requirement>>,
    #[serde(default)]
    updates: Option<Vec<Update>>,
}

impl Commit {
    fn update(&self) -> TableUpdate {
        let asserts_create = self.requirements.iter().flatten().any(|r| r.kind == "assert-create");
        let moves_data = self.updates.iter().flatten().any(|u| match u.action.as_str() {
            "set-location" => true,
            "set-properties" => u.updates.iter().flatten().any(|(k, _)| LOCATION_PROPERTIES.contains(&k.as_str())),
            "remove-properties" => u.removals.iter().flatten().any(|k| LOCATION_PROPERTIES.contains(&k.as_str())),
            _ => false,
        });
        TableUpdate { asserts_create, moves_data }
    }
}

#[derive(Deserialize)]
struct Transaction {
    #[serde(rename = "table-changes")]
    table_changes: Vec<Commit>,
}

#[derive(Deserialize)]
struct Rename {
    source: RawIdent,
    destination: RawIdent,
}

#[derive(Deserialize)]
struct Sign {
    region: String,
    method: String,
    uri: String,
    #[serde(rename = "headers")]
    _headers: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    body: Option<String>,
}

/// A single-table commit's identifier, when present, must be the table of the path.
fn check_identifier(route: &Route, ident: Option<RawIdent>, separators: &[String]) -> Result<(), BodyError> {
    let Some(ident) = ident else { return Ok(()) };
    let ident = ident.checked(separators)?;
    let path = match (&route.namespace, &route.name) {
        (Some(ns), Some(name)) => format!("{ns}.{name}"),
        _ => String::new(),
    };
    if route.namespace.as_ref() != Some(&ident.namespace) || route.name.as_deref() != Some(ident.name.as_str()) {
        return Err(BodyError::IdentifierMismatch { body: ident.to_string(), path });
    }
    Ok(())
}

/// Parses and checks the body of an inspected operation; `separators` as in `RouteOptions`.
pub fn inspect(route: &Route, bytes: &[u8], separators: &[String]) -> Result<Body, BodyError> {
    use OperationId as Op;
    let checked_name = |name: String| -> Result<String, BodyError> {
        check_name(&name)?;
        Ok(name)
    };
    Ok(match route.operation {
        Op::CreateNamespace => {
            let b: CreateNamespace = json::from_slice(bytes)?;
            Body::CreateNamespace { namespace: Namespace::new(b.namespace, separators)? }
        }
        Op::CreateTable => {
            let b: CreateTable = json::from_slice(bytes)?;
            Body::CreateTable {
                name: checked_name(b.name)?,
                explicit_location: b.location.is_some(),
                stage_create: b.stage_create.unwrap_or(false),
            }
        }
        Op::RegisterTable => {
            let b: RegisterTable = json::from_slice(bytes)?;
            Body::RegisterTable { name: checked_name(b.name)? }
        }
        Op::UpdateTable => {
            let mut b: Commit = json::from_slice(bytes)?;
            check_identifier(route, b.identifier.take(), separators)?;
            Body::UpdateTable(b.update())
        }
        Op::RenameTable | Op::RenameView => {
            let b: Rename = json::from_slice(bytes)?;
            Body::Rename { source: b.source.checked(separators)?, destination: b.destination.checked(separators)? }
        }
        Op::CommitTransaction => {
            let b: Transaction = json::from_slice(bytes)?;
            let mut changes: Vec<TableChange> = Vec::with_capacity(b.table_changes.len());
            for (i, mut change) in b.table_changes.into_iter().enumerate() {
                let identifier =
                    change.identifier.take().ok_or(BodyError::MissingIdentifier(i))?.checked(separators)?;
                if changes.iter().any(|c| c.identifier == identifier) {
                    return Err(BodyError::RepeatedTable(identifier.to_string()));
                }
                changes.push(TableChange { update: change.update(), identifier });
            }
            Body::CommitTransaction(changes)
        }
        Op::SignRequest => {
            let b: Sign = json::from_slice(bytes)?;
            Body::SignRequest(SignRequest {
                region: b.region,
                method: b.method,
                uri: b.uri,
                provider: b.provider,
                body: b.body,
            })
        }
        Op::CreateView => {
            let b: Named = json::from_slice(bytes)?;
            Body::CreateView { name: checked_name(b.name)? }
        }
        Op::RegisterView => {
            let b: RegisterTable = json::from_slice(bytes)?;
            Body::RegisterView { name: checked_name(b.name)? }
        }
        Op::ReplaceView => {
            let mut b: Commit = json::from_slice(bytes)?;
            check_identifier(route, b.identifier.take(), separators)?;
            Body::ReplaceView
        }
        other => return Err(BodyError::NotInspected(other.as_str())),
    })
}

/// The inspected body's headers: JSON, unencoded (415 otherwise). A missing content type is
/// accepted, as clients omit it on small bodies.
pub fn check_content_headers(content_type: Option<&str>, content_encoding: Option<&str>) -> Result<(), BodyError> {
    if let Some(enc) = content_encoding {
        return Err(BodyError::UnsupportedEncoding(enc.to_owned()));
    }
    if let Some(ct) = content_type {
        let media = ct.split(';').next().unwrap_or_default().trim();
        if !media.eq_ignore_ascii_case("application/json") {
            return Err(BodyError::UnsupportedMediaType(ct.to_owned()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
