//! `icegate diff`: every change in effective access between two policies (docs/design.md §10), as
//! the evaluator decides it in each, for every subject, right and object named in either.
//!
//! Asking every subject about every object would cost subjects × objects; instead a subject is
//! asked only when something it depends on changed (the roles it holds, a grant of one of
//! them, what it owns), and then only about the objects those grants and ownerships reach.
//! Subjects that hold the same roles in both policies share one evaluation of their
//! privileges. The property tests check this against asking everyone about everything.

use super::access::{Answer, Holder, ObjectKey, Right, State, SubjectRef, answer, state};
use super::reach::{Asking, Facts, Universe, role_names};
use super::restricted::{Restricted, reaches_data, restricted};
use crate::core::policy::Snapshot;
use crate::core::policy::eval::Target;
use crate::core::policy::model::Privilege;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::ser::{Serialize, SerializeStruct, Serializer};

/// One (subject, right, object) whose answer differs.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    pub subject: SubjectRef,
    pub object: ObjectKey,
    pub right: Right,
    pub before: State,
    pub after: State,
    /// Whether reading the object's data is read-restricted for the subject before and after
    /// (docs/design.md §8), when that differs.
    pub restricted: Option<(bool, bool)>,
}

/// `{"subject", "privilege", "object", "before", "after"}` (docs/design.md §10), and
/// `"restricted": {"before", "after"}` when read restrictions changed for it (an added key:
/// a change of restrictions alone is a line whose `before` and `after` are both `allow`).
impl Serialize for Change {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut c = s.serialize_struct("Change", 6)?;
        c.serialize_field("subject", &self.subject.label())?;
        c.serialize_field("privilege", self.right.as_str())?;
        c.serialize_field("object", &self.object)?;
        c.serialize_field("before", self.before.as_str())?;
        c.serialize_field("after", self.after.as_str())?;
        if let Some((before, after)) = self.restricted {
            c.serialize_field("restricted", &serde_json::json!({ "before": before, "after": after }))?;
        }
        c.end()
    }
}

impl Change {
    pub fn gains(&self) -> bool {
        self.after == State::Allow
    }

    pub fn loses(&self) -> bool {
        self.before == State::Allow
    }
}

/// The chains of a universe's objects in one policy, resolved when first asked for.
pub(crate) struct Targets<'s> {
    snap: &'s Snapshot,
    universe: &'s Universe,
    cache: Vec<Option<Option<Target>>>,
}

impl<'s> Targets<'s> {
    pub(crate) fn new(snap: &'s Snapshot, universe: &'s Universe) -> Self {
        Self { snap, universe, cache: std::iter::repeat_with(|| None).take(universe.objects.len()).collect() }
    }

    fn target(&mut self, object: u32) -> Option<&Target> {
        let (snap, universe) = (self.snap, self.universe);
        self.cache.get_mut(object as usize)?.get_or_insert_with(|| universe.object(object).target(snap)).as_ref()
    }

    pub(crate) fn answer(&mut self, holder: &Holder, right: Right, object: u32) -> Answer {
        let snap = self.snap;
        answer(snap, holder, right, self.target(object))
    }

    pub(crate) fn state(&mut self, holder: &Holder, right: Right, object: u32) -> State {
        let snap = self.snap;
        state(snap, holder, right, self.target(object))
    }

    /// The read restrictions on the object's data for `holder`.
    pub(crate) fn restricted(&mut self, holder: &Holder, object: u32) -> Option<Restricted> {
        let snap = self.snap;
        restricted(snap, holder, self.target(object))
    }
}

/// A right on an object (by index) and its answers before and after.
type Differing = (Right, u32, State, State);
type RoleNames = Vec<Box<str>>;

