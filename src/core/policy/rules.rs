//! The rules of docs/design.md §4's table, each a formula in disjunctive normal form with the
//! text operators read in `explain`. Shorthands: TOP = own(metalake) ∨ own(catalog);
//! SOUC = own(schema) ∧ USE_CATALOG@; UCS = USE_CATALOG@ ∧ USE_SCHEMA@.

use super::eval::{Formula, Term};
use super::model::Privilege as P;

use Term::{OwnCatalog, OwnFunction, OwnMetalake, OwnSchema, OwnTable, OwnView, Priv};

const UC: Term = Priv(P::UseCatalog);
const US: Term = Priv(P::UseSchema);

/// A named formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// listNamespaces gate
    CatalogUse,
    /// loadNamespaceMetadata, namespaceExists
    NamespaceLoad,
    /// createNamespace, over the parent chain
    NamespaceCreate,
    /// dropNamespace, updateProperties; createTable with a location; registerTable
    SchemaOwner,
    /// a namespace's `location` (createNamespace, updateProperties)
    Top,
    /// listTables, listViews, listFunctions gate
    ListObjects,
    TableCreate,
    /// loadTable and the operations checked as it
    TableRead,
    TableExists,
    TableUpdate,
    /// updateTable before its body is read: refused only if refused whatever the body says
    TableUpdateAnyBody,
    /// dropTable, unregisterTable, data-moving updates, a cross-namespace rename's source
    TableOwner,
    /// the existence check behind a loadTable's 403-or-404
    TableExistence,
    ViewCreate,
    ViewRead,
    ViewExists,
    /// replaceView, dropView, a rename's source
    ViewOwner,
    /// the existence check behind a loadView's 403-or-404
    ViewExistence,
    FunctionRead,
    /// a credential scope is WRITE when this holds
    CredentialWrite,
    NamespaceEntry,
    TableEntry,
    ViewEntry,
    FunctionEntry,
}

impl Rule {
    pub fn formula(self) -> Formula {
        match self {
            Self::CatalogUse => &[&[UC], &[OwnMetalake], &[OwnCatalog]],
            Self::NamespaceLoad => {
                &[&[OwnMetalake], &[OwnCatalog], &[UC, OwnSchema], &[UC, US], &[UC, Priv(P::CreateSchema)]]
            }
            Self::NamespaceCreate => &[&[OwnMetalake], &[OwnCatalog], &[OwnSchema], &[UC, Priv(P::CreateSchema)]],
            Self::SchemaOwner => &[&[OwnMetalake], &[OwnCatalog], &[OwnSchema, UC]],
            Self::Top => &[&[OwnMetalake], &[OwnCatalog]],
            Self::ListObjects => &[&[OwnMetalake], &[OwnCatalog], &[UC, OwnSchema], &[UC, US]],
            Self::TableCreate => &[&[OwnMetalake], &[OwnCatalog], &[OwnSchema, UC], &[UC, US, Priv(P::CreateTable)]],
            Self::TableRead => &[
                &[OwnMetalake],
                &[OwnCatalog],
                &[OwnSchema, UC],
                &[UC, US, OwnTable],
                &[UC, US, Priv(P::SelectTable)],
                &[UC, US, Priv(P::ModifyTable)],
            ],
            Self::TableExists => &[
                &[OwnMetalake],
                &[OwnCatalog],
                &[OwnSchema, UC],
                &[UC, US, OwnTable],
                &[UC, US, OwnView],
                &[UC, US, Priv(P::SelectTable)],
                &[UC, US, Priv(P::ModifyTable)],
                &[UC, US, Priv(P::CreateTable)],
                &[UC, US, Priv(P::SelectView)],
                &[UC, US, Priv(P::CreateView)],
            ],
            Self::TableUpdate => {
                &[&[OwnMetalake], &[OwnCatalog], &[OwnSchema, UC], &[UC, US, OwnTable], &[UC, US, Priv(P::ModifyTable)]]
            }
            Self::TableUpdateAnyBody => &[
                &[OwnMetalake],
                &[OwnCatalog],
                &[OwnSchema, UC],
                &[UC, US, OwnTable],
                &[UC, US, Priv(P::ModifyTable)],
                &[UC, US, Priv(P::CreateTable)],
            ],
            Self::TableOwner => &[&[OwnMetalake], &[OwnCatalog], &[OwnSchema, UC], &[UC, US, OwnTable]],
            Self::TableExistence => &[
                &[UC, US, Priv(P::CreateTable)],
                &[UC, US, Priv(P::SelectView)],
                &[UC, US, Priv(P::CreateView)],
                &[UC, US, OwnView],
            ],
            Self::ViewCreate => &[&[OwnMetalake], &[OwnCatalog], &[OwnSchema, UC], &[UC, US, Priv(P::CreateView)]],
            Self::ViewRead => {
                &[&[OwnMetalake], &[OwnCatalog], &[OwnSchema, UC], &[UC, US, OwnView], &[UC, US, Priv(P::SelectView)]]
            }
            Self::ViewExists => &[
                &[OwnMetalake],
                &[OwnCatalog],
                &[OwnSchema, UC],
                &[UC, US, OwnView],
                &[UC, US, Priv(P::SelectView)],
                &[UC, US, Priv(P::CreateView)],
            ],
            Self::ViewOwner => &[&[OwnMetalake], &[OwnCatalog], &[OwnSchema, UC], &[UC, US, OwnView]],
            Self::ViewExistence => &[
                &[UC, US, Priv(P::CreateView)],
                &[UC, US, OwnTable],
                &[UC, US, Priv(P::SelectTable)],
                &[UC, US, Priv(P::ModifyTable)],
                &[UC, US, Priv(P::CreateTable)],
            ],
            Self::FunctionRead => &[
                &[OwnMetalake],
                &[OwnCatalog],
                &[OwnSchema, UC],
                &[UC, US, OwnFunction],
                &[UC, US, Priv(P::ExecuteFunction)],
                &[UC, US, Priv(P::ModifyFunction)],
            ],
            Self::CredentialWrite => {
                &[&[OwnMetalake], &[OwnCatalog], &[OwnSchema], &[OwnTable], &[Priv(P::ModifyTable)]]
            }
            Self::NamespaceEntry => &[&[OwnMetalake], &[OwnCatalog], &[OwnSchema], &[US]],
            Self::TableEntry => &[
                &[OwnMetalake],
                &[OwnCatalog],
                &[OwnSchema],
                &[OwnTable],
                &[Priv(P::SelectTable)],
                &[Priv(P::ModifyTable)],
            ],
            Self::ViewEntry => &[&[OwnMetalake], &[OwnCatalog], &[OwnSchema], &[OwnView], &[Priv(P::SelectView)]],
            Self::FunctionEntry => &[
                &[OwnMetalake],
                &[OwnCatalog],
                &[OwnSchema],
                &[OwnFunction],
                &[Priv(P::ExecuteFunction)],
                &[Priv(P::ModifyFunction)],
            ],
        }
    }

