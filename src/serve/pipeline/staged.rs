//! The locations the upstream assigned to stage-creates (docs/design.md §4 updateTable): a caller
//! who may create a table but not place its data may still commit its staged create with the
//! location the upstream chose for it (Spark's CTAS copies it from the stage-create response),
//! and with no other. Remembered per caller and table from each stage-create response icegate
//! relays, for a configured time: here for this replica, and in the ownership store's database
//! (when there is one) for every replica.

use crate::core::clock::Clock;
use crate::core::iceberg::TableIdent;
use crate::serve::cache::TtlCache;
use serde::Deserialize;
use std::time::Duration;

/// Bounds the memory.
const MAX_REMEMBERED: usize = 10_000;

/// (user, catalog, table) — the table as decided on: folded where its catalog folds names.
type Key = (String, String, TableIdent);

#[derive(Debug)]
pub struct StagedLocations {
    remembered: TtlCache<Key, String>,
}

impl StagedLocations {
    pub fn new(ttl: Duration, clock: Clock) -> Self {
        Self { remembered: TtlCache::new(ttl, MAX_REMEMBERED, clock) }
    }

    /// How long a location is remembered.
    pub fn ttl(&self) -> Duration {
        self.remembered.ttl()
    }

    /// Records the location a stage-create response for `user` carried.
    pub fn remember(&self, user: &str, catalog: &str, table: &TableIdent, location: String) {
        self.remembered.insert(&(user.to_owned(), catalog.to_owned(), table.clone()), location);
    }

    /// The location the upstream assigned to `user`'s stage-create of `table`, unless expired.
    pub fn recall(&self, user: &str, catalog: &str, table: &TableIdent) -> Option<String> {
        self.remembered.get(&(user.to_owned(), catalog.to_owned(), table.clone()))
    }
}

/// The Gravitino full name of `table` in `catalog`, as the ownership store keys objects.
pub fn full_name(catalog: &str, table: &TableIdent) -> String {
    table.namespace.full_name(catalog, Some(&table.name))
}

/// `metadata.location` of a `LoadTableResult` (a stage-create's response); `None` when the
/// body has none or is not one.
pub fn assigned_location(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Result {
        metadata: Metadata,
    }
    #[derive(Deserialize)]
    struct Metadata {
        location: Option<String>,
    }
    serde_json::from_slice::<Result>(body).ok()?.metadata.location
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::iceberg::Namespace;

    fn table(name: &str) -> TableIdent {
        TableIdent::new(Namespace::new(vec!["sales".into()], &[]).unwrap(), name.into()).unwrap()
    }

    #[test]
    fn a_location_is_recalled_for_the_same_caller_catalog_and_table_only() {
        let clock = Clock::manual();
        let staged = StagedLocations::new(Duration::from_secs(60), clock.clone());
        staged.remember("carl", "prod", &table("t"), "s3://lake/sales/t".into());
        assert_eq!(staged.recall("carl", "prod", &table("t")).as_deref(), Some("s3://lake/sales/t"));
        assert_eq!(staged.recall("mallory", "prod", &table("t")), None);
        assert_eq!(staged.recall("carl", "dev", &table("t")), None);
        assert_eq!(staged.recall("carl", "prod", &table("u")), None);
        clock.advance(Duration::from_secs(60));
        assert_eq!(staged.recall("carl", "prod", &table("t")), None, "expired after its ttl");
    }

    #[test]
    fn the_memory_stays_bounded() {
        let staged = StagedLocations::new(Duration::from_secs(60), Clock::manual());
        for i in 0..MAX_REMEMBERED + 10 {
            staged.remember("u", "c", &table(&format!("t{i}")), String::new());
        }
        assert!(staged.remembered.len() <= MAX_REMEMBERED);
        assert!(staged.recall("u", "c", &table(&format!("t{}", MAX_REMEMBERED + 9))).is_some(), "the newest stays");
    }

    #[test]
    fn the_assigned_location_is_the_metadata_location() {
        let body = br#"{"metadata-location": null, "metadata": {"format-version": 2, "location": "s3://lake/sales/t"}, "config": {}}"#;
        assert_eq!(assigned_location(body).as_deref(), Some("s3://lake/sales/t"));
        assert_eq!(assigned_location(br#"{"metadata": {}}"#), None);
        assert_eq!(assigned_location(b"[]"), None);
    }
}
