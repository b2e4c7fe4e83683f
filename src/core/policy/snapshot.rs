//! The indexed policy snapshot: immutable once built, so a decision is a handful of lookups.
//!
//! Invariants, established by [`crate::core::policy::load`] and relied on by the evaluator:
//! - every grant on a node is of a privilege grantable on that node's type, so a privilege
//!   term may scan every node of a chain without filtering by type;
//! - every `RoleId`, `UserId`, `GroupId` and `NodeId` indexes its vector;
//! - `Node::grants` is sorted by (privilege, condition, role) with no duplicates;
//! - `allow_mask`/`deny_mask` have bit `p` set iff the node has an ALLOW/DENY grant of `p`;
//! - every role list of a user or group is free of duplicates, in the order the policy lists it;
//! - a node exists for every ancestor of every node (node 0 is the metalake);
//! - every index in `Restrictions::on` indexes `Restrictions::list`, each restriction is listed
//!   under its own node only, in policy order, and its `node` is a metalake, catalog, schema or
//!   table node.

use super::model::{Condition, ObjectType, OwnerType, Privilege};
use crate::core::restrictions::action::{Action, ColumnPath};
use crate::core::restrictions::expr::Filter;
use compact_str::CompactString;
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};

macro_rules! id_type {
    ($name:ident) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub(crate) u32);

        impl $name {
            pub(crate) fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(RoleId);
id_type!(UserId);
id_type!(GroupId);
id_type!(NodeId);

/// The metalake's node.
pub const ROOT: NodeId = NodeId(0);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Grant {
    pub privilege: Privilege,
    pub condition: Condition,
    pub role: RoleId,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub kind: OwnerType,
    pub name: Box<str>,
}

/// One securable object that the policy mentions (directly or as an ancestor).
#[derive(Debug, Default)]
pub struct Node {
    pub kind: Option<ObjectType>,
    pub full_name: Box<str>,
    pub grants: Vec<Grant>,
    pub allow_mask: u64,
    pub deny_mask: u64,
    pub owner: Option<Owner>,
    /// What the policy names below this node; boxed, since most nodes (the tables) have
    /// nothing below them and a large policy has hundreds of thousands of nodes.
    pub(crate) below: Option<Box<Below>>,
}

/// The nodes directly below a node, by name. Names of up to 24 bytes (most of them) are held
/// in the map itself: a lookup then compares the name it found without reading another
/// allocation, which in a large policy is a cache miss on every load and every decision.
#[derive(Debug, Default)]
pub struct Below {
    /// Catalogs under the metalake; schemas (next level) under a catalog or schema.
    pub children: FxHashMap<CompactString, NodeId>,
    pub tables: FxHashMap<CompactString, NodeId>,
    pub views: FxHashMap<CompactString, NodeId>,
    pub functions: FxHashMap<CompactString, NodeId>,
}

static NOTHING_BELOW: Below = Below {
    children: FxHashMap::with_hasher(FxBuildHasher),
    tables: FxHashMap::with_hasher(FxBuildHasher),
    views: FxHashMap::with_hasher(FxBuildHasher),
    functions: FxHashMap::with_hasher(FxBuildHasher),
};

impl Node {
    /// The nodes directly below this one.
    pub fn below(&self) -> &Below {
        self.below.as_deref().unwrap_or(&NOTHING_BELOW)
    }

    pub(crate) fn below_mut(&mut self) -> &mut Below {
        self.below.get_or_insert_default()
    }

    /// The grants of `privilege` with `condition`, as a sorted slice.
    pub fn grants_of(&self, privilege: Privilege, condition: Condition) -> &[Grant] {
        let mask = match condition {
            Condition::Allow => self.allow_mask,
            Condition::Deny => self.deny_mask,
        };
        if mask & privilege_bit(privilege) == 0 {
            return &[];
        }
        let start = self.grants.partition_point(|g| (g.privilege, g.condition) < (privilege, condition));
        let rest = self.grants.get(start..).unwrap_or_default();
        let len = rest.iter().take_while(|g| g.privilege == privilege && g.condition == condition).count();
        rest.get(..len).unwrap_or_default()
    }
}

/// Bit `p` of a node's masks. Every privilege has a bit of the 64.
pub(crate) fn privilege_bit(p: Privilege) -> u64 {
    1u64 << (p as u32)
}

const _: () = assert!(Privilege::ALL.len() <= 64, "a node's masks hold one bit per privilege in a u64");

/// Operator-set narrowing of a user or group (docs/design.md §5).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Narrowing {
    pub default_active_roles: Option<Vec<RoleId>>,
    pub max_active_roles: Option<Vec<RoleId>>,
    pub blocked_roles: Vec<RoleId>,
}

