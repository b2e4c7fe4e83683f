//! The signer an upstream advertises in getConfig only (docs/design.md §8): Lakekeeper before 0.9
//! names it there (`s3.signer.uri` in the overrides, the default endpoint), and clients merge
//! getConfig's properties into every table's, so a table whose config names no signer is
//! signed by the catalog's. icegate remembers it per prefix from the getConfig answers it relays
//! (for `credentials.location_cache_seconds`); asking getConfig otherwise, with the query of
//! the last getConfig the upstream accepted, is [`crate::serve::upstream_calls::advertised_signer`].

use crate::core::credentials::storage::{Signer, advertised_in_config};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Bounds the memory; past it, everything is forgotten (and asked again).
const MAX_PREFIXES: usize = 1_000;

/// The signers getConfig advertised, per prefix (`""` for a catalog without one): `None` when
/// it advertised none.
#[derive(Debug, Default)]
pub struct Advertised {
    by_prefix: Mutex<HashMap<String, (Instant, Option<Signer>)>>,
}

impl Advertised {
    /// Remembers what a getConfig answer the upstream gave advertises.
    pub fn remember_answer(&self, body: &[u8]) {
        if let Some((prefix, signer)) = advertised_in_config(body) {
            self.remember(prefix.unwrap_or_default(), signer);
        }
    }

    pub fn remember(&self, prefix: String, signer: Option<Signer>) {
        let Ok(mut known) = self.by_prefix.lock() else { return };
        if known.len() >= MAX_PREFIXES && !known.contains_key(&prefix) {
            known.clear();
        }
        known.insert(prefix, (Instant::now(), signer));
    }

    /// What is known of `prefix`, if learned within `ttl`.
    pub fn recall(&self, prefix: &str, ttl: Duration) -> Option<Option<Signer>> {
        let known = self.by_prefix.lock().ok()?;
        known.get(prefix).filter(|(at, _)| at.elapsed() < ttl).map(|(_, signer)| signer.clone())
    }
}
