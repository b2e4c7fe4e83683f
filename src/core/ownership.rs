//! The ownership index: the ownership store's current contents as one immutable value (object
//! type and full name → owner, created-at, source), held in the decision state beside the
//! policy snapshot and read by the evaluator with no I/O.

use crate::core::policy::model::OwnerType;
use rustc_hash::FxHashMap;
use std::sync::{Arc, LazyLock};

/// The kinds of object that can be created through Iceberg REST, and so owned by creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Schema,
    Table,
    View,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Schema => "SCHEMA",
            Self::Table => "TABLE",
            Self::View => "VIEW",
        }
    }

    /// Case-insensitive, as the policy's `type` values are.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Schema, Self::Table, Self::View].into_iter().find(|k| k.as_str().eq_ignore_ascii_case(s))
    }
}

/// How a record came to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The upstream confirmed that this user created the object through icegate.
    Creation,
    /// An operator set it with `icegate owners set`.
    Operator,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Creation => "creation",
            Self::Operator => "operator",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "creation" => Some(Self::Creation),
            "operator" => Some(Self::Operator),
            _ => None,
        }
    }
}

/// One owned object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub kind: Kind,
    /// The Gravitino full name (docs/design.md §2): `prod.sales`, `prod.a:b`, `prod.sales.t`.
    pub full_name: String,
    pub owner: String,
    /// Creation records are always users; an operator may set a group.
    pub owner_type: OwnerType,
    /// RFC 3339 UTC.
    pub created_at: String,
    pub source: Source,
}

impl Record {
    /// Whether the caller (`user`, `groups`) is this record's owner.
    pub fn owned_by(&self, user: &str, groups: &[Box<str>]) -> bool {
        match self.owner_type {
            OwnerType::User => self.owner == user,
            OwnerType::Group => groups.iter().any(|g| **g == *self.owner),
        }
    }

    /// How an audit reason names the record: `by creation at 2026-12-02T13:45:00.000Z`.
    pub fn provenance(&self) -> String {
        match self.source {
            Source::Creation => format!("by creation at {}", self.created_at),
            Source::Operator => format!("set by an operator at {}", self.created_at),
        }
    }
}

/// The store's records, indexed for the evaluator. Immutable once published.
#[derive(Clone, Debug, Default)]
pub struct OwnerIndex {
    schemas: FxHashMap<Box<str>, Arc<Record>>,
    tables: FxHashMap<Box<str>, Arc<Record>>,
    views: FxHashMap<Box<str>, Arc<Record>>,
}

/// The owners recorded by creation on an object's chain, for the levels whose policy entry
/// names no owner (the snapshot's `owners` win on conflict).
#[derive(Clone, Debug, Default)]
pub struct Created {
    pub schemas: Vec<Arc<Record>>,
    pub table: Option<Arc<Record>>,
    pub view: Option<Arc<Record>>,
}

impl Created {
    pub fn is_empty(&self) -> bool {
        self.schemas.is_empty() && self.table.is_none() && self.view.is_none()
    }
}

static EMPTY: LazyLock<OwnerIndex> = LazyLock::new(OwnerIndex::default);

