//! One subject's effective access to one object, as the evaluator decides it: the privilege
//! terms and ownership terms of docs/design.md §4 with every held role active (docs/design.md §10), and
//! the names the analysis commands print (subjects, objects, rights, states, `via`).

use crate::core::policy::eval::{self, Access, Leaf, Subject, Target, Term};
use crate::core::policy::model::{ObjectType, OwnerType, Privilege};
use crate::core::policy::names::{FullName, parse_full_name};
use crate::core::policy::snapshot::{NodeId, RoleId};
use crate::core::policy::{RoleSet, Snapshot};
use crate::core::roles::{self, ActiveRoles, OwnershipMode, Principal};
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

/// A user or a group, by name. Users sort before groups.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SubjectRef {
    User(Box<str>),
    Group(Box<str>),
}

impl SubjectRef {
    /// `user:NAME` or `group:NAME`, as `diff` prints it.
    pub fn label(&self) -> String {
        match self {
            Self::User(n) => format!("user:{n}"),
            Self::Group(n) => format!("group:{n}"),
        }
    }

    /// `{"user": U}` or `{"group": G}`, as `who-can` prints it.
    pub fn json_key(&self) -> (&'static str, &str) {
        match self {
            Self::User(n) => ("user", n),
            Self::Group(n) => ("group", n),
        }
    }
}

/// An object by its type and Gravitino full name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    pub kind: ObjectType,
    pub full_name: Box<str>,
}

/// `{"type": ..., "fullName": ...}`, as docs/design.md §10 names objects.
impl Serialize for ObjectKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_struct("Object", 2)?;
        o.serialize_field("type", self.kind.as_str())?;
        o.serialize_field("fullName", &*self.full_name)?;
        o.end()
    }
}

/// What is asked about an object: a privilege term, or ownership (`OWNER`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Right {
    Privilege(Privilege),
    Owner,
}

impl Right {
    pub fn parse(s: &str) -> Option<Self> {
        if s.eq_ignore_ascii_case("OWNER") { Some(Self::Owner) } else { Privilege::parse(s).map(Self::Privilege) }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Privilege(p) => p.as_str(),
            Self::Owner => "OWNER",
        }
    }

    /// Whether the analysis tables (`diff`, `report`) ask this right of objects of `kind`:
    /// ownership of every object, and a privilege of the objects it acts on: SELECT_TABLE of
    /// tables, USE_SCHEMA and CREATE_TABLE of schemas, USE_CATALOG of catalogs, CREATE_SCHEMA
    /// of catalogs and schemas, MANAGE_GRANTS of every object it is grantable on, metalake-wide
    /// privileges of the metalake. A grant on a container reaches these objects below it, so a
    /// SELECT_TABLE moved from a schema to each of its tables changes no answer.
    pub fn asked_of(self, kind: ObjectType) -> bool {
        use ObjectType as T;
        let Self::Privilege(p) = self else { return true };
        let grantable = p.grantable_on();
        let leaves = [T::Table, T::View, T::Function, T::Topic, T::Fileset, T::Model];
        match p {
            Privilege::ManageGrants => p.is_grantable_on(kind),
            Privilege::UseCatalog => kind == T::Catalog,
            Privilege::CreateSchema => matches!(kind, T::Catalog | T::Schema),
            _ if grantable.iter().any(|t| leaves.contains(t)) => leaves.contains(&kind) && p.is_grantable_on(kind),
            _ if p.is_grantable_on(T::Schema) => kind == T::Schema,
            _ => kind == T::Metalake,
        }
    }
}

/// The answer to one question: `allow`, `deny` (a held role DENYs it: it fails whatever
/// allows it) or `none`. Ownership is `allow` or `none`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum State {
    None,
    Deny,
    Allow,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Deny => "deny",
            Self::Allow => "allow",
        }
    }
}

/// What gives (or, for a deny, takes) the access: a role's grant on an object of the chain,
/// or an owned object of the chain; `group` when the subject, a user, has it through a group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Via {
    Grant { role: Box<str>, object: ObjectKey, group: Option<Box<str>> },
    Owned { object: ObjectKey, group: Option<Box<str>> },
}

/// `{"role": R, "object": O}` for a grant, `{"owned": O}` for ownership, with `"group": G`
/// when a user has it through a group.
impl Serialize for Via {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut v = s.serialize_struct("Via", 3)?;
        let group = match self {
            Self::Grant { role, object, group } => {
                v.serialize_field("role", &**role)?;
                v.serialize_field("object", object)?;
                group
            }
            Self::Owned { object, group } => {
                v.serialize_field("owned", object)?;
                group
            }
        };
        if let Some(g) = group {
            v.serialize_field("group", &**g)?;
        }
        v.end()
    }
}

