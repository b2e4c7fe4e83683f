//! The evaluator: privilege and ownership terms over an object's chain, and the formulas of
//! docs/design.md §4 in disjunctive normal form. Pure and synchronous; default deny.

use super::model::OwnerType;
use super::model::{Condition, Privilege};
use super::snapshot::{NodeId, ROOT, RoleId, Snapshot};
use crate::core::ownership::{Created, OwnerIndex, Slot};

/// A sorted set of roles without duplicates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoleSet(Vec<RoleId>);

impl RoleSet {
    pub fn new(mut roles: Vec<RoleId>) -> Self {
        roles.sort_unstable();
        roles.dedup();
        Self(roles)
    }

    pub fn contains(&self, role: RoleId) -> bool {
        self.0.binary_search(&role).is_ok()
    }

    pub fn iter(&self) -> impl Iterator<Item = RoleId> + '_ {
        self.0.iter().copied()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn is_subset(&self, other: &RoleSet) -> bool {
        self.0.iter().all(|r| other.contains(*r))
    }
}

/// Who is asking, as the evaluator needs it.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    pub user: &'a str,
    /// Every group of the caller: the snapshot's static groups and the identity's groups.
    pub groups: &'a [Box<str>],
    /// The roles whose DENYs apply: always all held roles (docs/design.md §4).
    pub held: &'a RoleSet,
    /// The roles whose ALLOWs apply.
    pub active: &'a RoleSet,
    /// Whether ownership grants anything (docs/design.md §5 ownership modes).
    pub ownership: bool,
    /// The ownership store's index in this request's view (docs/design.md §4 "Ownership of
    /// created objects"); empty where there is no store (`explain`).
    pub owners: &'a OwnerIndex,
}

impl<'a> Subject<'a> {
    /// The same caller with every held role active and ownership on: the unnarrowed view
    /// used to tell whether narrowing lowered a credential scope.
    pub fn unnarrowed(self) -> Self {
        Self { active: self.held, ownership: true, ..self }
    }

    /// The same caller, deciding with the ownership store's `owners` merged in.
    pub fn with_owners(self, owners: &'a OwnerIndex) -> Self {
        Self { owners, ..self }
    }

    /// Whether the policy names this caller, or one of its groups, as the owner of `node`.
    pub(crate) fn owns(&self, snap: &Snapshot, node: NodeId) -> bool {
        match &snap.node(node).owner {
            Some(o) => match o.kind {
                OwnerType::User => *o.name == *self.user,
                OwnerType::Group => self.groups.contains(&o.name),
            },
            None => false,
        }
    }
}

/// One term of a formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    OwnMetalake,
    OwnCatalog,
    /// Any level of the schema chain.
    OwnSchema,
    OwnTable,
    OwnView,
    OwnFunction,
    /// `P@chain`: some active role ALLOWs `P` on a scope and no held role DENYs it on any.
    Priv(Privilege),
}

/// The ownership terms, before the privilege terms in [`Term::slot`].
const OWNERSHIP_TERMS: usize = 6;

/// One memo slot per term: the ownership terms, then one per privilege.
const SLOTS: usize = OWNERSHIP_TERMS + Privilege::ALL.len();

impl Term {
    /// The term's memo slot, below [`SLOTS`]: a privilege's discriminant is its place in
    /// `Privilege::ALL` (the `privileges!` macro declares both in one order).
    fn slot(self) -> usize {
        match self {
            Self::OwnMetalake => 0,
            Self::OwnCatalog => 1,
            Self::OwnSchema => 2,
            Self::OwnTable => 3,
            Self::OwnView => 4,
            Self::OwnFunction => 5,
            Self::Priv(p) => OWNERSHIP_TERMS + p as usize,
        }
    }
}

/// A formula in disjunctive normal form: it holds when every term of some clause holds.
pub type Formula = &'static [&'static [Term]];

/// An object's chain resolved against the snapshot's tree. Levels the policy never mentions
/// have no node, and nothing below them can carry a grant or an owner.
#[derive(Clone, Debug, Default)]
pub struct Target {
    pub catalog: Option<NodeId>,
    /// The schema chain, outermost first, as far as the tree has it.
    pub schemas: Vec<NodeId>,
    pub table: Option<NodeId>,
    pub view: Option<NodeId>,
    pub function: Option<NodeId>,
    /// Owners recorded by creation on the chain, where the policy names none.
    pub created: Created,
}

/// Which leaves of a schema a target needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    Table,
    View,
    Function,
    /// Existence checks: the name stands for a possible table and a possible view.
    TableAndView,
}

impl Target {
    /// The chain of an object: the policy's nodes, and the `owners` index's records where the
    /// policy names no owner (the snapshot's `owners` win on conflict).
    pub fn resolve(
        snap: &Snapshot,
        owners: &OwnerIndex,
        catalog: &str,
        levels: &[String],
        leaf: Option<(Leaf, &str)>,
    ) -> Self {
        let mut target = Self::resolve_nodes(snap, catalog, levels, leaf);
        if !owners.is_empty() {
            target.created = target.created_on(snap, owners, catalog, levels, leaf);
        }
        target
    }

    fn created_on(
        &self,
        snap: &Snapshot,
        owners: &OwnerIndex,
        catalog: &str,
        levels: &[String],
        leaf: Option<(Leaf, &str)>,
    ) -> Created {
        let table = leaf.and_then(|(k, n)| matches!(k, Leaf::Table | Leaf::TableAndView).then_some(n));
        let view = leaf.and_then(|(k, n)| matches!(k, Leaf::View | Leaf::TableAndView).then_some(n));
        let has_owner = |node: Option<NodeId>| node.is_some_and(|n| snap.node(n).owner.is_some());
        owners.chain(catalog, levels, table, view, |slot| match slot {
            Slot::Schema(i) => has_owner(self.schemas.get(i).copied()),
            Slot::Table => has_owner(self.table),
            Slot::View => has_owner(self.view),
        })
    }

