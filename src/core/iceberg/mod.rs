//! The Iceberg REST protocol as icegate reads it: operations, names, routes, bodies and lists.

pub mod body;
pub mod errors;
pub mod json;
pub mod list;
pub mod location;
pub mod names;
pub mod path;
pub mod prefix;
pub mod routes;

pub use names::{Namespace, TableIdent};

/// One Iceberg REST operation, named by its OpenAPI `operationId`.
///
/// `SignS3Request` is the legacy un-scoped signer of the S3 signer spec; it is
/// classified so that it can be refused by name (docs/design.md §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OperationId {
    GetConfig,
    GetToken,
    ListNamespaces,
    CreateNamespace,
    LoadNamespaceMetadata,
    NamespaceExists,
    DropNamespace,
    UpdateProperties,
    ListTables,
    CreateTable,
    ListFunctions,
    LoadFunction,
    PlanTableScan,
    FetchPlanningResult,
    CancelPlanning,
    FetchScanTasks,
    RegisterTable,
    LoadTable,
    UpdateTable,
    DropTable,
    TableExists,
    UnregisterTable,
    LoadCredentials,
    SignRequest,
    RenameTable,
    ReportMetrics,
    CommitTransaction,
    ListViews,
    CreateView,
    LoadView,
    ReplaceView,
    DropView,
    ViewExists,
    RenameView,
    RegisterView,
    SignS3Request,
}

impl OperationId {
    /// Every operation, in the order of the OpenAPI files.
    pub const ALL: [OperationId; 36] = [
        Self::GetConfig,
        Self::GetToken,
        Self::ListNamespaces,
        Self::CreateNamespace,
        Self::LoadNamespaceMetadata,
        Self::NamespaceExists,
        Self::DropNamespace,
        Self::UpdateProperties,
        Self::ListTables,
        Self::CreateTable,
        Self::ListFunctions,
        Self::LoadFunction,
        Self::PlanTableScan,
        Self::FetchPlanningResult,
        Self::CancelPlanning,
        Self::FetchScanTasks,
        Self::RegisterTable,
        Self::LoadTable,
        Self::UpdateTable,
        Self::DropTable,
        Self::TableExists,
        Self::UnregisterTable,
        Self::LoadCredentials,
        Self::SignRequest,
        Self::RenameTable,
        Self::ReportMetrics,
        Self::CommitTransaction,
        Self::ListViews,
        Self::CreateView,
        Self::LoadView,
        Self::ReplaceView,
        Self::DropView,
        Self::ViewExists,
        Self::RenameView,
        Self::RegisterView,
        Self::SignS3Request,
    ];

