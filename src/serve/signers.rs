//! The signer an upstream advertises in getConfig only (docs/design.md §8): Lakekeeper before 0.9
//! names it there (`s3.signer.uri` in the overrides, the default endpoint), and clients merge
//! getConfig's properties into every table's, so a table whose config names no signer is
//! signed by the catalog's. What a getConfig answer advertises is remembered per prefix (the
//! signer for `credentials.location_cache_seconds`), and so is the query that answered each
//! prefix: a prefix is asked for again with its own query, never with another catalog's. A
//! replica that relayed no getConfig asks with the `warehouse` values its upstream's
//! `warehouses` configure, and learns from each answer which prefix that warehouse is
//! ([`crate::serve::signer_lookup`]).

use crate::core::credentials::storage::{Signer, advertised_in_config};
use crate::core::iceberg::path::encode;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Bounds the memory; past it, everything is forgotten (and asked again).
const MAX_PREFIXES: usize = 1_000;

/// What getConfig answers told, per prefix (`""` for a catalog without one).
#[derive(Debug, Default)]
pub struct Advertised {
    known: Mutex<Known>,
}

#[derive(Debug, Default)]
struct Known {
    /// The signer each prefix's getConfig advertised (`None`: none), and when.
    signers: HashMap<String, (Instant, Option<Signer>)>,
    /// The query whose getConfig answered for each prefix.
    queries: HashMap<String, String>,
    /// The prefix each query's getConfig answered for.
    prefixes: HashMap<String, String>,
}

impl Advertised {
    /// Remembers what a getConfig answer to `query` advertises, and for which prefix.
    pub fn remember_answer(&self, body: &[u8], query: &str) -> Option<(String, Option<Signer>)> {
        let (prefix, signer) = advertised_in_config(body)?;
        let prefix = prefix.unwrap_or_default();
        let Ok(mut known) = self.known.lock() else { return Some((prefix, signer)) };
        if known.signers.len() >= MAX_PREFIXES && !known.signers.contains_key(&prefix) {
            *known = Known::default();
        }
        known.signers.insert(prefix.clone(), (Instant::now(), signer.clone()));
        known.queries.insert(prefix.clone(), query.to_owned());
        known.prefixes.insert(query.to_owned(), prefix.clone());
        Some((prefix, signer))
    }

    pub(crate) fn remember(&self, prefix: &str, signer: Option<Signer>) {
        if let Ok(mut known) = self.known.lock() {
            known.signers.insert(prefix.to_owned(), (Instant::now(), signer));
        }
    }

    /// What is known of `prefix`'s signer, if learned within `ttl`.
    pub fn recall(&self, prefix: &str, ttl: Duration) -> Option<Option<Signer>> {
        let known = self.known.lock().ok()?;
        known.signers.get(prefix).filter(|(at, _)| at.elapsed() < ttl).map(|(_, signer)| signer.clone())
    }

    /// The getConfig queries to ask for `prefix`, in order: the one that answered for it
    /// before, then each configured warehouse not known to name another catalog, then none.
    pub(crate) fn queries_for(&self, prefix: &str, warehouses: &[String]) -> Vec<String> {
        let Ok(known) = self.known.lock() else { return Vec::new() };
        let mut out: Vec<String> = known.queries.get(prefix).cloned().into_iter().collect();
        let candidates = warehouses.iter().map(|w| format!("warehouse={}", encode(w))).chain([String::new()]);
        for query in candidates {
            // an answer without a prefix is the catalogs' a client reaches with its own
            let elsewhere = known.prefixes.get(&query).is_some_and(|p| p != prefix && !p.is_empty());
            if !elsewhere && !out.contains(&query) {
                out.push(query);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAKEKEEPER: &[u8] =
        br#"{"defaults": {}, "overrides": {"prefix": "wh-1", "s3.signer.uri": "http://lk/catalog/v1/wh-1"}}"#;

    #[test]
    fn a_prefix_is_asked_with_its_own_query_then_the_configured_warehouses() {
        let advertised = Advertised::default();
        let warehouses = vec!["demo".to_owned(), "other wh".to_owned()];
        assert_eq!(advertised.queries_for("wh-1", &warehouses), ["warehouse=demo", "warehouse=other%20wh", ""]);
        advertised.remember_answer(LAKEKEEPER, "warehouse=demo");
        assert_eq!(advertised.queries_for("wh-1", &warehouses), ["warehouse=demo", "warehouse=other%20wh", ""]);
        // a warehouse known to name another catalog is not asked for this one
        assert_eq!(advertised.queries_for("wh-2", &warehouses), ["warehouse=other%20wh", ""]);
        let signer = advertised.recall("wh-1", Duration::from_secs(60)).unwrap().unwrap();
        assert_eq!(signer.uri.as_deref(), Some("http://lk/catalog/v1/wh-1"));
        assert_eq!(advertised.recall("wh-1", Duration::ZERO), None, "past its time");
        assert_eq!(advertised.recall("wh-2", Duration::from_secs(60)), None);
    }
}
