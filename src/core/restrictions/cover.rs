//! A restriction keeps covering what it covered (docs/design.md §8, turn 4). Restrictions name
//! tables and columns, and both can be renamed: a renameTable that a restriction of the source
//! would not follow, and a commit after which a restricted column name or filter term would read
//! another field than it reads now while that name has named another field before, would move
//! data out from under the restriction. Pure: the table metadata a commit is decided with is
//! asked of the upstream by the sequencer, which also exempts `TOP` (who can change the policy).

use super::action::ColumnPath;
use super::schema::Schema;
use crate::core::iceberg::TableIdent;
use crate::core::iceberg::body::{Body, SchemaChanges};
use crate::core::iceberg::routes::Route;
use crate::core::ownership::OwnerIndex;
use crate::core::policy::Snapshot;
use crate::core::policy::eval::{Leaf, Target};
use crate::core::policy::snapshot::Restriction;
use serde_json::Value;

/// The restrictions on `table` and its ancestors, whoever asks: they protect every reader they
/// apply to, so a role that lifts one for the caller's own reads does not lift it here.
fn on_table<'s>(snap: &'s Snapshot, catalog: &str, table: &TableIdent) -> (Target, Vec<&'s Restriction>) {
    let leaf = Some((Leaf::Table, table.name.as_str()));
    let target = Target::resolve(snap, OwnerIndex::empty(), catalog, table.namespace.levels(), leaf);
    let found = target.nodes().flat_map(|node| snap.restrictions().on(node)).collect();
    (target, found)
}

/// The restrictions of `source` that would not apply to `destination` (one naming the source
/// itself, or an ancestor the destination lacks), by label; empty when the rename keeps them.
pub fn left_behind(snap: &Snapshot, catalog: &str, source: &TableIdent, destination: &TableIdent) -> Vec<String> {
    if snap.restrictions().is_empty() {
        return Vec::new();
    }
    let (_, on_source) = on_table(snap, catalog, source);
    let (to, _) = on_table(snap, catalog, destination);
    let kept: Vec<_> = to.nodes().collect();
    on_source.iter().filter(|r| !kept.contains(&r.node)).map(|r| r.label()).collect()
}

/// A table whose commit changes its current schema while restrictions name its columns: the
/// upstream's metadata of the table decides ([`moved`]).
#[derive(Clone, Debug)]
pub struct Pending {
    pub table: TableIdent,
    /// The restrictions on the table, by label.
    pub labels: Vec<String>,
    /// Every column they name: `columns` and the terms of row filters.
    pub names: Vec<ColumnPath>,
    pub changes: SchemaChanges,
}

/// What the rule says of a commit before any metadata is known.
#[derive(Debug)]
pub enum Commit {
    /// No restricted table's current schema changes.
    Clear,
    /// A `remove-schemas` on a restricted table: it erases the history [`moved`] reads.
    Removes { table: TableIdent, labels: Vec<String> },
    /// These tables' metadata decides.
    Ask(Vec<Pending>),
}

/// The tables of an updateTable or commitTransaction `body` (the path names the former's) that
/// restrictions cover and whose schemas the commit changes. A staged create's commit has no
/// earlier schema to compare with: only its `remove-schemas` matters.
pub fn commit(snap: &Snapshot, catalog: &str, route: &Route, body: &Body) -> Commit {
    if snap.restrictions().is_empty() {
        return Commit::Clear;
    }
    let path_table = || TableIdent::new(route.namespace.clone()?, route.name.clone()?).ok();
    let changes: Vec<(TableIdent, &crate::core::iceberg::body::TableUpdate)> = match body {
        Body::UpdateTable(update) => path_table().map(|t| (t, update)).into_iter().collect(),
        Body::CommitTransaction(changes) => changes.iter().map(|c| (c.identifier.clone(), &c.update)).collect(),
        _ => return Commit::Clear,
    };
    let mut pending = Vec::new();
    for (table, update) in changes {
        if !update.schemas.any() {
            continue;
        }
        let (_, restrictions) = on_table(snap, catalog, &table);
        if restrictions.is_empty() {
            continue;
        }
        let labels = restrictions.iter().map(|r| r.label()).collect();
        if update.schemas.removes {
            return Commit::Removes { table, labels };
        }
        if update.asserts_create {
            continue;
        }
        let mut names: Vec<ColumnPath> = Vec::new();
        for r in &restrictions {
            names.extend(r.columns.iter().map(|(c, _)| c.clone()));
            names.extend(r.row_filter.iter().flat_map(|f| f.columns()).cloned());
        }
        names.sort();
        names.dedup();
        pending.push(Pending { table, labels, names, changes: update.schemas.clone() });
    }
    match pending.is_empty() {
        true => Commit::Clear,
        false => Commit::Ask(pending),
    }
}