impl Via {
    /// In words, for the report: "role `analyst` on SCHEMA `prod.sales`".
    pub fn text(&self) -> String {
        let (mut out, group) = match self {
            Self::Grant { role, object, group } => {
                (format!("role `{role}` on {} `{}`", object.kind, object.full_name), group)
            }
            Self::Owned { object, group } => (format!("owner of {} `{}`", object.kind, object.full_name), group),
        };
        if let Some(g) = group {
            out.push_str(&format!(" (through group `{g}`)"));
        }
        out
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub state: State,
    pub via: Option<Via>,
}

impl Answer {
    const NONE: Answer = Answer { state: State::None, via: None };
}

/// An object the analysis asks about: its key and its name split by its type's shape.
#[derive(Debug)]
pub struct Object {
    pub key: ObjectKey,
    name: FullName,
}

impl Object {
    /// The object of `kind` named `full` in a policy of `metalake`. Only the types the
    /// evaluator indexes can be asked about: icegate keeps no tree of topics, filesets, models,
    /// tags, policies, job templates, roles or jobs (no Iceberg operation checks them).
    pub fn parse(kind: ObjectType, full: &str, metalake: &str) -> Result<Self, String> {
        use ObjectType as T;
        if !matches!(kind, T::Metalake | T::Catalog | T::Schema | T::Table | T::View | T::Function) {
            return Err(format!(
                "type `{kind}` is not one icegate decides on; ask about METALAKE, CATALOG, SCHEMA, TABLE, VIEW or FUNCTION"
            ));
        }
        let name = parse_full_name(kind, full, metalake)?;
        Ok(Self { key: ObjectKey { kind, full_name: full.into() }, name })
    }

    /// The object's chain in `snap`; `None` when it lies outside that policy's metalake. In a
    /// catalog that folds names (`case_sensitive: false`) the names are folded first, as a
    /// request's are (docs/design.md §2).
    pub fn target(&self, snap: &Snapshot) -> Option<Target> {
        let empty = crate::core::ownership::OwnerIndex::empty();
        let leaf = match self.key.kind {
            ObjectType::View => Leaf::View,
            ObjectType::Function => Leaf::Function,
            _ => Leaf::Table,
        };
        let (catalog, levels, name) = match &self.name {
            FullName::Metalake => return (*self.key.full_name == *snap.metalake()).then(Target::default),
            FullName::MetalakeObject(_) => return None,
            FullName::Catalog(c) => (c, &[][..], None),
            FullName::Schema(c, levels) => (c, &levels[..], None),
            FullName::SchemaObject(c, levels, name) => (c, &levels[..], Some(name.as_str())),
        };
        if snap.folds_names(catalog) {
            let levels: Vec<String> = levels.iter().map(|l| l.to_lowercase()).collect();
            let name = name.map(str::to_lowercase);
            return Some(Target::resolve(snap, empty, catalog, &levels, name.as_deref().map(|n| (leaf, n))));
        }
        Some(Target::resolve(snap, empty, catalog, levels, name.map(|n| (leaf, n))))
    }

    /// The keys of the objects whose grants and owners reach this one: itself and every
    /// ancestor (metalake, catalog, each schema level).
    pub fn chain_keys(&self, metalake: &str) -> Vec<ObjectKey> {
        let key = |kind, name: String| ObjectKey { kind, full_name: name.into() };
        let mut out = vec![key(ObjectType::Metalake, metalake.to_owned())];
        let (catalog, levels, leaf) = match &self.name {
            FullName::Catalog(c) => (c, &[][..], false),
            FullName::Schema(c, levels) => (c, &levels[..], false),
            FullName::SchemaObject(c, levels, _) => (c, &levels[..], true),
            FullName::Metalake | FullName::MetalakeObject(_) => return out,
        };
        out.push(key(ObjectType::Catalog, catalog.clone()));
        let mut schema = catalog.clone();
        for (i, level) in levels.iter().enumerate() {
            schema.push(if i == 0 { '.' } else { ':' });
            schema.push_str(level);
            out.push(key(ObjectType::Schema, schema.clone()));
        }
        if leaf {
            out.push(self.key.clone());
        }
        out
    }
}

/// A subject's held roles and groups in one policy, narrowed as the proxy narrows a request
/// without a header, with every held role then made active.
#[derive(Debug)]
pub struct Holder {
    user: Box<str>,
    groups: Vec<Box<str>>,
    held: RoleSet,
    /// The user's own roles (a role outside them is held through a group).
    direct: Vec<RoleId>,
}

impl Holder {
    pub fn new(snap: &Snapshot, subject: &SubjectRef) -> Self {
        let principal = match subject {
            SubjectRef::User(u) => Principal { user: u.to_string(), ..Principal::default() },
            // A group stands alone: an identity-provided membership with no user. Owner names
            // are never empty, so the empty user owns nothing.
            SubjectRef::Group(g) => Principal { user: String::new(), groups: vec![g.to_string()], claim_roles: None },
        };
        let id = snap.user_id(&principal.user);
        let direct = id.map(|id| snap.user(id).roles.clone()).unwrap_or_default();
        // The default header never fails to narrow; were it to, the subject holds nothing.
        let narrowed = roles::narrow(snap, &principal, id, &ActiveRoles::DEFAULT, OwnershipMode::Always).ok();
        let (groups, held) = narrowed.map(|n| (n.groups, n.held)).unwrap_or_default();
        Self { user: principal.user.into(), groups, held, direct }
    }

