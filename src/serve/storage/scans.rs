//! The scans of tables' answers that credential rewriting keeps, by catalog and table, so that
//! the next answer with the same metadata is not scanned again ([`Prefix`] says why that is
//! sound: the bytes decide, and an answer that differs is scanned in full). Bounded in bytes,
//! its keys counted; a full memory forgets entries, which only costs a scan.

use crate::core::credentials::envelope::Prefix;
use crate::serve::cache::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A metadata this big is scanned every time rather than kept: one such table would hold
/// much of the budget, and its answer's own size dwarfs the scan's share.
pub const KEEP_UP_TO: usize = 256 * 1024;

/// What all kept prefixes and their keys may hold together.
const BUDGET: usize = 8 * 1024 * 1024;

/// What an entry costs beside its prefix and key: the maps' slots and the `Arc`.
const ENTRY_OVERHEAD: usize = 96;

#[derive(Debug, Default)]
pub struct Scans {
    kept: Mutex<Kept>,
}

/// Prefixes by catalog, then by the table's path after the base path: a table's answers are
/// compared only with its own catalog's, so that no upstream's answer is checked against
/// another's (the bytes would decide anyway).
#[derive(Debug, Default)]
struct Kept {
    by_catalog: HashMap<String, HashMap<String, Arc<Prefix>>>,
    bytes: usize,
}

fn cost(table: &str, prefix: &Prefix) -> usize {
    table.len() + prefix.cost() + ENTRY_OVERHEAD
}

impl Kept {
    fn remove(&mut self, catalog: &str, table: &str) {
        let Some(tables) = self.by_catalog.get_mut(catalog) else { return };
        if let Some(old) = tables.remove(table) {
            self.bytes = self.bytes.saturating_sub(cost(table, &old));
        }
        if tables.is_empty() {
            self.by_catalog.remove(catalog);
            self.bytes = self.bytes.saturating_sub(catalog.len() + ENTRY_OVERHEAD);
        }
    }

    /// Some entry, to forget: which matters little (a forgotten one costs one scan).
    fn victim(&self) -> Option<(String, String)> {
        let (catalog, tables) = self.by_catalog.iter().next()?;
        Some((catalog.clone(), tables.keys().next()?.clone()))
    }
}

impl Scans {
    /// The prefix kept for `table` (its path after the base path) of `catalog`, if any.
    pub fn earlier(&self, catalog: &str, table: &str) -> Option<Arc<Prefix>> {
        lock(&self.kept).by_catalog.get(catalog)?.get(table).cloned()
    }

    /// Keeps `prefix` for `table` of `catalog`, in place of the one kept before.
    pub fn keep(&self, catalog: &str, table: &str, prefix: Prefix) {
        let entry = cost(table, &prefix);
        // At most: the entry and, if its catalog is new, the catalog's.
        let most = entry + catalog.len() + ENTRY_OVERHEAD;
        if most > BUDGET {
            return;
        }
        let mut kept = lock(&self.kept);
        kept.remove(catalog, table);
        while kept.bytes + most > BUDGET {
            let Some((c, t)) = kept.victim() else { break };
            kept.remove(&c, &t);
        }
        if !kept.by_catalog.contains_key(catalog) {
            kept.bytes += catalog.len() + ENTRY_OVERHEAD;
        }
        kept.bytes += entry;
        kept.by_catalog.entry(catalog.to_owned()).or_default().insert(table.to_owned(), Arc::new(prefix));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::credentials::envelope::Envelope;

    fn prefix(metadata_bytes: usize) -> Prefix {
        let body = format!(r#"{{"metadata":{{"pad":"{}"}}}}"#, "x".repeat(metadata_bytes));
        Envelope::scan(body.as_bytes()).unwrap().prefix(body.as_bytes(), usize::MAX).unwrap()
    }

    fn counted(kept: &Kept) -> usize {
        kept.by_catalog
            .iter()
            .map(|(c, tables)| c.len() + ENTRY_OVERHEAD + tables.iter().map(|(t, p)| cost(t, p)).sum::<usize>())
            .sum()
    }

    #[test]
    fn the_kept_bytes_stay_within_the_budget_and_a_table_keeps_its_newest_prefix() {
        let scans = Scans::default();
        for i in 0..100 {
            scans.keep(&format!("c{}", i % 3), &format!("t{i}"), prefix(200 * 1024));
        }
        let kept = scans.kept.lock().unwrap();
        assert!(kept.bytes <= BUDGET, "{}", kept.bytes);
        assert_eq!(kept.bytes, counted(&kept));
        drop(kept);
        scans.keep("c0", "t99", prefix(10));
        assert_eq!(scans.earlier("c0", "t99").unwrap().cost(), prefix(10).cost());
        assert!(scans.earlier("never", "t99").is_none());
    }

    #[test]
    fn a_table_s_prefix_is_never_given_for_another_catalog_or_table() {
        let scans = Scans::default();
        scans.keep("one", "/v1/namespaces/db/tables/t", prefix(10));
        assert!(scans.earlier("one", "/v1/namespaces/db/tables/t").is_some());
        assert!(scans.earlier("two", "/v1/namespaces/db/tables/t").is_none());
        assert!(scans.earlier("one", "/v1/namespaces/db/tables/u").is_none());
    }

    #[test]
    fn many_small_entries_with_long_names_are_bounded_by_their_names_too() {
        let scans = Scans::default();
        let long = "n".repeat(64 * 1024);
        for i in 0..400 {
            scans.keep("c", &format!("{long}{i}"), prefix(0));
        }
        let kept = scans.kept.lock().unwrap();
        assert!(kept.bytes <= BUDGET, "{}", kept.bytes);
        assert_eq!(kept.bytes, counted(&kept));
        assert!(kept.by_catalog["c"].len() < 130, "{}", kept.by_catalog["c"].len());
    }
}
