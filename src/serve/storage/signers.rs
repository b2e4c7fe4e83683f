//! The signer an upstream advertises in getConfig only (docs/design.md §8): Lakekeeper before 0.9
//! names it there (`s3.signer.uri` in the overrides, the default endpoint), and clients merge
//! getConfig's properties into every table's, so a table whose config names no signer is
//! signed by the catalog's. What a getConfig answer advertises is remembered per prefix (the
//! signer for `credentials.location_cache_seconds`), and so is the query that answered each
//! prefix: a prefix is asked for again with its own query, never with another catalog's. A
//! replica that relayed no getConfig asks with the `warehouse` values its upstream's
//! `warehouses` configure, and learns from each answer which prefix that warehouse is
//! ([`crate::serve::pipeline::signer_lookup`]).

use crate::core::clock::Clock;
use crate::core::credentials::storage::{Signer, advertised_in_config};
use crate::core::iceberg::path::encode;
use crate::serve::cache::{TtlCache, lock};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// Bounds the memory; past it, the queries are forgotten (and asked again).
const MAX_PREFIXES: usize = 1_000;

/// What getConfig answers told, per prefix (`""` for a catalog without one).
#[derive(Debug)]
pub struct Advertised {
    /// The signer each prefix's getConfig advertised (`None`: none).
    signers: TtlCache<String, Option<Signer>>,
    queries: Mutex<Queries>,
}

#[derive(Debug, Default)]
struct Queries {
    /// The query whose getConfig answered for each prefix.
    by_prefix: HashMap<String, String>,
    /// The prefix each query's getConfig answered for.
    prefixes: HashMap<String, String>,
}

impl Advertised {
    /// A signer is known for `ttl` after a getConfig answer named it.
    pub fn new(ttl: Duration, clock: &Clock) -> Self {
        Self { signers: TtlCache::new(ttl, MAX_PREFIXES, clock.clone()), queries: Mutex::default() }
    }

    /// Remembers what a getConfig answer to `query` advertises, and for which prefix.
    pub fn remember_answer(&self, body: &[u8], query: &str) -> Option<(String, Option<Signer>)> {
        let (prefix, signer) = advertised_in_config(body)?;
        let prefix = prefix.unwrap_or_default();
        self.signers.insert(prefix.as_str(), signer.clone());
        let mut queries = lock(&self.queries);
        if queries.by_prefix.len() >= MAX_PREFIXES && !queries.by_prefix.contains_key(&prefix) {
            *queries = Queries::default();
        }
        queries.by_prefix.insert(prefix.clone(), query.to_owned());
        queries.prefixes.insert(query.to_owned(), prefix.clone());
        Some((prefix, signer))
    }

    pub(crate) fn remember(&self, prefix: &str, signer: Option<Signer>) {
        self.signers.insert(prefix, signer);
    }

    /// What is known of `prefix`'s signer, if learned within the time to live.
    pub fn recall(&self, prefix: &str) -> Option<Option<Signer>> {
        self.signers.get(prefix)
    }

    /// The getConfig queries to ask for `prefix`, in order: the one that answered for it
    /// before, then each configured warehouse not known to name another catalog, then none.
    pub(crate) fn queries_for(&self, prefix: &str, warehouses: &[String]) -> Vec<String> {
        let known = lock(&self.queries);
        let mut out: Vec<String> = known.by_prefix.get(prefix).cloned().into_iter().collect();
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
        let clock = Clock::manual();
        let advertised = Advertised::new(Duration::from_secs(60), &clock);
        let warehouses = vec!["demo".to_owned(), "other wh".to_owned()];
        assert_eq!(advertised.queries_for("wh-1", &warehouses), ["warehouse=demo", "warehouse=other%20wh", ""]);
        advertised.remember_answer(LAKEKEEPER, "warehouse=demo");
        assert_eq!(advertised.queries_for("wh-1", &warehouses), ["warehouse=demo", "warehouse=other%20wh", ""]);
        // a warehouse known to name another catalog is not asked for this one
        assert_eq!(advertised.queries_for("wh-2", &warehouses), ["warehouse=other%20wh", ""]);
        let signer = advertised.recall("wh-1").unwrap().unwrap();
        assert_eq!(signer.uri.as_deref(), Some("http://lk/catalog/v1/wh-1"));
        assert_eq!(advertised.recall("wh-2"), None);
        clock.advance(Duration::from_secs(60));
        assert_eq!(advertised.recall("wh-1"), None, "past its time");
    }
}
