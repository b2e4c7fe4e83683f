//! What a policy's grants and owners can reach: the objects of one or two policies by name,
//! the objects below each, and per role and per owner what it names. An answer other than
//! `none` needs a held role's grant, or an owner, on the object's chain (docs/design.md §4), so
//! `diff` and `report` ask a subject only about the objects its roles and ownerships reach.

use super::access::{Holder, Object, ObjectKey, Right, SubjectRef};
use crate::core::policy::Snapshot;
use crate::core::policy::model::{Condition, ObjectType, OwnerType, Privilege};
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};

/// Which privileges are asked of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asking {
    /// Those that act on objects of its type ([`Right::asked_of`]): `diff`.
    ActedOn,
    /// Every privilege grantable on its type: on a catalog or schema, what reaches every
    /// object below it (`report`).
    Grantable,
}

/// The objects named in one or two policies (every node of their trees: the objects grants
/// and owners name, and their ancestors), sorted by type and full name.
#[derive(Debug)]
pub struct Universe {
    pub objects: Vec<Object>,
    asking: Asking,
    /// Per object key: the objects at or below it, ascending.
    below: FxHashMap<ObjectKey, Vec<u32>>,
    /// The privileges some role grants or denies, then `OWNER`.
    pub rights: Vec<Right>,
}

impl Universe {
    /// The object with id `id`.
    #[expect(clippy::indexing_slicing, reason = "INVARIANT: object ids are indices of `objects`, made by `new`")]
    pub fn object(&self, id: u32) -> &Object {
        &self.objects[id as usize]
    }

    pub fn new(snaps: &[&Snapshot], asking: Asking) -> Self {
        let mut objects: BTreeMap<ObjectKey, Object> = BTreeMap::new();
        let mut privileges: BTreeSet<Privilege> = BTreeSet::new();
        for snap in snaps {
            for node in &snap.nodes {
                privileges.extend(node.grants.iter().map(|g| g.privilege));
                let kind = node.kind.unwrap_or(ObjectType::Metalake);
                if let Ok(object) = Object::parse(kind, &node.full_name, snap.metalake()) {
                    objects.entry(object.key.clone()).or_insert(object);
                }
            }
        }
        let objects: Vec<Object> = objects.into_values().collect();
        let metalakes: BTreeSet<&str> = snaps.iter().map(|s| s.metalake()).collect();
        let mut below: FxHashMap<ObjectKey, Vec<u32>> = FxHashMap::default();
        for (i, object) in objects.iter().enumerate() {
            let mut keys: Vec<ObjectKey> = metalakes.iter().flat_map(|m| object.chain_keys(m)).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                below.entry(key).or_default().push(i as u32);
            }
        }
        let mut rights: Vec<Right> = privileges.into_iter().map(Right::Privilege).collect();
        rights.push(Right::Owner);
        Self { objects, asking, below, rights }
    }

    /// Every (right, object) that a grant of `privilege` on `key` can decide.
    fn reach_grant(&self, key: &ObjectKey, privilege: Privilege, out: &mut Vec<(Right, u32)>) {
        let right = Right::Privilege(privilege);
        let below = self.below.get(key).map_or(&[][..], Vec::as_slice);
        // Objects sort by type first, so the objects of one type below `key` are one run.
        let kind_of = |i: &u32| self.object(*i).key.kind;
        for kind in ObjectType::ALL {
            let asked = match self.asking {
                Asking::ActedOn => right.asked_of(kind),
                Asking::Grantable => privilege.is_grantable_on(kind),
            };
            if asked {
                let start = below.partition_point(|i| kind_of(i) < kind);
                let run = below.get(start..).unwrap_or_default();
                let run = run.get(..run.partition_point(|i| kind_of(i) == kind)).unwrap_or_default();
                out.extend(run.iter().map(|i| (right, *i)));
            }
        }
    }

    /// The (right, object) pairs whose answer for a holder of `roles` can be other than `none`
    /// in the policy of `facts`: the objects its grants reach.
    pub fn reached_by_roles(&self, facts: &Facts, roles: &[Box<str>], out: &mut Vec<(Right, u32)>) {
        for role in roles {
            for (key, privilege, _) in facts.grants.get(role).map_or(&[][..], Vec::as_slice) {
                self.reach_grant(key, *privilege, out);
            }
        }
    }

    /// The objects at or below the owned objects `owned`, asked `OWNER`.
    pub fn reached_by_owned(&self, owned: &[ObjectKey], out: &mut Vec<(Right, u32)>) {
        for key in owned {
            let below = self.below.get(key).map_or(&[][..], Vec::as_slice);
            out.extend(below.iter().map(|i| (Right::Owner, *i)));
        }
    }
}