impl OwnerIndex {
    /// The index of no store (`explain`, the conformance cases, `[owners] store = "off"`).
    pub fn empty() -> &'static OwnerIndex {
        &EMPTY
    }

    pub fn from_records(records: impl IntoIterator<Item = Record>) -> Self {
        let mut index = Self::default();
        for r in records {
            index.insert(r);
        }
        index
    }

    pub fn len(&self) -> usize {
        self.schemas.len() + self.tables.len() + self.views.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn map(&self, kind: Kind) -> &FxHashMap<Box<str>, Arc<Record>> {
        match kind {
            Kind::Schema => &self.schemas,
            Kind::Table => &self.tables,
            Kind::View => &self.views,
        }
    }

    pub fn get(&self, kind: Kind, full_name: &str) -> Option<&Arc<Record>> {
        self.map(kind).get(full_name)
    }

    pub fn insert(&mut self, record: Record) {
        let map = match record.kind {
            Kind::Schema => &mut self.schemas,
            Kind::Table => &mut self.tables,
            Kind::View => &mut self.views,
        };
        map.insert(record.full_name.as_str().into(), Arc::new(record));
    }

    pub fn remove(&mut self, kind: Kind, full_name: &str) -> Option<Arc<Record>> {
        match kind {
            Kind::Schema => self.schemas.remove(full_name),
            Kind::Table => self.tables.remove(full_name),
            Kind::View => self.views.remove(full_name),
        }
    }

    /// Every record, sorted by type and full name.
    pub fn records(&self) -> Vec<Arc<Record>> {
        let mut all: Vec<Arc<Record>> =
            self.schemas.values().chain(self.tables.values()).chain(self.views.values()).cloned().collect();
        all.sort_by(|a, b| (a.kind, &a.full_name).cmp(&(b.kind, &b.full_name)));
        all
    }

    /// The records on the chain of `catalog`, `levels` and an optional leaf (`table`, `view`
    /// names); `skip_schema(i)` / `skip_table` / `skip_view` say where the policy already
    /// names an owner, which wins.
    pub fn chain(
        &self,
        catalog: &str,
        levels: &[String],
        table: Option<&str>,
        view: Option<&str>,
        skip: impl Fn(Slot) -> bool,
    ) -> Created {
        let mut created = Created::default();
        if self.is_empty() || levels.is_empty() {
            return created;
        }
        let mut name = String::with_capacity(64);
        name.push_str(catalog);
        for (i, level) in levels.iter().enumerate() {
            name.push(if i == 0 { '.' } else { ':' });
            name.push_str(level);
            if let Some(r) = self.schemas.get(name.as_str())
                && !skip(Slot::Schema(i))
            {
                created.schemas.push(Arc::clone(r));
            }
        }
        let schema_len = name.len();
        for (leaf, kind, slot) in [(table, Kind::Table, Slot::Table), (view, Kind::View, Slot::View)] {
            let Some(leaf) = leaf else { continue };
            name.truncate(schema_len);
            name.push('.');
            name.push_str(leaf);
            if let Some(r) = self.map(kind).get(name.as_str())
                && !skip(slot)
            {
                match kind {
                    Kind::Table => created.table = Some(Arc::clone(r)),
                    _ => created.view = Some(Arc::clone(r)),
                }
            }
        }
        created
    }
}

/// A level of a chain, for [`OwnerIndex::chain`]'s `skip`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Schema(usize),
    Table,
    View,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(kind: Kind, name: &str, owner: &str) -> Record {
        Record {
            kind,
            full_name: name.into(),
            owner: owner.into(),
            owner_type: OwnerType::User,
            created_at: "2026-12-02T13:45:00.000Z".into(),
            source: Source::Creation,
        }
    }

    #[test]
    fn the_chain_finds_schemas_and_leaves_by_full_name() {
        let index = OwnerIndex::from_records([
            rec(Kind::Schema, "prod.a", "ann"),
            rec(Kind::Schema, "prod.a:b", "bob"),
            rec(Kind::Table, "prod.a:b.t", "tom"),
            rec(Kind::View, "prod.a:b.t", "val"),
        ]);
        let levels = vec!["a".to_owned(), "b".to_owned()];
        let c = index.chain("prod", &levels, Some("t"), Some("t"), |_| false);
        assert_eq!(c.schemas.iter().map(|r| r.owner.as_str()).collect::<Vec<_>>(), ["ann", "bob"]);
        assert_eq!(c.table.unwrap().owner, "tom");
        assert_eq!(c.view.unwrap().owner, "val");
        let skipped = index.chain("prod", &levels, Some("t"), None, |s| s == Slot::Table || s == Slot::Schema(0));
        assert_eq!(skipped.schemas.len(), 1);
        assert!(skipped.table.is_none() && skipped.view.is_none());
        assert!(index.chain("other", &levels, Some("t"), None, |_| false).is_empty());
    }

    #[test]
    fn records_are_user_or_group_owned() {
        let mut r = rec(Kind::Table, "prod.s.t", "eng");
        assert!(r.owned_by("eng", &[]) && !r.owned_by("ann", &["eng".into()]));
        r.owner_type = OwnerType::Group;
        assert!(r.owned_by("ann", &["eng".into()]) && !r.owned_by("eng", &[]));
        assert_eq!(Kind::parse("table"), Some(Kind::Table));
        assert!(r.provenance().starts_with("set by") || r.provenance().starts_with("by creation"));
    }
}
