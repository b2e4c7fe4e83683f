//! Why a stage of the core stopped a request: one variant per reason, carrying the names its
//! message quotes, and the Iceberg error (status and `type`, docs/design.md §5, §7) each reason is
//! answered with. `crate::error` turns these into refusals, the serving layer's rescue
//! (`crate::serve::pipeline::rescue`) its own errors, and refusals into responses; `explain` reads the
//! status from here, offline.

use crate::core::iceberg::OperationId;
use crate::core::iceberg::body::BodyError;
use crate::core::iceberg::errors::ErrorKind;
use crate::core::iceberg::list::ListError;
use crate::core::iceberg::location::LocationError;
use crate::core::iceberg::path::PathError;
use crate::core::policy::authorize::LocationRefusal;
use crate::core::roles::{HeaderError, NarrowError};
use thiserror::Error;

/// A refusal decided by the core's stages.
#[derive(Debug, Error)]
pub enum CoreRefusal {
    #[error("{0}")]
    Target(PathError),
    #[error("query parameter `pageToken` is not a page token icegate issued to this caller for this list")]
    PageToken,
    #[error("{0}")]
    Header(HeaderError),
    #[error("route not recognized: `{method}` on this path is not an Iceberg REST operation icegate allows")]
    UnknownRoute { method: String },
    #[error("unknown catalog prefix `{prefix}`: icegate accepts only the prefixes its policy lists")]
    UnknownPrefix { prefix: String },
    #[error("a catalog prefix is required: the policy sets no `default_catalog`")]
    NoCatalog,
    /// A catalog of the policy that no upstream of this icegate serves (docs/design.md §7): names
    /// the prefix the caller sent, never the catalog the policy maps it to.
    #[error("{}", unserved(prefix.as_deref()))]
    Unserved { prefix: Option<String> },
    #[error("{0}")]
    Narrow(NarrowError),
    /// A denied operation: names the operation and the object the caller named (empty when it
    /// named none), and nothing from the policy, so the message cannot be used to learn it.
    #[error("{}", denied(*operation, object))]
    Denied { operation: OperationId, object: String },
    /// A rename the rename rule refuses (docs/design.md §4): says why in terms of the names the
    /// caller sent, and nothing of the policy's entries.
    #[error(
        "not authorized to {operation} `{from}` to `{to}`: the rename would change which policy entries apply; an \
         administrator must change the policy first"
    )]
    Rename { operation: OperationId, from: String, to: String },
    /// The 404 of a hidden-or-missing table or view (docs/design.md §4 "403 or 404").
    #[error("{} does not exist: `{object}`", if *view { "view" } else { "table" })]
    NotFound { view: bool, object: String },
    /// A name that would share a storage directory with an object of another kind (docs/design.md
    /// §4 "One name, one kind, one level").
    #[error("cannot create {created}: {existing} exists, and the two would share one storage location")]
    Collides { created: String, existing: &'static str },
    /// The upstream could not say whether a name about to be created collides: nothing is
    /// forwarded.
    #[error("cannot create {created} now: the upstream did not say whether an object of another kind has its name")]
    CollisionUnknown { created: String },
    /// A purge makes the catalog delete every file the table's metadata references, wherever it
    /// lies (docs/design.md §4 dropTable).
    #[error(
        "not authorized to purge `{object}`: a purge deletes every file the table's metadata references, wherever \
         it lies, so only the catalog's owner may request one; drop the table without `purgeRequested` and leave \
         its files to the administrator"
    )]
    Purge { object: String },
    /// A chosen location that is not a location icegate can compare (docs/design.md §4).
    #[error("invalid location: {0}")]
    Location(LocationError),
    /// A chosen location outside the directory of the table's namespace (the location rule).
    #[error(
        "not authorized to place data at `{location}`: without the catalog's ownership, a location must lie inside \
         the directory of the table's namespace, `{directory}`"
    )]
    LocationOutside { location: String, directory: String },
    /// The directory a chosen location is compared with is not known.
    #[error(
        "not authorized to place data at `{location}`: the directory of namespace `{namespace}` is not known, so \
         the location cannot be shown to lie inside it"
    )]
    NoNamespaceDirectory { location: String, namespace: String },
    /// The upstream could not say where a namespace's directory is: nothing is forwarded.
    #[error(
        "cannot check the location now: the upstream did not say where the directory of namespace `{namespace}` is"
    )]
    NamespaceDirectoryUnknown { namespace: String },
    #[error("{0}")]
    Body(BodyError),
    /// The message never quotes the upstream's bytes (an entry the caller may not see); the
    /// rescue logs the detail.
    #[error("the upstream's list response could not be read; icegate's log has the details")]
    List(ListError),
    #[error("a decision waited for an answer it should have had")]
    Unanswered,
    /// A caller a read restriction applies to, whose client the policy does not trust to
    /// enforce it (docs/design.md §8). Names the table the caller named, and no policy entry.
    #[error(
        "not authorized to {operation} `{table}`: the table has read restrictions (row filters or column masks) \
         that this client is not trusted to enforce; read it through an engine the catalog's administrator lists \
         as a restriction enforcer"
    )]
    Restricted { operation: OperationId, table: String },
    /// A rename or commit after which a read restriction would no longer cover what it covers
    /// (docs/design.md §8 "A restriction keeps covering what it covered"). Names the table the
    /// caller named, and no policy entry.
    #[error(
        "not authorized to {operation} `{table}`: the change would move data out from under a read restriction (a \
         row filter or column mask); an administrator must change the policy first"
    )]
    Uncovered { operation: OperationId, table: String },
    /// The upstream did not answer the load of a restricted table whose schemas a commit changes:
    /// nothing is forwarded.
    #[error(
        "cannot check the commit to `{table}` now: the upstream did not answer a load of the table, whose read \
         restrictions must keep covering the columns they name"
    )]
    TableMetadataUnknown { table: String },
}

