//! The decision state the serving path reads and the operations publish (a reload, a change of
//! the ownership store), and the health they report; one immutable value behind one `ArcSwap`,
//! which [`Published`] alone writes.

use crate::core::ownership::OwnerIndex;
use crate::core::policy::Snapshot;
use arc_swap::{ArcSwap, Guard};
use std::sync::Arc;

/// Everything a decision reads, as one immutable value. A reload (or a change of the
/// ownership store) builds a new one and publishes it with one `store`.
#[derive(Clone, Debug)]
pub struct DecisionState {
    pub snapshot: Arc<Snapshot>,
    /// 1 for the first snapshot, +1 per successful reload.
    pub generation: u64,
    pub loaded_at: std::time::SystemTime,
    /// The shadow candidate (docs/design.md §9): decided beside `snapshot`, never enforced.
    pub shadow: Option<Arc<Snapshot>>,
    /// The ownership store's current index (docs/design.md §4), merged with the snapshot's owners.
    pub owners: Arc<crate::core::ownership::OwnerIndex>,
    /// The version of `owners` (an older index is never published over a newer one).
    pub owners_version: u64,
}

/// The published decision state, and its one publisher: a reload publishes a policy, the
/// ownership store its index, and each keeps what the other published last (one may publish
/// between another's read and its write).
#[derive(Debug)]
pub struct Published(ArcSwap<DecisionState>);

impl Published {
    pub fn new(state: DecisionState) -> Self {
        Self(ArcSwap::from_pointee(state))
    }

    /// The current state, for a short look.
    pub fn load(&self) -> Guard<Arc<DecisionState>> {
        self.0.load()
    }

    /// The current state, held for as long as a request or a reload needs it.
    pub fn load_full(&self) -> Arc<DecisionState> {
        self.0.load_full()
    }

    /// Publishes `next`'s policy (snapshot, generation, shadow candidate), keeping the latest
    /// ownership index: it may have changed since `next` was built.
    pub fn policy(&self, next: &DecisionState) {
        self.0.rcu(|latest| DecisionState {
            owners: Arc::clone(&latest.owners),
            owners_version: latest.owners_version,
            ..next.clone()
        });
    }

    /// Publishes the ownership store's index `version`, unless a newer one is there.
    pub fn owners(&self, index: &Arc<OwnerIndex>, version: u64) {
        self.0.rcu(|current| {
            if current.owners_version >= version {
                Arc::clone(current)
            } else {
                Arc::new(DecisionState { owners: Arc::clone(index), owners_version: version, ..(**current).clone() })
            }
        });
    }
}

/// What `/readyz` reports besides the decision state and the upstreams' own health.
#[derive(Debug, Default)]
pub struct Health {
    /// The last reload failed; an older policy serves.
    pub stale: std::sync::atomic::AtomicBool,
    /// Unix seconds of the last good read of the Gravitino policy source; 0: none yet.
    pub source_read_at: std::sync::atomic::AtomicU64,
    /// Reads of the policy source that failed or were refused since the last good one.
    pub source_failures: std::sync::atomic::AtomicU64,
    /// Why the last read of the policy source failed or was refused, if it did.
    pub source_error: std::sync::Mutex<Option<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(generation: u64, owners_version: u64) -> DecisionState {
        let text = "version: 1\nmetalake: lake\n";
        DecisionState {
            snapshot: Arc::new(crate::core::policy::load_str("p.yaml", text).unwrap().snapshot),
            generation,
            loaded_at: std::time::SystemTime::UNIX_EPOCH,
            shadow: None,
            owners: Arc::new(OwnerIndex::default()),
            owners_version,
        }
    }

    #[test]
    fn a_policy_keeps_the_latest_owners_and_owners_never_go_back() {
        let published = Published::new(state(1, 0));
        let index = Arc::new(OwnerIndex::default());
        published.owners(&index, 3);
        // a reload built from a state read before the ownership store published
        published.policy(&state(2, 0));
        let now = published.load_full();
        assert_eq!((now.generation, now.owners_version), (2, 3));
        assert!(Arc::ptr_eq(&now.owners, &index));
        published.owners(&Arc::new(OwnerIndex::default()), 2);
        assert!(Arc::ptr_eq(&published.load().owners, &index), "an older index is not published");
    }
}