impl Narrowing {
    pub fn is_set(&self) -> bool {
        self.default_active_roles.is_some() || self.max_active_roles.is_some() || !self.blocked_roles.is_empty()
    }
}

#[derive(Debug)]
pub struct Role {
    pub name: Box<str>,
}

#[derive(Debug)]
pub struct User {
    pub name: Box<str>,
    pub enabled: bool,
    pub roles: Vec<RoleId>,
    pub groups: Vec<GroupId>,
    pub narrowing: Narrowing,
}

#[derive(Debug)]
pub struct Group {
    pub name: Box<str>,
    pub roles: Vec<RoleId>,
    pub narrowing: Narrowing,
}

/// One entry of `restrictions` (docs/design.md §8 "Read restrictions"): on a table or anything
/// above it, lifted by any of `unless_roles` when active.
#[derive(Debug)]
pub struct Restriction {
    /// The entry's optional `name`, for `explain` and the log.
    pub name: Option<Box<str>>,
    pub kind: ObjectType,
    pub full_name: Box<str>,
    pub node: NodeId,
    pub unless_roles: Vec<RoleId>,
    pub row_filter: Option<Filter>,
    /// In the policy's order; each path once.
    pub columns: Vec<(ColumnPath, Action)>,
}

impl Restriction {
    /// How an operator reads which entry this is: its name, else its object.
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => name.to_string(),
            None => format!("{} `{}`", self.kind.as_str(), self.full_name),
        }
    }
}

/// The policy's read restrictions, indexed by the node they are on, so that a decision finds
/// those of a table by walking the chain it already resolved; and who is trusted to enforce
/// them (`restriction_enforcers`).
#[derive(Debug, Default)]
pub struct Restrictions {
    pub list: Vec<Restriction>,
    pub on: FxHashMap<NodeId, Vec<u32>>,
    pub enforcer_users: FxHashSet<Box<str>>,
    pub enforcer_groups: FxHashSet<Box<str>>,
}

impl Restrictions {
    /// The restrictions on `node`, in policy order.
    pub fn on(&self, node: NodeId) -> impl Iterator<Item = &Restriction> {
        let ids = if self.on.is_empty() { None } else { self.on.get(&node) };
        ids.into_iter().flatten().filter_map(|i| self.list.get(*i as usize))
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether `user`, or one of `groups`, is trusted to enforce read restrictions.
    pub fn trusts(&self, user: &str, groups: &[Box<str>]) -> bool {
        self.enforcer_users.contains(user) || groups.iter().any(|g| self.enforcer_groups.contains(g))
    }
}

/// Counts shown by `icegate check` (docs/design.md §10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub users: usize,
    pub groups: usize,
    pub roles: usize,
    pub allow: usize,
    pub deny: usize,
    pub owners: usize,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "users: {}, groups: {}, roles: {}, grants: {} (allow {}, deny {}), owners: {}",
            self.users,
            self.groups,
            self.roles,
            self.allow + self.deny,
            self.allow,
            self.deny,
            self.owners
        )
    }
}

/// A validated, indexed policy. Built only by [`crate::core::policy::load`].
#[derive(Debug)]
pub struct Snapshot {
    pub(crate) metalake: Box<str>,
    pub(crate) default_catalog: Option<Box<str>>,
    pub(crate) require_known_user: bool,
    /// `catalogs` entries: literal decoded prefix → catalog name.
    pub(crate) prefixes: FxHashMap<Box<str>, Box<str>>,
    /// Whether the policy has a `catalogs` list, which is then the complete list of prefixes.
    pub(crate) strict_prefixes: bool,
    /// The keys of `prefixes` that hold `/`, matched before any other path rule (docs/design.md §2).
    pub(crate) path_prefixes: crate::core::iceberg::prefix::Prefixes,
    /// Catalogs declared `case_sensitive: false`; every name of the policy in them is lower case.
    pub(crate) folding_catalogs: rustc_hash::FxHashSet<Box<str>>,
    pub(crate) roles: Vec<Role>,
    pub(crate) role_ids: FxHashMap<Box<str>, RoleId>,
    pub(crate) users: Vec<User>,
    pub(crate) user_ids: FxHashMap<Box<str>, UserId>,
    pub(crate) groups: Vec<Group>,
    pub(crate) group_ids: FxHashMap<Box<str>, GroupId>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) restrictions: Restrictions,
    pub(crate) stats: Stats,
    pub(crate) hash: String,
}