fn unserved(prefix: Option<&str>) -> String {
    match prefix {
        Some(p) => format!("catalog prefix `{p}` is not served: no upstream of this icegate serves its catalog"),
        None => "the default catalog is not served: no upstream of this icegate serves it".to_owned(),
    }
}

fn denied(operation: OperationId, object: &str) -> String {
    match object {
        "" => format!("not authorized to {operation}"),
        _ => format!("not authorized to {operation} `{object}`"),
    }
}

impl CoreRefusal {
    /// The Iceberg error this refusal answers with.
    pub fn error_kind(&self) -> ErrorKind {
        match self {
            Self::Target(_) | Self::PageToken | Self::Header(_) | Self::Location(_) => ErrorKind::BadRequest,
            Self::UnknownRoute { .. }
            | Self::UnknownPrefix { .. }
            | Self::NoCatalog
            | Self::Unserved { .. }
            | Self::Narrow(_)
            | Self::Denied { .. }
            | Self::Rename { .. }
            | Self::Purge { .. }
            | Self::LocationOutside { .. }
            | Self::NoNamespaceDirectory { .. }
            | Self::Restricted { .. }
            | Self::Uncovered { .. } => ErrorKind::Forbidden,
            Self::NotFound { view: true, .. } => ErrorKind::NoSuchView,
            Self::NotFound { view: false, .. } => ErrorKind::NoSuchTable,
            Self::Collides { .. } => ErrorKind::AlreadyExists,
            Self::CollisionUnknown { .. }
            | Self::NamespaceDirectoryUnknown { .. }
            | Self::TableMetadataUnknown { .. } => ErrorKind::ServiceUnavailable,
            Self::Body(e) => body_error_kind(e),
            Self::List(_) => ErrorKind::BadGateway,
            Self::Unanswered => ErrorKind::ServiceFailure,
        }
    }

    /// The HTTP status of the Iceberg error this refusal answers with.
    pub fn status(&self) -> u16 {
        self.error_kind().status()
    }

    /// A policy decision `icegate explain` can show the reasons of (a denied operation).
    pub fn explainable(&self) -> bool {
        matches!(
            self,
            Self::Denied { .. }
                | Self::Rename { .. }
                | Self::Purge { .. }
                | Self::LocationOutside { .. }
                | Self::NoNamespaceDirectory { .. }
                | Self::Uncovered { .. }
        )
    }

    /// The `explain` options, beyond the request's method, target and caller, that reproduce
    /// this decision offline: a keep-covering refusal is decided from the request's body, and a
    /// commit's also from the table's metadata, which the served request loaded upstream.
    pub fn explain_inputs(&self) -> &'static [&'static str] {
        match self {
            Self::Uncovered { operation: OperationId::RenameTable | OperationId::RenameView, .. } => &["--body FILE"],
            Self::Uncovered { .. } => &["--body FILE", "--table-metadata FILE"],
            _ => &[],
        }
    }

    /// The refusal of the location rule's `refusal`.
    pub fn location(refusal: &LocationRefusal) -> Self {
        match refusal {
            LocationRefusal::Malformed(e) => Self::Location(e.clone()),
            LocationRefusal::Outside { location, directory } => {
                Self::LocationOutside { location: location.clone(), directory: directory.clone() }
            }
            LocationRefusal::NoDirectory { location, namespace } => {
                Self::NoNamespaceDirectory { location: location.clone(), namespace: namespace.clone() }
            }
        }
    }
}

/// The Iceberg error a refused request body answers with.
pub fn body_error_kind(e: &BodyError) -> ErrorKind {
    match e {
        BodyError::TooLarge { .. } => ErrorKind::RequestEntityTooLarge,
        BodyError::UnsupportedEncoding(_) | BodyError::UnsupportedMediaType(_) => ErrorKind::UnsupportedMediaType,
        _ => ErrorKind::BadRequest,
    }
}

/// What a stop carries: the core's [`CoreRefusal`], or the serving layer's answer, which holds the
/// core's refusals too (its rescue) and the refusals of what only the upstream knows.
pub trait StopAnswer: From<CoreRefusal> {
    /// The HTTP status answered.
    fn status(&self) -> u16;
    /// The message answered, which is also the reason a stop gives when it gives no other.
    fn message(&self) -> String;
}

impl StopAnswer for CoreRefusal {
    fn status(&self) -> u16 {
        CoreRefusal::status(self)
    }

    fn message(&self) -> String {
        self.to_string()
    }
}
