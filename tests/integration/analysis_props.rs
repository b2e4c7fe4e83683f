//! Property tests of `who-can` and `diff` against the evaluator (issue 19): for random
//! policies, `who-can` lists exactly the subjects whose privilege term holds or who own the
//! object, and `diff` exactly the (subject, right, object) triples whose answer differs. The
//! oracle asks every subject about every object: it narrows each subject as the proxy does
//! (`roles::narrow`), resolves each object's chain from its structured name, and reads the
//! evaluator's terms, with none of the analysis module's candidate selection. The report's
//! cells are checked the same way.

use icegate::core::analysis::access::{Object, ObjectKey, Right, State, SubjectRef, Via};
use icegate::core::analysis::{diff, report, who_can};
use icegate::core::ownership::OwnerIndex;
use icegate::core::policy::Snapshot;
use icegate::core::policy::eval::{self, Access, Leaf, Target, Term};
use icegate::core::policy::model::{ObjectType, Privilege};
use icegate::core::roles::{self, ActiveRoles, OwnershipMode, Principal};
use proptest::prelude::*;
use std::collections::BTreeSet;

const ROLES: [&str; 4] = ["r0", "r1", "r2", "r3"];
const USERS: [&str; 3] = ["u0", "u1", "u2"];
const GROUPS: [&str; 2] = ["g0", "g1"];
/// Owners the policy may name: defined users and groups, and ones it does not define.
const OWNERS: [(&str, &str); 4] = [("u0", "USER"), ("g0", "GROUP"), ("zed", "USER"), ("idp", "GROUP")];
const PRIVILEGES: [Privilege; 8] = [
    Privilege::UseCatalog,
    Privilege::UseSchema,
    Privilege::CreateSchema,
    Privilege::CreateTable,
    Privilege::SelectTable,
    Privilege::ModifyTable,
    Privilege::SelectView,
    Privilege::ManageGrants,
];