    /// The OpenAPI `operationId`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GetConfig => "getConfig",
            Self::GetToken => "getToken",
            Self::ListNamespaces => "listNamespaces",
            Self::CreateNamespace => "createNamespace",
            Self::LoadNamespaceMetadata => "loadNamespaceMetadata",
            Self::NamespaceExists => "namespaceExists",
            Self::DropNamespace => "dropNamespace",
            Self::UpdateProperties => "updateProperties",
            Self::ListTables => "listTables",
            Self::CreateTable => "createTable",
            Self::ListFunctions => "listFunctions",
            Self::LoadFunction => "loadFunction",
            Self::PlanTableScan => "planTableScan",
            Self::FetchPlanningResult => "fetchPlanningResult",
            Self::CancelPlanning => "cancelPlanning",
            Self::FetchScanTasks => "fetchScanTasks",
            Self::RegisterTable => "registerTable",
            Self::LoadTable => "loadTable",
            Self::UpdateTable => "updateTable",
            Self::DropTable => "dropTable",
            Self::TableExists => "tableExists",
            Self::UnregisterTable => "unregisterTable",
            Self::LoadCredentials => "loadCredentials",
            Self::SignRequest => "signRequest",
            Self::RenameTable => "renameTable",
            Self::ReportMetrics => "reportMetrics",
            Self::CommitTransaction => "commitTransaction",
            Self::ListViews => "listViews",
            Self::CreateView => "createView",
            Self::LoadView => "loadView",
            Self::ReplaceView => "replaceView",
            Self::DropView => "dropView",
            Self::ViewExists => "viewExists",
            Self::RenameView => "renameView",
            Self::RegisterView => "registerView",
            Self::SignS3Request => "signS3Request",
        }
    }

    /// What icegate needs to know of the operation, written once per operation: a new one
    /// cannot be added without saying each fact, and none defaults silently.
    pub const fn facts(self) -> Facts {
        use BodyUse::{Inspected, None, Streamed};
        const fn f(body: BodyUse, credential_scope: bool, names_catalog: bool, list: Option<ListKind>) -> Facts {
            Facts { body, credential_scope, names_catalog, list }
        }
        match self {
            Self::GetConfig => f(None, false, false, Option::None),
            Self::GetToken => f(Streamed, false, false, Option::None),
            Self::ListNamespaces => f(None, false, true, Some(ListKind::Namespaces)),
            Self::CreateNamespace => f(Inspected, false, true, Option::None),
            Self::LoadNamespaceMetadata | Self::NamespaceExists | Self::DropNamespace => {
                f(None, false, true, Option::None)
            }
            Self::UpdateProperties => f(Inspected, false, true, Option::None),
            Self::ListTables => f(None, false, true, Some(ListKind::Tables)),
            Self::CreateTable => f(Inspected, true, true, Option::None),
            Self::ListFunctions => f(None, false, true, Some(ListKind::Functions)),
            Self::LoadFunction => f(None, false, true, Option::None),
            Self::PlanTableScan => f(Streamed, true, true, Option::None),
            Self::FetchPlanningResult => f(None, true, true, Option::None),
            Self::CancelPlanning => f(None, false, true, Option::None),
            Self::FetchScanTasks => f(Streamed, true, true, Option::None),
            Self::RegisterTable => f(Inspected, true, true, Option::None),
            Self::LoadTable => f(None, true, true, Option::None),
            Self::UpdateTable => f(Inspected, false, true, Option::None),
            Self::DropTable | Self::TableExists | Self::UnregisterTable => f(None, false, true, Option::None),
            Self::LoadCredentials => f(None, true, true, Option::None),
            Self::SignRequest | Self::RenameTable => f(Inspected, false, true, Option::None),
            Self::ReportMetrics => f(Streamed, false, true, Option::None),
            Self::CommitTransaction => f(Inspected, false, true, Option::None),
            Self::ListViews => f(None, false, true, Some(ListKind::Views)),
            Self::CreateView => f(Inspected, false, true, Option::None),
            Self::LoadView | Self::DropView | Self::ViewExists => f(None, false, true, Option::None),
            Self::ReplaceView | Self::RenameView | Self::RegisterView => f(Inspected, false, true, Option::None),
            Self::SignS3Request => f(Streamed, false, false, Option::None),
        }
    }

    /// Whether the spec gives this operation a request body; a request of
    /// such an operation without one is 400 (docs/design.md §5).
    pub const fn has_request_body(self) -> bool {
        !matches!(self.facts().body, BodyUse::None)
    }

    /// Whether icegate parses the request body to authorize (docs/design.md §1).
    pub const fn inspects_request_body(self) -> bool {
        matches!(self.facts().body, BodyUse::Inspected)
    }

    /// Whether a response of this operation may carry vended credentials, so
    /// the request gets a credential scope (docs/design.md §4).
    pub const fn has_credential_scope(self) -> bool {
        self.facts().credential_scope
    }

    /// Whether the operation acts on a catalog's objects (and so needs one); getConfig,
    /// getToken and the legacy signer do not.
    pub const fn names_catalog(self) -> bool {
        self.facts().names_catalog
    }

    /// The list operations, whose responses are filtered per entry.
    pub const fn is_list(self) -> bool {
        self.facts().list.is_some()
    }
}

/// What the request body of an operation is to icegate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyUse {
    /// The spec gives the request no body.
    None,
    /// A body the spec requires, streamed upstream as it comes.
    Streamed,
    /// A body read (bounded) and parsed to authorize (docs/design.md §1).
    Inspected,
}

/// The facts of one operation ([`OperationId::facts`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    pub body: BodyUse,
    /// A response may carry vended credentials, so the request gets a credential scope
    /// (docs/design.md §4).
    pub credential_scope: bool,
    /// The operation acts on a catalog's objects (and so needs one).
    pub names_catalog: bool,
    /// A list operation, whose response is filtered per entry.
    pub list: Option<ListKind>,
}

/// The four list operations; they differ in the key and the shape of their entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListKind {
    Namespaces,
    Tables,
    Views,
    Functions,
}

impl std::fmt::Display for OperationId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