/// One policy's grants by role name and owned objects by owner, keyed by name so that two
/// policies can be compared.
#[derive(Debug, Default)]
pub struct Facts {
    /// Per role: its grants as (object, privilege, condition), sorted.
    pub grants: FxHashMap<Box<str>, Vec<(ObjectKey, Privilege, Condition)>>,
    users_own: FxHashMap<Box<str>, Vec<ObjectKey>>,
    groups_own: FxHashMap<Box<str>, Vec<ObjectKey>>,
    /// Every subject the policy names: its users and groups, and the owners it names.
    pub subjects: BTreeSet<SubjectRef>,
}

impl Facts {
    pub fn new(snap: &Snapshot) -> Self {
        let mut facts = Self::default();
        for node in &snap.nodes {
            let key = ObjectKey { kind: node.kind.unwrap_or(ObjectType::Metalake), full_name: node.full_name.clone() };
            for g in &node.grants {
                let role: Box<str> = snap.role_name(g.role).into();
                facts.grants.entry(role).or_default().push((key.clone(), g.privilege, g.condition));
            }
            if let Some(owner) = &node.owner {
                let map = match owner.kind {
                    OwnerType::User => &mut facts.users_own,
                    OwnerType::Group => &mut facts.groups_own,
                };
                map.entry(owner.name.clone()).or_default().push(key.clone());
            }
        }
        for grants in facts.grants.values_mut() {
            grants.sort();
        }
        facts.subjects = subjects(snap);
        facts
    }

    /// What `subject` owns in this policy, itself or through one of `holder`'s groups, sorted.
    pub fn owned(&self, subject: &SubjectRef, holder: &Holder) -> Vec<ObjectKey> {
        let mut out: Vec<ObjectKey> = match subject {
            SubjectRef::User(u) => self.users_own.get(u).cloned().unwrap_or_default(),
            SubjectRef::Group(_) => Vec::new(),
        };
        for g in holder.groups() {
            out.extend(self.groups_own.get(g).into_iter().flatten().cloned());
        }
        out.sort();
        out.dedup();
        out
    }
}

/// The names of `holder`'s held roles in `snap`, sorted.
pub fn role_names(snap: &Snapshot, holder: &Holder) -> Vec<Box<str>> {
    let mut names: Vec<Box<str>> = holder.held().map(|r| snap.role_name(r).into()).collect();
    names.sort();
    names
}

/// Every subject `snap` names: its users and groups, and the users and groups its owners name
/// (which may come from the identity), users first, each by name.
pub fn subjects(snap: &Snapshot) -> BTreeSet<SubjectRef> {
    let mut out: BTreeSet<SubjectRef> = BTreeSet::new();
    out.extend(snap.users.iter().map(|u| SubjectRef::User(u.name.clone())));
    out.extend(snap.groups.iter().map(|g| SubjectRef::Group(g.name.clone())));
    for owner in snap.nodes.iter().filter_map(|n| n.owner.as_ref()) {
        out.insert(match owner.kind {
            OwnerType::User => SubjectRef::User(owner.name.clone()),
            OwnerType::Group => SubjectRef::Group(owner.name.clone()),
        });
    }
    out
}
