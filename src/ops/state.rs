//! The decision state the serving path reads and the operations publish (a reload, a change of
//! the ownership store), and the health they report; one immutable value behind one `ArcSwap`.

use crate::core::policy::Snapshot;
use std::sync::Arc;

/// Everything a decision reads, as one immutable value. A reload (or a change of the
/// ownership store) builds a new one and publishes it with one `store`.
#[derive(Clone, Debug)]
pub struct DecisionState {
    pub snapshot: Arc<Snapshot>,
    /// 1 for the first snapshot, +1 per successful reload.
    pub generation: u64,
    pub loaded_at: std::time::SystemTime,
    /// The shadow candidate (DESIGN.md §9): decided beside `snapshot`, never enforced.
    pub shadow: Option<Arc<Snapshot>>,
    /// The ownership store's current index (DESIGN.md §4), merged with the snapshot's owners.
    pub owners: Arc<crate::core::ownership::OwnerIndex>,
    /// The version of `owners` (an older index is never published over a newer one).
    pub owners_version: u64,
}

/// What `/readyz` reports besides the decision state.
#[derive(Debug, Default)]
pub struct Health {
    /// The last reload failed; an older policy serves.
    pub stale: std::sync::atomic::AtomicBool,
    pub upstream_reachable: std::sync::atomic::AtomicBool,
    /// The query of the last getConfig a client sent that the upstream answered 2xx (e.g.
    /// `warehouse=lake`), which the readiness probe sends too unless one is configured.
    pub config_query: std::sync::Mutex<Option<String>>,
}

impl Health {
    /// Remembers a getConfig's query that the upstream accepted.
    pub fn accepted_config_query(&self, query: &str) {
        if let Ok(mut q) = self.config_query.lock()
            && q.as_deref() != Some(query)
        {
            *q = Some(query.to_owned());
        }
    }
}