/// Every change between `old` and `new`, sorted by subject, object and right.
pub fn diff(old: &Snapshot, new: &Snapshot) -> Vec<Change> {
    let universe = Universe::new(&[old, new], Asking::ActedOn);
    let (facts_old, facts_new) = (Facts::new(old), Facts::new(new));
    let mut changed_roles: FxHashSet<&str> = FxHashSet::default();
    for role in facts_old.grants.keys().chain(facts_new.grants.keys()) {
        if facts_old.grants.get(role) != facts_new.grants.get(role) {
            changed_roles.insert(role);
        }
    }
    let (mut before, mut after) = (Targets::new(old, &universe), Targets::new(new, &universe));
    // Held role names before and after → what differs for anyone holding exactly those.
    let mut signatures: FxHashMap<(RoleNames, RoleNames), Vec<Differing>> = FxHashMap::default();
    let mut changes = Vec::new();
    let subjects: Vec<&SubjectRef> = facts_old.subjects.union(&facts_new.subjects).collect();
    for subject in subjects {
        let (h_old, h_new) = (Holder::new(old, subject), Holder::new(new, subject));
        let (r_old, r_new) = (role_names(old, &h_old), role_names(new, &h_new));
        let mut found: Vec<Differing> = Vec::new();
        if r_old != r_new || r_old.iter().any(|r| changed_roles.contains(&**r)) {
            let differing = signatures.entry((r_old, r_new)).or_insert_with_key(|(r_old, r_new)| {
                let mut asked = Vec::new();
                universe.reached_by_roles(&facts_old, r_old, &mut asked);
                universe.reached_by_roles(&facts_new, r_new, &mut asked);
                compare(asked, &h_old, &h_new, &mut before, &mut after)
            });
            found.extend_from_slice(differing);
        }
        let (o_old, o_new) = (facts_old.owned(subject, &h_old), facts_new.owned(subject, &h_new));
        if o_old != o_new {
            let mut asked = Vec::new();
            universe.reached_by_owned(&o_old, &mut asked);
            universe.reached_by_owned(&o_new, &mut asked);
            found.extend(compare(asked, &h_old, &h_new, &mut before, &mut after));
        }
        // restrictions: every data right on an object restrictions are on, in either policy
        let mut asked = Vec::new();
        universe.reached_by_roles(&facts_old, &role_names(old, &h_old), &mut asked);
        universe.reached_by_roles(&facts_new, &role_names(new, &h_new), &mut asked);
        universe.reached_by_owned(&facts_old.owned(subject, &h_old), &mut asked);
        universe.reached_by_owned(&facts_new.owned(subject, &h_new), &mut asked);
        // a restriction on a schema or catalog changes reads of every table below it: the
        // object it is on is asked too
        for snap in [old, new] {
            for r in &snap.restrictions().list {
                let key = ObjectKey { kind: r.kind, full_name: r.full_name.clone() };
                if let Ok(id) = universe.objects.binary_search_by(|o| o.key.cmp(&key)) {
                    asked.push((Right::Privilege(Privilege::SelectTable), id as u32));
                }
            }
        }
        asked.retain(|(right, _)| reaches_data(*right));
        asked.sort_unstable();
        asked.dedup();
        let mut restricted_changes: Vec<(Right, u32, (bool, bool))> = Vec::new();
        if !old.restrictions().is_empty() || !new.restrictions().is_empty() {
            for (right, object) in asked {
                let (b, a) = (before.state(&h_old, right, object), after.state(&h_new, right, object));
                if b != State::Allow && a != State::Allow {
                    continue;
                }
                let r = (before.restricted(&h_old, object).is_some(), after.restricted(&h_new, object).is_some());
                if r.0 != r.1 {
                    if a == b {
                        found.push((right, object, b, a));
                    }
                    restricted_changes.push((right, object, r));
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        changes.extend(found.into_iter().map(|(right, object, b, a)| Change {
            subject: subject.clone(),
            object: universe.object(object).key.clone(),
            right,
            before: b,
            after: a,
            restricted: restricted_changes.iter().find(|(r, o, _)| *r == right && *o == object).map(|(_, _, r)| *r),
        }));
    }
    changes.sort();
    changes
}

/// The asked (right, object) pairs whose answers differ between the two policies.
fn compare(
    mut asked: Vec<(Right, u32)>,
    h_old: &Holder,
    h_new: &Holder,
    before: &mut Targets<'_>,
    after: &mut Targets<'_>,
) -> Vec<Differing> {
    asked.sort_unstable();
    asked.dedup();
    asked
        .into_iter()
        .filter_map(|(right, object)| {
            let b = before.state(h_old, right, object);
            let a = after.state(h_new, right, object);
            (a != b).then_some((right, object, b, a))
        })
        .collect()
}

/// The one-line summary `diff` prints on stderr.
pub fn summary(changes: &[Change]) -> String {
    if changes.is_empty() {
        return "no change in effective access".to_owned();
    }
    let gained = changes.iter().filter(|c| c.gains()).count();
    let lost = changes.iter().filter(|c| c.loses()).count();
    let mut subjects: Vec<&SubjectRef> = changes.iter().map(|c| &c.subject).collect();
    subjects.dedup();
    format!(
        "{} changes in effective access for {} subjects: {gained} gained, {lost} lost, {} between deny and none",
        changes.len(),
        subjects.len(),
        changes.len() - gained - lost
    )
}
