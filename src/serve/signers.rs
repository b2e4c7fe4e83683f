//! The signer an upstream advertises in getConfig only (DESIGN.md §8): Lakekeeper before 0.9
//! names it there (`s3.signer.uri` in the overrides, the default endpoint), and clients merge
//! getConfig's properties into every table's, so a table whose config names no signer is
//! signed by the catalog's. icegate remembers it per prefix from the getConfig answers it relays
//! (for `credentials.location_cache_seconds`), and otherwise asks getConfig with the query of
//! the last getConfig the upstream accepted.

use crate::core::credentials::storage::{Signer, advertised_in_config};
use crate::serve::outbound::Outbound;
use crate::serve::rewrite::collect;
use crate::serve::state::Shared;
use crate::serve::upstream_calls::{send, strip_idempotency};
use http::HeaderMap;
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

    fn remember(&self, prefix: String, signer: Option<Signer>) {
        let Ok(mut known) = self.by_prefix.lock() else { return };
        if known.len() >= MAX_PREFIXES && !known.contains_key(&prefix) {
            known.clear();
        }
        known.insert(prefix, (Instant::now(), signer));
    }

    /// What is known of `prefix`, if learned within `ttl`.
    fn recall(&self, prefix: &str, ttl: Duration) -> Option<Option<Signer>> {
        let known = self.by_prefix.lock().ok()?;
        known.get(prefix).filter(|(at, _)| at.elapsed() < ttl).map(|(_, signer)| signer.clone())
    }
}

/// The signer the upstream's getConfig advertises for the catalog at `prefix`, asked with the
/// caller's credentials when not known; `None` when it advertises none or cannot say.
pub async fn advertised(shared: &Shared, caller: &HeaderMap, user: &str, prefix: Option<&str>) -> Option<Signer> {
    let ttl = Duration::from_secs(shared.config.credentials.location_cache_seconds);
    let prefix = prefix.unwrap_or_default();
    if let Some(known) = shared.signers.recall(prefix, ttl) {
        return known;
    }
    let query = shared.health.config_query.lock().ok().and_then(|q| q.clone()).unwrap_or_default();
    let signer = ask(shared, caller, user, &query, prefix).await;
    // an answer that says nothing is kept too, so that each sign request does not ask again; a
    // getConfig relayed later replaces it
    if !ttl.is_zero() {
        shared.signers.remember(prefix.to_owned(), signer.clone());
    }
    signer
}

/// getConfig asked with `query`: the signer it advertises for `prefix`, if it answers for it.
async fn ask(shared: &Shared, caller: &HeaderMap, user: &str, query: &str, prefix: &str) -> Option<Signer> {
    let get = http::Method::GET;
    let out = Outbound { method: &get, path: "/v1/config", query, user, active_roles: None, strip_delegation: true };
    let response = send(shared, &strip_idempotency(caller), &out, crate::serve::forward::empty()).await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body = collect(response.into_body()).await.ok()?;
    let (answered, signer) = advertised_in_config(&body)?;
    let answered = answered.unwrap_or_default();
    if answered == prefix {
        return signer;
    }
    // the last accepted query names another catalog, whose signer is worth keeping
    shared.signers.remember(answered, signer);
    None
}
