//! The scans of tables' answers that credential rewriting keeps, by table, so that the next
//! answer with the same metadata is not scanned again ([`Prefix`] says why that is sound: the
//! bytes decide). Bounded in bytes; a full memory forgets entries, which only costs a scan.

use crate::core::credentials::envelope::Prefix;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A metadata this big is scanned every time rather than kept: one such table would hold
/// much of the budget, and its answer's own size dwarfs the scan's share.
pub const KEEP_UP_TO: usize = 256 * 1024;

/// What all kept prefixes may hold together.
const BUDGET: usize = 8 * 1024 * 1024;

#[derive(Debug, Default)]
pub struct Scans {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    by_table: HashMap<String, Arc<Prefix>>,
    bytes: usize,
}

impl Scans {
    /// The prefix kept for `table` (its path after the base path), if any.
    pub fn earlier(&self, table: &str) -> Option<Arc<Prefix>> {
        self.kept.lock().ok()?.by_table.get(table).cloned()
    }

    /// Keeps `prefix` for `table`, in place of the one kept before.
    pub fn keep(&self, table: &str, prefix: Prefix) {
        let Ok(mut kept) = self.kept.lock() else { return };
        let size = prefix.len();
        if let Some(old) = kept.by_table.remove(table) {
            kept.bytes -= old.len();
        }
        // Which entries go matters little (a forgotten one costs one scan): the map's order.
        while kept.bytes + size > BUDGET {
            let Some(victim) = kept.by_table.keys().next().cloned() else { break };
            if let Some(old) = kept.by_table.remove(&victim) {
                kept.bytes -= old.len();
            }
        }
        kept.bytes += size;
        kept.by_table.insert(table.to_owned(), Arc::new(prefix));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::credentials::envelope::Envelope;

    fn prefix(metadata_bytes: usize) -> Prefix {
        let body = format!(r#"{{"metadata":{{"pad":"{}"}}}}"#, "x".repeat(metadata_bytes));
        Prefix::of(body.as_bytes(), &Envelope::scan(body.as_bytes()).unwrap(), usize::MAX).unwrap()
    }

    #[test]
    fn the_kept_bytes_stay_within_the_budget_and_a_table_keeps_its_newest_prefix() {
        let scans = Scans::default();
        for i in 0..100 {
            scans.keep(&format!("t{i}"), prefix(200 * 1024));
        }
        let kept = scans.kept.lock().unwrap();
        assert!(kept.bytes <= BUDGET, "{}", kept.bytes);
        assert_eq!(kept.bytes, kept.by_table.values().map(|p| p.len()).sum::<usize>());
        drop(kept);
        scans.keep("t99", prefix(10));
        assert_eq!(scans.earlier("t99").unwrap().len(), prefix(10).len());
        assert!(scans.earlier("never").is_none());
    }
}