    /// The formula as docs/design.md §4 writes it.
    pub fn text(self) -> &'static str {
        match self {
            Self::CatalogUse => "USE_CATALOG@ ∨ TOP",
            Self::NamespaceLoad => "TOP ∨ USE_CATALOG@ ∧ (own(schema) ∨ USE_SCHEMA@ ∨ CREATE_SCHEMA@)",
            Self::NamespaceCreate => {
                "TOP ∨ own(parent chain) ∨ USE_CATALOG@ ∧ CREATE_SCHEMA@(metalake, catalog, parent chain)"
            }
            Self::SchemaOwner => "TOP ∨ SOUC",
            Self::Top => "TOP",
            Self::ListObjects => "TOP ∨ USE_CATALOG@ ∧ (own(schema) ∨ USE_SCHEMA@)",
            Self::TableCreate => "TOP ∨ SOUC ∨ UCS ∧ CREATE_TABLE@",
            Self::TableRead => "TOP ∨ SOUC ∨ UCS ∧ (own(table) ∨ SELECT_TABLE@ ∨ MODIFY_TABLE@)",
            Self::TableExists => {
                "TOP ∨ SOUC ∨ UCS ∧ (own(table) ∨ own(view) ∨ SELECT_TABLE@ ∨ MODIFY_TABLE@ ∨ CREATE_TABLE@ ∨ SELECT_VIEW@ ∨ CREATE_VIEW@)"
            }
            Self::TableUpdate => "TOP ∨ SOUC ∨ UCS ∧ (own(table) ∨ MODIFY_TABLE@)",
            Self::TableUpdateAnyBody => {
                "TOP ∨ SOUC ∨ UCS ∧ (own(table) ∨ MODIFY_TABLE@ ∨ CREATE_TABLE@) (an update, or the commit of a staged create)"
            }
            Self::TableOwner => "TOP ∨ SOUC ∨ UCS ∧ own(table)",
            Self::TableExistence => "UCS ∧ (CREATE_TABLE@ ∨ SELECT_VIEW@ ∨ CREATE_VIEW@ ∨ own(view))",
            Self::ViewCreate => "TOP ∨ SOUC ∨ UCS ∧ CREATE_VIEW@",
            Self::ViewRead => "TOP ∨ SOUC ∨ UCS ∧ (own(view) ∨ SELECT_VIEW@)",
            Self::ViewExists => "TOP ∨ SOUC ∨ UCS ∧ (own(view) ∨ SELECT_VIEW@ ∨ CREATE_VIEW@)",
            Self::ViewOwner => "TOP ∨ SOUC ∨ UCS ∧ own(view)",
            Self::ViewExistence => "UCS ∧ (CREATE_VIEW@ ∨ own(table) ∨ SELECT_TABLE@ ∨ MODIFY_TABLE@ ∨ CREATE_TABLE@)",
            Self::FunctionRead => "TOP ∨ SOUC ∨ UCS ∧ (own(function) ∨ EXECUTE_FUNCTION@ ∨ MODIFY_FUNCTION@)",
            Self::CredentialWrite => "own(metalake, catalog, schema chain, table) ∨ MODIFY_TABLE@",
            Self::NamespaceEntry => "own(metalake, catalog, entry chain) ∨ USE_SCHEMA@entry",
            Self::TableEntry => "own(metalake..table) ∨ SELECT_TABLE@ ∨ MODIFY_TABLE@",
            Self::ViewEntry => "own(metalake..view) ∨ SELECT_VIEW@",
            Self::FunctionEntry => "own(metalake..function) ∨ EXECUTE_FUNCTION@ ∨ MODIFY_FUNCTION@",
        }
    }
}