    pub fn held(&self) -> impl Iterator<Item = RoleId> + '_ {
        self.held.iter()
    }

    pub fn groups(&self) -> &[Box<str>] {
        &self.groups
    }

    /// The user's name; empty for a group asked on its own.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// Every held role: all are active in the analyses.
    pub fn held_set(&self) -> &RoleSet {
        &self.held
    }

    /// With every held role active and ownership on (docs/design.md §10).
    fn subject(&self) -> Subject<'_> {
        Subject {
            user: &self.user,
            groups: &self.groups,
            held: &self.held,
            active: &self.held,
            ownership: true,
            owners: crate::core::ownership::OwnerIndex::empty(),
        }
    }

    /// The first of the user's groups (in policy order) that holds `role`.
    fn group_holding(&self, snap: &Snapshot, role: RoleId) -> Option<Box<str>> {
        if self.user.is_empty() || self.direct.contains(&role) {
            return None;
        }
        self.groups.iter().find(|g| snap.group_id(g).is_some_and(|id| snap.group(id).roles.contains(&role))).cloned()
    }
}

fn node_key(snap: &Snapshot, node: NodeId) -> ObjectKey {
    let n = snap.node(node);
    ObjectKey { kind: n.kind.unwrap_or(ObjectType::Metalake), full_name: n.full_name.clone() }
}

/// The ownership terms that make up `own(metalake..X)`: the object or any ancestor.
const OWN_CHAIN: [Term; 6] =
    [Term::OwnMetalake, Term::OwnCatalog, Term::OwnSchema, Term::OwnTable, Term::OwnView, Term::OwnFunction];

/// The evaluator's answer for `holder` asking `right` of the object whose chain is `target`,
/// without what gives it (what `diff` compares, on many objects).
pub fn state(snap: &Snapshot, holder: &Holder, right: Right, target: Option<&Target>) -> State {
    let Some(target) = target else { return State::None };
    let subject = holder.subject();
    match right {
        Right::Privilege(p) => match eval::privilege_access(snap, &subject, target, p) {
            Access::None => State::None,
            Access::Denied { .. } => State::Deny,
            Access::Allowed { .. } => State::Allow,
        },
        Right::Owner if OWN_CHAIN.iter().any(|t| eval::term_holds(snap, &subject, target, *t)) => State::Allow,
        Right::Owner => State::None,
    }
}

/// [`state`], with the grant or owned object behind it.
pub fn answer(snap: &Snapshot, holder: &Holder, right: Right, target: Option<&Target>) -> Answer {
    let Some(target) = target else { return Answer::NONE };
    let subject = holder.subject();
    match right {
        Right::Privilege(p) => {
            let (state, role, node) = match eval::privilege_access(snap, &subject, target, p) {
                Access::None => return Answer::NONE,
                Access::Denied { role, node } => (State::Deny, role, node),
                Access::Allowed { role, node } => (State::Allow, role, node),
            };
            let via = Via::Grant {
                role: snap.role_name(role).into(),
                object: node_key(snap, node),
                group: holder.group_holding(snap, role),
            };
            Answer { state, via: Some(via) }
        }
        Right::Owner => {
            if !OWN_CHAIN.iter().any(|t| eval::term_holds(snap, &subject, target, *t)) {
                return Answer::NONE;
            }
            let via = target.nodes().find(|n| subject.owns(snap, *n)).map(|node| {
                let group = snap
                    .node(node)
                    .owner
                    .as_ref()
                    .filter(|o| o.kind == OwnerType::Group && !holder.user.is_empty())
                    .map(|o| o.name.clone());
                Via::Owned { object: node_key(snap, node), group }
            });
            Answer { state: State::Allow, via }
        }
    }
}