impl Snapshot {
    pub fn metalake(&self) -> &str {
        &self.metalake
    }

    pub fn require_known_user(&self) -> bool {
        self.require_known_user
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The read restrictions and their enforcers (docs/design.md §8).
    pub fn restrictions(&self) -> &Restrictions {
        &self.restrictions
    }

    /// `sha256:` + hex SHA-256 of the policy files' bytes in load order (docs/design.md §9).
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// The catalog a request's `{prefix}` names: a `catalogs` mapping, else (when the policy has
    /// no `catalogs` list) the prefix itself; no prefix means `default_catalog` (docs/design.md §2).
    /// `None`: the request names no catalog icegate accepts.
    pub fn catalog_for_prefix<'a>(&'a self, prefix: Option<&'a str>) -> Option<&'a str> {
        match prefix {
            None => self.default_catalog.as_deref(),
            Some(p) => match self.prefixes.get(p) {
                Some(name) => Some(name),
                // an upstream may answer to aliases of a listed prefix (Nessie's `main` for
                // `main|warehouse`), which would otherwise be read as another catalog
                None if self.strict_prefixes => None,
                None => Some(p),
            },
        }
    }

    /// The declared prefixes that hold `/` (docs/design.md §2), for reading a request's path.
    pub fn path_prefixes(&self) -> &crate::core::iceberg::prefix::Prefixes {
        &self.path_prefixes
    }

    /// The catalog that clients reach with the prefix a getConfig answer gives them (read as
    /// their paths will be, docs/design.md §2); `None` when it names no catalog icegate accepts.
    pub fn catalog_for_config_prefix(&self, value: &str) -> Option<String> {
        let options =
            crate::core::iceberg::routes::RouteOptions { prefixes: Some(&self.path_prefixes), ..Default::default() };
        let prefix = crate::core::iceberg::routes::read_config_prefix(value, &options)?;
        self.catalog_for_prefix(Some(&prefix)).map(str::to_owned)
    }

    /// Every catalog the policy names: in grants, owners and restrictions, in its `catalogs`
    /// list, and its `default_catalog`; sorted.
    pub fn catalog_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.node(ROOT).below().children.keys().map(ToString::to_string).collect();
        names.extend(self.prefixes.values().map(ToString::to_string));
        names.extend(self.default_catalog.as_deref().map(str::to_owned));
        names.sort_unstable();
        names.dedup();
        names
    }

    /// Whether `catalog` folds names to lower case (`case_sensitive: false`, docs/design.md §2).
    pub fn folds_names(&self, catalog: &str) -> bool {
        !self.folding_catalogs.is_empty() && self.folding_catalogs.contains(catalog)
    }

    pub fn user_id(&self, name: &str) -> Option<UserId> {
        self.user_ids.get(name).copied()
    }

    #[expect(clippy::indexing_slicing, reason = "INVARIANT: every `UserId` indexes its vector (module doc)")]
    pub fn user(&self, id: UserId) -> &User {
        &self.users[id.index()]
    }

    pub fn group_id(&self, name: &str) -> Option<GroupId> {
        self.group_ids.get(name).copied()
    }

    #[expect(clippy::indexing_slicing, reason = "INVARIANT: every `GroupId` indexes its vector (module doc)")]
    pub fn group(&self, id: GroupId) -> &Group {
        &self.groups[id.index()]
    }

    pub fn role_id(&self, name: &str) -> Option<RoleId> {
        self.role_ids.get(name).copied()
    }

    #[expect(clippy::indexing_slicing, reason = "INVARIANT: every `RoleId` indexes its vector (module doc)")]
    pub fn role_name(&self, id: RoleId) -> &str {
        &self.roles[id.index()].name
    }

    #[expect(clippy::indexing_slicing, reason = "INVARIANT: every `NodeId` indexes its vector (module doc)")]
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// While the snapshot is built (`policy::build`).
    #[expect(clippy::indexing_slicing, reason = "INVARIANT: every `NodeId` indexes its vector (module doc)")]
    pub(crate) fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.index()]
    }

    /// While the snapshot is built (`policy::build`).
    #[expect(clippy::indexing_slicing, reason = "INVARIANT: every `UserId` indexes its vector (module doc)")]
    pub(crate) fn user_mut(&mut self, id: UserId) -> &mut User {
        &mut self.users[id.index()]
    }

    /// While the snapshot is built (`policy::build`).
    #[expect(clippy::indexing_slicing, reason = "INVARIANT: every `GroupId` indexes its vector (module doc)")]
    pub(crate) fn group_mut(&mut self, id: GroupId) -> &mut Group {
        &mut self.groups[id.index()]
    }
}