/// The metadata icegate cannot read the schemas of: the commit is not forwarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unreadable;

/// A restricted name the commit would move: what it reads now and after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Moved {
    pub column: String,
    pub now: Option<i64>,
    pub after: i64,
}

/// Whether `pending`'s commit, applied to a table with `metadata` (loadTable's `metadata`),
/// makes a restricted name resolve to a field id it does not resolve to in the current schema
/// while that name has named another field id in some schema of the metadata or the commit.
pub fn moved(pending: &Pending, metadata: &Value) -> Result<Option<Moved>, Unreadable> {
    let (current, listed) = schemas(metadata)?;
    let added: Vec<Schema> =
        pending.changes.added.iter().map(Schema::from_value).collect::<Option<_>>().ok_or(Unreadable)?;
    // which schema each `set-current-schema` makes current; an id neither the metadata lists
    // nor `-1` names one the upstream gives an added schema, so each of those may be it
    let mut candidates: Vec<&Schema> = Vec::new();
    for &(id, added_before) in &pending.changes.current {
        match listed.iter().find(|(listed_id, _)| *listed_id == Some(id)) {
            _ if id == -1 => candidates.extend(added_before.checked_sub(1).and_then(|i| added.get(i))),
            Some((_, schema)) => candidates.push(schema),
            None => candidates.extend(added.iter()),
        }
    }
    let resolve = |schema: &Schema, name: &ColumnPath| schema.resolve(name).ok().map(|c| c.id);
    let history: Vec<&Schema> = listed.iter().map(|(_, s)| s).chain(added.iter()).collect();
    for name in &pending.names {
        let now = current.and_then(|i| listed.get(i)).and_then(|(_, s)| resolve(s, name));
        for candidate in &candidates {
            let Some(after) = resolve(candidate, name) else { continue };
            if Some(after) == now {
                continue;
            }
            if history.iter().any(|s| resolve(s, name).is_some_and(|before| before != after)) {
                return Ok(Some(Moved { column: name.to_string(), now, after }));
            }
        }
    }
    Ok(None)
}

/// A metadata's schemas, each with its `schema-id`.
type Listed = Vec<(Option<i64>, Schema)>;

/// The metadata's schemas with their ids, and which is current: `schemas` and
/// `current-schema-id`, or a format-1 table's lone `schema`.
fn schemas(metadata: &Value) -> Result<(Option<usize>, Listed), Unreadable> {
    let mut listed = Vec::new();
    if let Some(list) = metadata.get("schemas") {
        for schema in list.as_array().ok_or(Unreadable)? {
            let id = schema.get("schema-id").and_then(Value::as_i64);
            listed.push((id, Schema::from_value(schema).ok_or(Unreadable)?));
        }
    }
    let current_id = metadata.get("current-schema-id").and_then(Value::as_i64);
    let mut current = listed.iter().position(|(id, _)| id.is_some() && *id == current_id);
    if let Some(lone) = metadata.get("schema") {
        let schema = Schema::from_value(lone).ok_or(Unreadable)?;
        if current.is_none() {
            current = Some(listed.len());
        }
        listed.push((lone.get("schema-id").and_then(Value::as_i64), schema));
    }
    if listed.is_empty() {
        return Err(Unreadable);
    }
    Ok((current, listed))
}

#[cfg(test)]
mod tests;