/// An object of the generated universe: catalog, schema levels, and a leaf (kind, name).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Obj {
    Metalake,
    Catalog(&'static str),
    Schema(&'static str, &'static [&'static str]),
    Leaf(&'static str, &'static [&'static str], ObjectType, &'static str),
}

const CATALOGS: [&str; 2] = ["c1", "c2"];
const SCHEMAS: [&[&str]; 3] = [&["s1"], &["s1", "x"], &["s2"]];

impl Obj {
    fn kind(&self) -> ObjectType {
        match self {
            Obj::Metalake => ObjectType::Metalake,
            Obj::Catalog(_) => ObjectType::Catalog,
            Obj::Schema(..) => ObjectType::Schema,
            Obj::Leaf(_, _, k, _) => *k,
        }
    }

    fn full_name(&self) -> String {
        match self {
            Obj::Metalake => "lake".into(),
            Obj::Catalog(c) => (*c).into(),
            Obj::Schema(c, s) => format!("{c}.{}", s.join(":")),
            Obj::Leaf(c, s, _, n) => format!("{c}.{}.{n}", s.join(":")),
        }
    }

    fn key(&self) -> ObjectKey {
        ObjectKey { kind: self.kind(), full_name: self.full_name().into() }
    }

    /// This object and its ancestors: what a policy naming it adds to the object tree.
    fn with_ancestors(&self) -> Vec<Obj> {
        let mut out = vec![Obj::Metalake];
        let (c, levels) = match self {
            Obj::Metalake => return out,
            Obj::Catalog(c) => (*c, &[][..]),
            Obj::Schema(c, s) | Obj::Leaf(c, s, _, _) => (*c, *s),
        };
        out.push(Obj::Catalog(c));
        // The generated schemas nest only as `s1` > `s1:x`.
        if levels.len() == 2 {
            out.push(Obj::Schema(c, SCHEMAS[0]));
        }
        if !levels.is_empty() {
            out.push(Obj::Schema(c, levels));
        }
        if matches!(self, Obj::Leaf(..)) {
            out.push(self.clone());
        }
        out
    }

    /// The chain the oracle asks about, resolved from the structured name.
    fn target(&self, snap: &Snapshot) -> Target {
        let levels = |s: &[&str]| s.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
        let empty = OwnerIndex::empty();
        match self {
            Obj::Metalake => Target::default(),
            Obj::Catalog(c) => Target::resolve(snap, empty, c, &[], None),
            Obj::Schema(c, s) => Target::resolve(snap, empty, c, &levels(s), None),
            Obj::Leaf(c, s, k, n) => {
                let leaf = if *k == ObjectType::View { Leaf::View } else { Leaf::Table };
                Target::resolve(snap, empty, c, &levels(s), Some((leaf, n)))
            }
        }
    }
}

fn obj_strategy() -> impl Strategy<Value = Obj> {
    let leaf =
        (0..2usize, 0..3usize, prop::bool::ANY, prop::sample::select(vec!["t1", "t2"])).prop_map(|(c, s, view, n)| {
            Obj::Leaf(CATALOGS[c], SCHEMAS[s], if view { ObjectType::View } else { ObjectType::Table }, n)
        });
    prop_oneof![
        1 => Just(Obj::Metalake),
        2 => (0..2usize).prop_map(|c| Obj::Catalog(CATALOGS[c])),
        3 => (0..2usize, 0..3usize).prop_map(|(c, s)| Obj::Schema(CATALOGS[c], SCHEMAS[s])),
        4 => leaf,
    ]
}

#[derive(Clone, Debug)]
struct Policy {
    /// Per user: (roles, groups).
    users: Vec<(BTreeSet<usize>, BTreeSet<usize>)>,
    groups: Vec<BTreeSet<usize>>,
    /// (role, object, privilege, deny)
    grants: Vec<(usize, Obj, Privilege, bool)>,
    /// (object, owner index into OWNERS)
    owners: Vec<(Obj, usize)>,
}

impl Policy {
    fn yaml(&self) -> String {
        let list = |s: &BTreeSet<usize>, names: &[&str]| s.iter().map(|i| names[*i]).collect::<Vec<_>>().join(", ");
        let mut y = String::from("version: 1\nmetalake: lake\ndefault_catalog: c1\nusers:\n");
        for (u, (roles, groups)) in self.users.iter().enumerate() {
            y += &format!(
                "  - {{ name: {}, roles: [{}], groups: [{}] }}\n",
                USERS[u],
                list(roles, &ROLES),
                list(groups, &GROUPS)
            );
        }
        y += "groups:\n";
        for (g, roles) in self.groups.iter().enumerate() {
            y += &format!("  - {{ name: {}, roles: [{}] }}\n", GROUPS[g], list(roles, &ROLES));
        }
        y += "roles:\n";
        for (r, name) in ROLES.iter().enumerate() {
            let objects: Vec<String> = self
                .grants
                .iter()
                .filter(|g| g.0 == r)
                .map(|(_, obj, p, deny)| {
                    let cond = if *deny { "DENY" } else { "ALLOW" };
                    format!(
                        "{{ type: {}, fullName: \"{}\", privileges: [{{ name: {p}, condition: {cond} }}] }}",
                        obj.kind(),
                        obj.full_name()
                    )
                })
                .collect();
            y += &format!("  - name: {name}\n    securableObjects: [{}]\n", objects.join(", "));
        }
        let owners: Vec<String> = self
            .owners()
            .iter()
            .map(|(obj, (owner, kind))| {
                format!(
                    "{{ type: {}, fullName: \"{}\", owner: {owner}, ownerType: {kind} }}",
                    obj.kind(),
                    obj.full_name()
                )
            })
            .collect();
        y += &format!("owners: [{}]\n", owners.join(", "));
        y
    }

    /// The owners written: the first for each object (an object owned twice does not load).
    fn owners(&self) -> Vec<(Obj, (&'static str, &'static str))> {
        let mut seen = BTreeSet::new();
        self.owners
            .iter()
            .filter(|(obj, _)| seen.insert(obj.clone()))
            .map(|(obj, who)| (obj.clone(), OWNERS[*who]))
            .collect()
    }

    fn load(&self) -> Snapshot {
        crate::support::load(&self.yaml())
    }

    /// Every object the policy names, with its ancestors.
    fn objects(&self) -> BTreeSet<Obj> {
        let named = self.grants.iter().map(|g| &g.1).chain(self.owners.iter().map(|o| &o.0));
        named.flat_map(Obj::with_ancestors).chain([Obj::Metalake]).collect()
    }

    fn subjects(&self) -> BTreeSet<SubjectRef> {
        let mut out: BTreeSet<SubjectRef> = USERS.iter().map(|u| SubjectRef::User((*u).into())).collect();
        out.extend(GROUPS.iter().map(|g| SubjectRef::Group((*g).into())));
        for (_, (name, kind)) in self.owners() {
            out.insert(if kind == "USER" { SubjectRef::User(name.into()) } else { SubjectRef::Group(name.into()) });
        }
        out
    }

    fn privileges(&self) -> BTreeSet<Privilege> {
        self.grants.iter().map(|g| g.2).collect()
    }
}

fn role_set() -> impl Strategy<Value = BTreeSet<usize>> {
    prop::collection::btree_set(0..ROLES.len(), 0..3)
}

fn grant_strategy() -> impl Strategy<Value = Option<(usize, Obj, Privilege, bool)>> {
    (0..ROLES.len(), obj_strategy(), prop::sample::select(PRIVILEGES.to_vec()), prop::bool::weighted(0.2))
        .prop_map(|(r, obj, p, deny)| p.is_grantable_on(obj.kind()).then_some((r, obj, p, deny)))
}

fn policy_strategy() -> impl Strategy<Value = Policy> {
    (
        prop::collection::vec((role_set(), prop::collection::btree_set(0..GROUPS.len(), 0..2)), USERS.len()),
        prop::collection::vec(role_set(), GROUPS.len()),
        prop::collection::vec(grant_strategy(), 0..20),
        prop::collection::vec((obj_strategy(), 0..OWNERS.len()), 0..4),
    )
        .prop_map(|(users, groups, grants, owners)| Policy {
            users,
            groups,
            grants: grants.into_iter().flatten().collect(),
            owners,
        })
}

/// A small change to a policy, so that most subjects and roles stay as they were (what the
/// diff's shortcuts rely on), or an unrelated policy.
#[derive(Clone, Debug)]
enum Edit {
    DropGrant(usize),
    AddGrant(Option<(usize, Obj, Privilege, bool)>),
    FlipGrant(usize),
    UserRoles(usize, BTreeSet<usize>),
    UserGroups(usize, BTreeSet<usize>),
    GroupRoles(usize, BTreeSet<usize>),
    Owner(Option<(Obj, usize)>),
    Replace(Policy),
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => any::<usize>().prop_map(Edit::DropGrant),
        3 => grant_strategy().prop_map(Edit::AddGrant),
        2 => any::<usize>().prop_map(Edit::FlipGrant),
        2 => (0..USERS.len(), role_set()).prop_map(|(u, r)| Edit::UserRoles(u, r)),
        1 => (0..USERS.len(), prop::collection::btree_set(0..GROUPS.len(), 0..2)).prop_map(|(u, g)| Edit::UserGroups(u, g)),
        1 => (0..GROUPS.len(), role_set()).prop_map(|(g, r)| Edit::GroupRoles(g, r)),
        2 => prop::option::of((obj_strategy(), 0..OWNERS.len())).prop_map(Edit::Owner),
        1 => policy_strategy().prop_map(Edit::Replace),
    ]
}

fn apply(mut p: Policy, edits: &[Edit]) -> Policy {
    for edit in edits {
        let n = p.grants.len().max(1);
        match edit.clone() {
            Edit::DropGrant(i) if !p.grants.is_empty() => {
                p.grants.remove(i % n);
            }
            Edit::AddGrant(Some(g)) => p.grants.push(g),
            Edit::FlipGrant(i) if !p.grants.is_empty() => p.grants[i % n].3 ^= true,
            Edit::UserRoles(u, r) => p.users[u].0 = r,
            Edit::UserGroups(u, g) => p.users[u].1 = g,
            Edit::GroupRoles(g, r) => p.groups[g] = r,
            Edit::Owner(Some(o)) => p.owners.insert(0, o),
            Edit::Owner(None) => p.owners.clear(),
            Edit::Replace(other) => p = other,
            _ => {}
        }
    }
    p
}

/// The oracle: the evaluator's answer for `subject` asking `right` of `obj`, every held role
/// active.
fn oracle(snap: &Snapshot, subject: &SubjectRef, right: Right, obj: &Obj) -> State {
    let principal = match subject {
        SubjectRef::User(u) => Principal { user: u.to_string(), ..Principal::default() },
        SubjectRef::Group(g) => Principal { user: String::new(), groups: vec![g.to_string()], claim_roles: None },
    };
    let id = snap.user_id(&principal.user);
    let narrowed = roles::narrow(snap, &principal, id, &ActiveRoles::DEFAULT, OwnershipMode::Always).unwrap();
    let s = narrowed.subject(&principal.user).unnarrowed();
    let target = obj.target(snap);
    match right {
        Right::Privilege(p) => match eval::privilege_access(snap, &s, &target, p) {
            Access::Allowed { .. } => State::Allow,
            Access::Denied { .. } => State::Deny,
            Access::None => State::None,
        },
        Right::Owner => {
            let own = [Term::OwnMetalake, Term::OwnCatalog, Term::OwnSchema, Term::OwnTable, Term::OwnView];
            if own.iter().any(|t| eval::term_holds(snap, &s, &target, *t)) { State::Allow } else { State::None }
        }
    }
}

/// `via` names something on the object's chain: a role the subject holds that ALLOWs the
/// privilege there, or an owned object.
fn via_is_on_chain(policy: &Policy, subject: &SubjectRef, right: Right, obj: &Obj, via: &Via) -> bool {
    let chain: Vec<ObjectKey> = obj.with_ancestors().iter().map(Obj::key).collect();
    match via {
        Via::Grant { role, object, .. } => {
            let Right::Privilege(p) = right else { return false };
            let r = ROLES.iter().position(|n| **n == **role).unwrap();
            let held = match subject {
                SubjectRef::User(u) => USERS.iter().position(|n| **n == **u).is_some_and(|u| {
                    let (roles, groups) = &policy.users[u];
                    roles.contains(&r) || groups.iter().any(|g| policy.groups[*g].contains(&r))
                }),
                SubjectRef::Group(g) => {
                    GROUPS.iter().position(|n| **n == **g).is_some_and(|g| policy.groups[g].contains(&r))
                }
            };
            held && chain.contains(object)
                && policy.grants.iter().any(|(gr, o, gp, deny)| *gr == r && o.key() == *object && *gp == p && !deny)
        }
        Via::Owned { object, .. } => chain.contains(object),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn who_can_lists_exactly_the_subjects_the_evaluator_allows(
        policy in policy_strategy(),
        obj in obj_strategy(),
        right in prop_oneof![
            4 => prop::sample::select(PRIVILEGES.to_vec()).prop_map(Right::Privilege),
            1 => Just(Right::Owner),
        ],
    ) {
        let snap = policy.load();
        let object = Object::parse(obj.kind(), &obj.full_name(), "lake").unwrap();
        let got = who_can::who_can(&snap, right, &object);
        let listed: Vec<SubjectRef> = got.iter().map(|h| h.subject.clone()).collect();
        let expected: Vec<SubjectRef> =
            policy.subjects().into_iter().filter(|s| oracle(&snap, s, right, &obj) == State::Allow).collect();
        prop_assert_eq!(&listed, &expected);
        for h in &got {
            let via = h.via.as_ref().unwrap();
            prop_assert!(via_is_on_chain(&policy, &h.subject, right, &obj, via), "{:?} via {:?}", h.subject, via);
        }
    }

    #[test]
    fn diff_lists_exactly_the_triples_whose_answer_differs(
        old in policy_strategy(),
        edits in prop::collection::vec(edit_strategy(), 0..4),
    ) {
        let new = apply(old.clone(), &edits);
        let (a, b) = (old.load(), new.load());
        let got: Vec<(SubjectRef, Right, ObjectKey, State, State)> = diff::diff(&a, &b)
            .into_iter()
            .map(|c| (c.subject, c.right, c.object, c.before, c.after))
            .collect();
        let subjects: BTreeSet<SubjectRef> = old.subjects().union(&new.subjects()).cloned().collect();
        let objects: BTreeSet<Obj> = old.objects().union(&new.objects()).cloned().collect();
        let rights: Vec<Right> = old
            .privileges()
            .union(&new.privileges())
            .map(|p| Right::Privilege(*p))
            .chain([Right::Owner])
            .collect();
        let mut expected = Vec::new();
        for s in &subjects {
            for obj in &objects {
                for right in rights.iter().filter(|r| r.asked_of(obj.kind())) {
                    let (before, after) = (oracle(&a, s, *right, obj), oracle(&b, s, *right, obj));
                    if before != after {
                        expected.push((s.clone(), *right, obj.key(), before, after));
                    }
                }
            }
        }
        let mut got_sorted = got.clone();
        got_sorted.sort();
        expected.sort();
        prop_assert_eq!(got_sorted, expected, "old:\n{}\nnew:\n{}", old.yaml(), new.yaml());
    }

    #[test]
    fn report_cells_hold_exactly_the_evaluators_answers(policy in policy_strategy()) {
        let snap = policy.load();
        let data = report::data(report::Labelled { snapshot: &snap, label: "p" }, None);
        let subjects: Vec<&str> = data["subjects"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
        let objects: Vec<String> = data["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| format!("{} {}", o["type"].as_str().unwrap(), o["fullName"].as_str().unwrap()))
            .collect();
        let mut got = BTreeSet::new();
        for cell in data["cells"].as_array().unwrap() {
            let (s, o) = (cell[0].as_u64().unwrap() as usize, cell[1].as_u64().unwrap() as usize);
            for entry in cell[2].as_array().unwrap() {
                let state = entry[1][0].as_str().unwrap().to_owned();
                got.insert((subjects[s].to_owned(), objects[o].clone(), entry[0].as_str().unwrap().to_owned(), state));
            }
        }
        let rights: Vec<Right> = policy.privileges().into_iter().map(Right::Privilege).chain([Right::Owner]).collect();
        let mut expected = BTreeSet::new();
        for s in policy.subjects() {
            for obj in policy.objects() {
                for right in &rights {
                    if let Right::Privilege(p) = right && !p.is_grantable_on(obj.kind()) {
                        continue;
                    }
                    let state = match (oracle(&snap, &s, *right, &obj), right) {
                        (State::None, _) => continue,
                        (State::Allow, Right::Owner) => "owner",
                        (state, _) => state.as_str(),
                    };
                    let object = format!("{} {}", obj.kind(), obj.full_name());
                    expected.insert((s.label(), object, right.as_str().to_owned(), state.to_owned()));
                }
            }
        }
        prop_assert_eq!(got, expected, "policy:\n{}", policy.yaml());
    }
}