    fn resolve_nodes(snap: &Snapshot, catalog: &str, levels: &[String], leaf: Option<(Leaf, &str)>) -> Self {
        let mut target = Target::default();
        let Some(cat) = snap.node(ROOT).below().children.get(catalog).copied() else { return target };
        target.catalog = Some(cat);
        let mut at = cat;
        for level in levels {
            match snap.node(at).below().children.get(level.as_str()) {
                Some(next) => {
                    target.schemas.push(*next);
                    at = *next;
                }
                None => return target,
            }
        }
        if levels.is_empty() {
            return target;
        }
        if let Some((kind, name)) = leaf {
            let node = snap.node(at);
            if matches!(kind, Leaf::Table | Leaf::TableAndView) {
                target.table = node.below().tables.get(name).copied();
            }
            if matches!(kind, Leaf::View | Leaf::TableAndView) {
                target.view = node.below().views.get(name).copied();
            }
            if kind == Leaf::Function {
                target.function = node.below().functions.get(name).copied();
            }
        }
        target
    }

    /// Every node of the chain: metalake, catalog, schemas, leaves.
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::once(ROOT)
            .chain(self.catalog)
            .chain(self.schemas.iter().copied())
            .chain(self.table)
            .chain(self.view)
            .chain(self.function)
    }
}

/// Whether some role of `roles` has a grant of `privilege` with `condition` on `node`;
/// returns the role. Walks the smaller side (grants or roles).
pub(crate) fn granted(
    snap: &Snapshot,
    node: NodeId,
    privilege: Privilege,
    condition: Condition,
    roles: &RoleSet,
) -> Option<RoleId> {
    let grants = snap.node(node).grants_of(privilege, condition);
    if grants.is_empty() || roles.is_empty() {
        return None;
    }
    if grants.len() <= roles.len() {
        grants.iter().map(|g| g.role).find(|r| roles.contains(*r))
    } else {
        roles.iter().find(|r| grants.binary_search_by(|g| g.role.cmp(r)).is_ok())
    }
}

pub fn term_holds(snap: &Snapshot, subject: &Subject<'_>, target: &Target, term: Term) -> bool {
    let own = |node: Option<NodeId>| subject.ownership && node.is_some_and(|n| subject.owns(snap, n));
    let created = |record: Option<&crate::core::ownership::Record>| {
        subject.ownership && record.is_some_and(|r| r.owned_by(subject.user, subject.groups))
    };
    match term {
        Term::OwnMetalake => own(Some(ROOT)),
        Term::OwnCatalog => own(target.catalog),
        Term::OwnSchema => {
            subject.ownership
                && (target.schemas.iter().any(|n| subject.owns(snap, *n))
                    || target.created.schemas.iter().any(|r| r.owned_by(subject.user, subject.groups)))
        }
        Term::OwnTable => own(target.table) || created(target.created.table.as_deref()),
        Term::OwnView => own(target.view) || created(target.created.view.as_deref()),
        Term::OwnFunction => own(target.function),
        Term::Priv(p) => matches!(privilege_access(snap, subject, target, p), Access::Allowed { .. }),
    }
}

/// What a privilege term `P@` finds on a target's chain, and the grant behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A held role DENYs `P` on a scope: the term fails, whatever allows it.
    Denied { role: RoleId, node: NodeId },
    /// No held role denies it and an active role ALLOWs it: the term holds.
    Allowed { role: RoleId, node: NodeId },
    /// Neither: the term fails (default deny).
    None,
}

/// The privilege term `P@` over `target`'s chain (docs/design.md §4); [`term_holds`] is this
/// being [`Access::Allowed`]. The first scope from the metalake down, and the lowest role id,
/// names the grant.
pub fn privilege_access(snap: &Snapshot, subject: &Subject<'_>, target: &Target, p: Privilege) -> Access {
    let found =
        |condition, roles| target.nodes().find_map(|node| granted(snap, node, p, condition, roles).map(|r| (node, r)));
    if let Some((node, role)) = found(Condition::Deny, subject.held) {
        return Access::Denied { role, node };
    }
    match found(Condition::Allow, subject.active) {
        Some((node, role)) => Access::Allowed { role, node },
        None => Access::None,
    }
}

/// The outcome of one formula on one target, with what it evaluated.
#[derive(Clone, Debug)]
pub struct Evaluation {
    pub allowed: bool,
    /// The clause that held, when allowed.
    pub clause: Option<usize>,
}

/// Evaluates `formula` over `target`, each term at most once.
pub fn evaluate(snap: &Snapshot, subject: &Subject<'_>, target: &Target, formula: Formula) -> Evaluation {
    // 0: not evaluated yet; 1: holds; 2: fails. A slot out of range (impossible, see
    // `Term::slot`) is evaluated each time instead of memoized.
    let mut memo = [0u8; SLOTS];
    for (i, clause) in formula.iter().enumerate() {
        let holds = clause.iter().all(|term| match memo.get_mut(term.slot()) {
            Some(seen) => {
                if *seen == 0 {
                    *seen = if term_holds(snap, subject, target, *term) { 1 } else { 2 };
                }
                *seen == 1
            }
            None => term_holds(snap, subject, target, *term),
        });
        if holds {
            return Evaluation { allowed: true, clause: Some(i) };
        }
    }
    Evaluation { allowed: false, clause: None }
}
