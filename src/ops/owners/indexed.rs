//! The ownership index as this process sees the store, and the versions that keep an older
//! read from replacing a newer one.

use super::change::OwnersError;
use crate::core::ownership::OwnerIndex;
use std::sync::Arc;

/// The index as this process sees the store.
#[derive(Debug, Default)]
pub(super) struct Indexed {
    pub(super) index: Arc<OwnerIndex>,
    /// Bumped at every change of `index`, so an older index is never published over a newer.
    pub(super) version: u64,
    /// The store's change counter (SQLite's `data_version`, PostgreSQL's generation) that the
    /// last full read saw.
    pub(super) read_at: Option<i64>,
    /// The highest generation of a change applied locally (PostgreSQL): a full read older
    /// than it would lose that change, so it is not applied.
    pub(super) applied: i64,
}

impl Indexed {
    /// A full read of the store, made at its change counter `at`.
    pub(super) fn install(&mut self, index: OwnerIndex, at: i64) {
        self.index = Arc::new(index);
        self.version += 1;
        self.read_at = Some(at);
    }

    /// Applies a change this process made; `generation` is PostgreSQL's after it (a full read
    /// at or after that generation already holds the change, and a rename applied twice would
    /// lose its record, so it is not applied again).
    pub(super) fn update(&mut self, generation: Option<i64>, f: impl FnOnce(&mut OwnerIndex)) {
        if let (Some(g), Some(read)) = (generation, self.read_at)
            && read >= g
        {
            return;
        }
        f(Arc::make_mut(&mut self.index));
        self.version += 1;
        if let Some(g) = generation {
            self.applied = self.applied.max(g);
        }
    }
}

pub(super) fn poisoned<T>(_: T) -> OwnersError {
    OwnersError::Task("the ownership index lock is poisoned".into())
}
