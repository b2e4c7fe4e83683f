//! List entries: which entries of a list response a caller may see (docs/design.md §4 "Lists"),
//! decided with the listed namespace's chain resolved once per response.

use super::authorize::{Ident, Object, resolve};
use super::eval::{Subject, Target, evaluate};
use super::rules::Rule;
use super::snapshot::Snapshot;
use crate::core::iceberg::TableIdent;
use crate::core::iceberg::list::{Entry, ListKind};
use crate::core::iceberg::names::NameRules;

/// Decides the entries of one list response. The listed namespace's chain is resolved once
/// and reused for every entry under it, and the answer for an entry the policy never names
/// (no node of its own) is computed once, since it can only depend on the shared chain.
#[derive(Debug)]
pub struct EntryFilter<'s> {
    snap: &'s Snapshot,
    subject: &'s Subject<'s>,
    catalog: &'s str,
    kind: ListKind,
    /// The catalog folds names: entries are decided on their lower-case names (docs/design.md §2).
    fold: bool,
    /// The last namespace seen, its resolved chain, and the answer for unnamed leaves.
    base: Option<(Vec<String>, Target, Option<bool>)>,
}

impl<'s> EntryFilter<'s> {
    pub fn new(snap: &'s Snapshot, subject: &'s Subject<'s>, catalog: &'s str, kind: ListKind) -> Self {
        Self { snap, subject, catalog, kind, fold: snap.folds_names(catalog), base: None }
    }

    /// Whether the caller may see `entry`; the entry itself is shown as the upstream wrote it.
    pub fn visible(&mut self, entry: &Entry) -> bool {
        if self.fold {
            // a name that no longer passes the name rules once folded is hidden
            return folded(entry).is_some_and(|entry| self.decide(&entry));
        }
        self.decide(entry)
    }

    fn decide(&mut self, entry: &Entry) -> bool {
        let (rule, levels, name) = match (self.kind, entry) {
            (ListKind::Namespaces, Entry::Namespace(_)) => {
                return entry_visible(self.snap, self.subject, self.catalog, self.kind, entry);
            }
            (ListKind::Tables, Entry::Object(i)) => (Rule::TableEntry, i.namespace.levels(), i.name.as_str()),
            (ListKind::Views, Entry::Object(i)) => (Rule::ViewEntry, i.namespace.levels(), i.name.as_str()),
            (ListKind::Functions, Entry::Object(i)) => (Rule::FunctionEntry, i.namespace.levels(), i.name.as_str()),
            _ => return false,
        };
        if self.base.as_ref().is_none_or(|(ns, _, _)| !crate::core::wordscan::same_texts(ns, levels)) {
            let target = Target::resolve(self.snap, self.subject.owners, self.catalog, levels, None);
            self.base = Some((levels.to_vec(), target, None));
        }
        let Some((_, chain, unnamed)) = self.base.as_mut() else { return false };
        let leaf = chain_leaf(self.snap, chain, levels.len(), self.kind, name);
        // A leaf recorded in the ownership store is decided on its own, like a named one.
        let created_leaf = created_leaf(self.snap, self.subject, self.catalog, self.kind, (levels, name), leaf);
        if leaf.is_none()
            && created_leaf.is_none()
            && let Some(answer) = unnamed
        {
            return *answer;
        }
        let mut target = Target {
            catalog: chain.catalog,
            schemas: std::mem::take(&mut chain.schemas),
            created: std::mem::take(&mut chain.created),
            ..Target::default()
        };
        match self.kind {
            ListKind::Tables => target.table = leaf,
            ListKind::Views => target.view = leaf,
            _ => target.function = leaf,
        }
        let chain_created = target.created.clone();
        match self.kind {
            ListKind::Tables => target.created.table = created_leaf,
            ListKind::Views => target.created.view = created_leaf,
            _ => {}
        }
        let answer = evaluate(self.snap, self.subject, &target, rule.formula()).allowed;
        chain.schemas = target.schemas;
        chain.created = chain_created;
        if leaf.is_none() && target.created.table.is_none() && target.created.view.is_none() {
            *unnamed = Some(answer);
        }
        answer
    }
}

/// `entry` with its names folded to lower case.
fn folded(entry: &Entry) -> Option<Entry> {
    let rules = NameRules { separators: &[], fold_case: true };
    match entry {
        Entry::Namespace(ns) => rules.namespace(ns.levels().to_vec()).ok().map(Entry::Namespace),
        Entry::Object(i) => {
            let namespace = rules.namespace(i.namespace.levels().to_vec()).ok()?;
            TableIdent::new(namespace, rules.fold(i.name.clone())).ok().map(Entry::Object)
        }
    }
}

/// The ownership store's record of a listed table or view, unless the policy names its owner.
fn created_leaf(
    snap: &Snapshot,
    subject: &Subject<'_>,
    catalog: &str,
    kind: ListKind,
    (levels, name): (&[String], &str),
    leaf: Option<super::snapshot::NodeId>,
) -> Option<std::sync::Arc<crate::core::ownership::Record>> {
    use crate::core::ownership::Slot;
    let owners = subject.owners;
    if owners.is_empty() || leaf.is_some_and(|n| snap.node(n).owner.is_some()) {
        return None;
    }
    let (table, view) = match kind {
        ListKind::Tables => (Some(name), None),
        ListKind::Views => (None, Some(name)),
        _ => return None,
    };
    let found = owners.chain(catalog, levels, table, view, |s| !matches!(s, Slot::Table | Slot::View));
    found.table.or(found.view)
}

/// The leaf node of `name` under a resolved chain, when the chain reached the namespace.
fn chain_leaf(
    snap: &Snapshot,
    chain: &Target,
    depth: usize,
    kind: ListKind,
    name: &str,
) -> Option<super::snapshot::NodeId> {
    if depth == 0 || chain.schemas.len() != depth {
        return None;
    }
    let node = snap.node(*chain.schemas.last()?);
    match kind {
        ListKind::Tables => node.below().tables.get(name).copied(),
        ListKind::Views => node.below().views.get(name).copied(),
        ListKind::Functions => node.below().functions.get(name).copied(),
        ListKind::Namespaces => None,
    }
}

/// Whether a list entry is shown (docs/design.md §4 "Lists").
pub fn entry_visible(snap: &Snapshot, subject: &Subject<'_>, catalog: &str, kind: ListKind, entry: &Entry) -> bool {
    let (rule, object) = match (kind, entry) {
        (ListKind::Namespaces, Entry::Namespace(ns)) => (Rule::NamespaceEntry, Object::Namespace(ns.levels())),
        (ListKind::Tables, Entry::Object(i)) => (Rule::TableEntry, Object::Table(Ident::of(i))),
        (ListKind::Views, Entry::Object(i)) => (Rule::ViewEntry, Object::View(Ident::of(i))),
        (ListKind::Functions, Entry::Object(i)) => (Rule::FunctionEntry, Object::Function(Ident::of(i))),
        _ => return false,
    };
    let target = resolve(snap, subject, catalog, &object);
    evaluate(snap, subject, &target, rule.formula()).allowed
}
