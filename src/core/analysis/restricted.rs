//! Restricted access in the analyses (docs/design.md §8, §10): the read restrictions that apply
//! to a subject reading an object's data with every held role active, as a request's are decided
//! (a restriction on the object or an ancestor, lifted only by one of its `unless_roles`), and
//! whether the subject is trusted to enforce them. `who-can`, `diff` and the access report mark
//! access with it.

use super::access::{Holder, Right};
use crate::core::policy::Snapshot;
use crate::core::policy::eval::Target;
use crate::core::policy::model::Privilege;
use serde::Serialize;

/// The restrictions on reading an object's data, for one subject.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Restricted {
    /// The entries that apply, from the metalake down.
    pub applied: Vec<String>,
    /// Whether the subject is a `restriction_enforcers` member (else its reads are refused).
    pub trusted: bool,
}

impl Restricted {
    /// How the report's cells say it.
    pub fn text(&self) -> String {
        let who = if self.trusted { "enforced by this client" } else { "this client is refused reads" };
        format!("read restricted by {} ({who})", self.applied.join(", "))
    }
}

/// Whether `right` reaches a table's data (a read, a write that reads, or ownership).
pub fn reaches_data(right: Right) -> bool {
    matches!(right, Right::Owner | Right::Privilege(Privilege::SelectTable | Privilege::ModifyTable))
}

/// The restrictions that apply to `holder` reading the data of the object whose chain is
/// `target`; `None` when none does.
pub fn restricted(snap: &Snapshot, holder: &Holder, target: Option<&Target>) -> Option<Restricted> {
    let restrictions = snap.restrictions();
    if restrictions.is_empty() {
        return None;
    }
    let target = target?;
    let held = holder.held_set();
    let applied: Vec<String> = target
        .nodes()
        .flat_map(|node| restrictions.on(node))
        .filter(|r| !r.unless_roles.iter().any(|role| held.contains(*role)))
        .map(|r| r.label())
        .collect();
    if applied.is_empty() {
        return None;
    }
    Some(Restricted { applied, trusted: restrictions.trusts(holder.user(), holder.groups()) })
}
