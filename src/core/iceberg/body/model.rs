//! What an inspected body says, for authorization, and why a body is refused: the types the
//! parser ([`super::inspect`]) and the wire shapes ([`super::wire`]) both build.

use crate::core::iceberg::json::JsonError;
use crate::core::iceberg::names::NameError;
use crate::core::iceberg::{Namespace, TableIdent};
use thiserror::Error;

/// A body icegate refuses (400, 413 or 415; see [`BodyError::status`]).
#[derive(Debug, Error)]
pub enum BodyError {
    #[error("request body is missing; `{0}` requires one")]
    Missing(&'static str),
    #[error("request body is larger than the limit of {limit} bytes")]
    TooLarge { limit: usize },
    #[error("request body has content encoding `{0}`; icegate reads only unencoded bodies")]
    UnsupportedEncoding(String),
    #[error("request body has content type `{0}`; expected `application/json`")]
    UnsupportedMediaType(String),
    #[error("invalid request body: {0}")]
    Json(#[from] JsonError),
    #[error("invalid `{field}` in request body: {source}")]
    Name {
        field: String,
        #[source]
        source: NameError,
    },
    #[error("invalid request body: `{field}` must be {expected}")]
    Field { field: String, expected: &'static str },
    /// serde reads a struct from a JSON array too (`[[...]]` as a transaction); Jackson does not.
    #[error("invalid request body: it must be a JSON object")]
    NotAnObject,
    #[error("body identifier `{body}` differs from the path `{path}`")]
    IdentifierMismatch { body: String, path: String },
    #[error("`table-changes[{0}]` has no `identifier`; every change of a transaction must name its table")]
    MissingIdentifier(usize),
    #[error("table `{0}` appears more than once in `table-changes`")]
    RepeatedTable(String),
    /// Default deny holds for empty work: nothing to check is never "allowed" (docs/design.md §4).
    #[error("`table-changes` is empty; a transaction must change at least one table")]
    EmptyTransaction,
    /// The caller asked for a body the operation does not have inspected (a routing bug).
    #[error("`{0}` has no request body that icegate inspects")]
    NotInspected(&'static str),
    /// The route lacks the namespace or name its operation always has (a routing bug).
    #[error("the path of `{0}` names no table or view")]
    NoPathObject(&'static str),
}

/// What an inspected body says, for authorization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// `location`: the body gives the namespace a `location` property (any value).
    CreateNamespace {
        namespace: Namespace,
        location: bool,
    },
    /// `location`: the update sets or removes the namespace's `location`.
    UpdateProperties {
        location: bool,
    },
    /// `explicit_location`: the body has a non-null `location` (`""` included), or sets a
    /// location property (`write.data.path`, ...), which places data just as surely;
    /// `locations` are those locations' values (the location rule checks each).
    CreateTable {
        name: String,
        explicit_location: bool,
        stage_create: bool,
        locations: Vec<String>,
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableUpdate {
    /// It has an `assert-create` requirement (the commit of a staged create).
    pub asserts_create: bool,
    /// The locations of its `set-location` updates, in order.
    pub set_locations: Vec<String>,
    /// It sets or removes a location property (docs/design.md §4).
    pub location_properties: bool,
    /// The values its `set-properties` give location properties, in order.
    pub property_locations: Vec<String>,
    /// What it does to the table's schemas (docs/design.md §8 "A restriction keeps covering
    /// what it covered").
    pub schemas: SchemaChanges,
}

/// A commit's `add-schema`, `set-current-schema` and `remove-schemas` updates: what decides
/// which field a column name reads once the commit is applied.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchemaChanges {
    /// The `schema` of each `add-schema`, in order.
    pub added: Vec<serde_json::Value>,
    /// Each `set-current-schema`'s `schema-id`, with how many schemas the commit had added
    /// before it (`-1` names the last of those).
    pub current: Vec<(i64, usize)>,
    /// It has a `remove-schemas`.
    pub removes: bool,
}

impl SchemaChanges {
    /// It changes which schema is current, or removes schemas: what can move a column name
    /// onto another field.
    pub fn any(&self) -> bool {
        !self.current.is_empty() || self.removes
    }
}

impl TableUpdate {
    /// It has `set-location`, or sets or removes a location property: it chooses where the
    /// table's data lives.
    pub fn moves_data(&self) -> bool {
        !self.set_locations.is_empty() || self.location_properties
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableChange {
    pub identifier: TableIdent,
    pub update: TableUpdate,
}

/// A table-scoped remote-signing request (S3 signer spec's `S3SignRequest`, the catalog spec's
/// `RemoteSignRequest`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SignRequest {
    pub region: String,
    /// The HTTP method to sign, exactly as sent.
    pub method: String,
    pub uri: String,
    pub provider: Option<String>,
    /// The request body to sign (the XML of a batch delete), when present.
    pub body: Option<String>,
    /// Values of `x-amz-copy-source` headers (any case): a copy reads from there.
    pub copy_sources: Vec<String>,
    /// Values of `Host` headers (any case): a signer signs the host given there, not the `uri`'s.
    pub hosts: Vec<String>,
    /// Every header to sign, as sent: a signature makes each the caller's choice (docs/design.md §8).
    pub headers: Vec<(String, Vec<String>)>,
    /// The `properties` of the catalog's `remote-signing-config`, which clients send back
    /// unchanged and icegate relays to the upstream's signer.
    pub properties: Option<std::collections::BTreeMap<String, String>>,
}
