//! Which read restrictions apply to a request on a table, combined, and whether the caller is
//! trusted to enforce them (docs/design.md §8): a restriction on the table or one of its
//! ancestors applies unless one of its `unless_roles` is *active*; ownership and `TOP` lift
//! nothing. Row filters are joined with `and`; a column two restrictions give different actions
//! gets `replace-with-null`.

use super::action::{Action, ColumnPath};
use super::expr::Filter;
use crate::core::iceberg::body::Body;
use crate::core::iceberg::routes::Route;
use crate::core::iceberg::{Namespace, OperationId};
use crate::core::ownership::OwnerIndex;
use crate::core::policy::Snapshot;
use crate::core::policy::eval::{Leaf, RoleSet, Target};
use serde_json::{Map, Value, json};

/// One restriction entry that applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub label: String,
    pub kind: &'static str,
    pub full_name: String,
}

/// The restrictions that apply to one request on one table, combined.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// The table, `catalog.schema.table`.
    pub table: String,
    /// From the metalake down the chain; in policy order on one object.
    pub entries: Vec<Entry>,
    /// Whether the caller is a `restriction_enforcers` member.
    pub trusted: bool,
    pub row_filter: Option<Filter>,
    /// Each column once, by path.
    pub columns: Vec<(ColumnPath, Action)>,
}

impl Applied {
    /// What `explain` prints under `"restrictions"` (docs/design.md §10).
    pub fn to_json(&self) -> Value {
        let applied: Vec<Value> = self
            .entries
            .iter()
            .map(|e| json!({ "name": e.label, "object": { "type": e.kind, "fullName": e.full_name } }))
            .collect();
        let columns: Map<String, Value> =
            self.columns.iter().map(|(c, a)| (c.to_string(), Value::from(a.as_str()))).collect();
        let mut out = json!({ "trusted": self.trusted, "applied": applied, "columns": columns });
        if let (Some(filter), Some(obj)) = (&self.row_filter, out.as_object_mut()) {
            obj.insert("row_filter".to_owned(), filter.to_names_json());
        }
        out
    }
}

/// Operations whose answer reads the table's data or hands out a way to: refused to a caller a
/// restriction applies to unless it is trusted to enforce them (docs/design.md §8). A sign
/// request only for `GET`/`HEAD`, which its body says.
pub fn reads_data(op: OperationId, body: Option<&Body>) -> bool {
    match op {
        OperationId::LoadTable
        | OperationId::LoadCredentials
        | OperationId::PlanTableScan
        | OperationId::FetchPlanningResult
        | OperationId::FetchScanTasks => true,
        OperationId::SignRequest => match body {
            Some(Body::SignRequest(sign)) => matches!(sign.method.as_str(), "GET" | "HEAD"),
            _ => false,
        },
        _ => false,
    }
}

/// Operations answered with a loadTable-like result, into which a trusted reader's
/// restrictions are written.
pub fn answers_with_table(op: OperationId) -> bool {
    matches!(op, OperationId::LoadTable | OperationId::CreateTable | OperationId::RegisterTable)
}

/// The table a request is on, for the operations restrictions concern: the path's table, or
/// the one a createTable or registerTable body names. `None` for any other operation, or
/// before the body of a create is known.
pub fn table_of<'a>(route: &'a Route, body: Option<&'a Body>) -> Option<(&'a Namespace, &'a str)> {
    let namespace = route.namespace.as_ref()?;
    match route.operation {
        OperationId::CreateTable | OperationId::RegisterTable => match body? {
            Body::CreateTable { name, .. } | Body::RegisterTable { name } => Some((namespace, name.as_str())),
            _ => None,
        },
        op if reads_data(op, None) || op == OperationId::SignRequest => Some((namespace, route.name.as_deref()?)),
        _ => None,
    }
}

/// The restrictions on `catalog.namespace.table` that apply to a caller with `active` roles;
/// `None` when none does. `user` and `groups` say whether the caller is trusted.
pub fn applicable(
    snap: &Snapshot,
    (catalog, namespace, table): (&str, &Namespace, &str),
    user: &str,
    groups: &[Box<str>],
    active: &RoleSet,
) -> Option<Applied> {
    let restrictions = snap.restrictions();
    if restrictions.is_empty() {
        return None;
    }
    let target = Target::resolve(snap, OwnerIndex::empty(), catalog, namespace.levels(), Some((Leaf::Table, table)));
    let mut applied = Applied {
        table: format!("{catalog}.{}.{table}", namespace.levels().join(":")),
        entries: Vec::new(),
        trusted: restrictions.trusts(user, groups),
        row_filter: None,
        columns: Vec::new(),
    };
    for node in target.nodes() {
        for r in restrictions.on(node) {
            if r.unless_roles.iter().any(|role| active.contains(*role)) {
                continue;
            }
            applied.entries.push(Entry { label: r.label(), kind: r.kind.as_str(), full_name: r.full_name.to_string() });
            if let Some(filter) = &r.row_filter {
                applied.row_filter = Some(match applied.row_filter.take() {
                    None => filter.clone(),
                    Some(before) => Filter::and(before, filter.clone()),
                });
            }
            for (path, action) in &r.columns {
                match applied.columns.iter_mut().find(|(p, _)| p == path) {
                    Some((_, before)) => *before = before.combine(*action),
                    None => applied.columns.push((path.clone(), *action)),
                }
            }
        }
    }
    if applied.entries.is_empty() {
        return None;
    }
    applied.columns.sort();
    Some(applied)
}
