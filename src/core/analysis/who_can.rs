//! `icegate who-can`: every user and group for whom a privilege term holds on an object with
//! all held roles active, or who owns it (docs/design.md §10), each with the grant or owned object
//! that gives it. Every subject the policy names is asked, through the evaluator.

use super::access::{Holder, Object, Right, State, SubjectRef, Via, answer};
use super::reach::subjects;
use super::restricted::{Restricted, reaches_data, restricted};
use crate::core::policy::Snapshot;
use serde::ser::{Serialize, SerializeMap, Serializer};

/// A subject that has the right, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holding {
    pub subject: SubjectRef,
    pub via: Option<Via>,
    /// Read restrictions on the object's data for this subject (docs/design.md §8); the key is
    /// added only when some apply.
    pub restricted: Option<Restricted>,
}

/// `{"user": U, "via": ...}` or `{"group": G, "via": ...}` (docs/design.md §10).
impl Serialize for Holding {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (key, name) = self.subject.json_key();
        let mut map = s.serialize_map(Some(2 + usize::from(self.restricted.is_some())))?;
        map.serialize_entry(key, name)?;
        map.serialize_entry("via", &self.via)?;
        if let Some(r) = &self.restricted {
            map.serialize_entry("restricted", r)?;
        }
        map.end()
    }
}

/// Users first, then groups, each by name.
pub fn who_can(snap: &Snapshot, right: Right, object: &Object) -> Vec<Holding> {
    let target = object.target(snap);
    subjects(snap)
        .into_iter()
        .filter_map(|subject| {
            let holder = Holder::new(snap, &subject);
            let a = answer(snap, &holder, right, target.as_ref());
            let restricted = reaches_data(right).then(|| restricted(snap, &holder, target.as_ref())).flatten();
            (a.state == State::Allow).then_some(Holding { subject, via: a.via, restricted })
        })
        .collect()
}
