//! The Iceberg REST protocol as icegate reads it: operations, names, routes, bodies and lists.

pub mod body;
pub mod json;
pub mod list;
pub mod names;
pub mod path;
pub mod routes;

pub use names::{Namespace, TableIdent};

/// One Iceberg REST operation, named by its OpenAPI `operationId`.
///
/// `SignS3Request` is the legacy un-scoped signer of the S3 signer spec; it is
/// classified so that it can be refused by name (DESIGN.md §8).
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

    /// Whether the spec gives this operation a request body; a request of
    /// such an operation without one is 400 (DESIGN.md §5).
    pub fn has_request_body(self) -> bool {
        matches!(
            self,
            Self::GetToken
                | Self::CreateNamespace
                | Self::UpdateProperties
                | Self::CreateTable
                | Self::PlanTableScan
                | Self::FetchScanTasks
                | Self::RegisterTable
                | Self::UpdateTable
                | Self::SignRequest
                | Self::RenameTable
                | Self::ReportMetrics
                | Self::CommitTransaction
                | Self::CreateView
                | Self::ReplaceView
                | Self::RenameView
                | Self::RegisterView
                | Self::SignS3Request
        )
    }

    /// Whether icegate parses the request body to authorize (DESIGN.md §1).
    pub fn inspects_request_body(self) -> bool {
        matches!(
            self,
            Self::CreateNamespace
                | Self::UpdateProperties
                | Self::CreateTable
                | Self::RegisterTable
                | Self::UpdateTable
                | Self::RenameTable
                | Self::CommitTransaction
                | Self::SignRequest
                | Self::CreateView
                | Self::RegisterView
                | Self::ReplaceView
                | Self::RenameView
        )
    }

    /// Whether a response of this operation may carry vended credentials, so
    /// the request gets a credential scope (DESIGN.md §4).
    pub fn has_credential_scope(self) -> bool {
        matches!(
            self,
            Self::LoadTable
                | Self::CreateTable
                | Self::RegisterTable
                | Self::LoadCredentials
                | Self::PlanTableScan
                | Self::FetchPlanningResult
                | Self::FetchScanTasks
        )
    }

    /// Whether the operation acts on a catalog's objects (and so needs one); getConfig,
    /// getToken and the legacy signer do not.
    pub fn names_catalog(self) -> bool {
        !matches!(self, Self::GetConfig | Self::GetToken | Self::SignS3Request)
    }

    /// The list operations, whose responses are filtered per entry.
    pub fn is_list(self) -> bool {
        matches!(self, Self::ListNamespaces | Self::ListTables | Self::ListViews | Self::ListFunctions)
    }
}

impl std::fmt::Display for OperationId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
