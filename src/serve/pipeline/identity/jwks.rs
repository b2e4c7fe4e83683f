//! The JWK set of the `jwt` provider: fetched from `identity.jwt.jwks_url`, cached, and refetched
//! when it is older than `jwks_cache_secs` or a token names an unknown `kid` — at most once per
//! `jwks_refresh_cooldown_secs`, however many requests ask at once (one fetch at a time; the
//! requests that waited for it read its result). A `kid` still unknown after a fetch is
//! remembered (the negative cache) and refused without waiting, until the cooldown has passed.
//!
//! Reads never block on a fetch unless they need one: the keys sit behind a `std` lock held only
//! to copy an `Arc` out. A failed fetch keeps the keys of the last good one, but only for
//! `jwks_max_stale_secs` after it: past that no key of the set verifies anything (fail closed)
//! until a fetch succeeds again, so a retired key cannot be kept alive by keeping the endpoint
//! down.

use crate::core::clock::Clock;
use crate::net::outbound::Outbound;
use http::Uri;
use jsonwebtoken::jwk::{Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Time allowed for one fetch of the JWK set, headers and body.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest JWK set accepted.
const MAX_JWKS_BYTES: usize = 1024 * 1024;
/// Unknown `kid`s remembered at most (the cache is emptied when full: random `kid`s cost memory
/// only up to here).
const MAX_NEGATIVE: usize = 4096;

#[derive(Debug, Error)]
pub enum JwksError {
    #[error("cannot fetch the JWK set from `{url}`: {message}")]
    Fetch { url: String, message: String },
}

/// One usable key of the set.
#[derive(Debug)]
pub struct JwkKey {
    pub key: DecodingKey,
    /// The `alg` the set pins the key to, if any.
    pub alg: Option<Algorithm>,
}

#[derive(Debug, Default)]
struct State {
    by_kid: FxHashMap<String, Arc<JwkKey>>,
    /// Keys without a `kid`, tried for tokens without one.
    unnamed: Vec<Arc<JwkKey>>,
    fetched: Option<Instant>,
    attempted: Option<Instant>,
    /// `kid` → when a fetch last failed to find it.
    unknown: FxHashMap<String, Instant>,
}

/// When the set is refetched: at most once per `cooldown`, when older than `ttl`; its keys
/// serve at most `max_stale` after the last good fetch.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub cooldown: Duration,
    pub ttl: Duration,
    pub max_stale: Duration,
}

/// The shared, cached JWK set.
#[derive(Debug)]
pub struct Jwks {
    url: Uri,
    client: Outbound,
    cooldown: Duration,
    ttl: Duration,
    /// How long after the last good fetch its keys are still used.
    max_stale: Duration,
    state: RwLock<State>,
    fetch: tokio::sync::Mutex<()>,
    fetches: AtomicU64,
    clock: Clock,
}

impl Jwks {
    /// `client`: the side calls' client (its roots verify an `https://` JWK set URL, its proxy
    /// is used); `max_stale`: how long the keys of the last good fetch outlive failed ones.
    pub fn new(url: Uri, timing: Timing, client: Outbound, clock: Clock) -> Self {
        let Timing { cooldown, ttl, max_stale } = timing;
        Self {
            url,
            client,
            cooldown,
            ttl,
            max_stale,
            state: RwLock::new(State::default()),
            fetch: tokio::sync::Mutex::new(()),
            fetches: AtomicU64::new(0),
            clock,
        }
    }

    /// Fetches attempted so far.
    pub fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// The key named `kid`, fetching the set first when it is stale or lacks `kid` and the
    /// cooldown allows; none once the last good fetch is older than `max_stale`.
    pub async fn key(&self, kid: &str) -> Option<Arc<JwkKey>> {
        let key = self.lookup(kid).await;
        key.filter(|_| self.usable())
    }

    /// Whether the keys held may still be used: the last good fetch is within `max_stale`.
    fn usable(&self) -> bool {
        self.read().fetched.is_some_and(|t| self.clock.since(t) < self.max_stale)
    }

    async fn lookup(&self, kid: &str) -> Option<Arc<JwkKey>> {
        let stale = {
            let s = self.read();
            let now = self.clock.now();
            let known = s.by_kid.get(kid).cloned();
            if known.is_some() && self.fresh(&s, now) {
                return known;
            }
            let negative = s.unknown.get(kid).is_some_and(|t| now.duration_since(*t) < self.cooldown);
            if negative || !self.may_fetch(&s, now) {
                return known;
            }
            known
        };
        if let Some(stale) = stale {
            // Known but stale: refetch unless another request already is, serving the key as it
            // was meanwhile.
            match self.fetch.try_lock() {
                Ok(turn) => self.refresh_holding(turn).await,
                Err(_) => return Some(stale),
            }
            return self.read().by_kid.get(kid).cloned();
        }
        self.refresh().await;
        let mut s = self.write();
        let found = s.by_kid.get(kid).cloned();
        if found.is_none() {
            if s.unknown.len() >= MAX_NEGATIVE {
                s.unknown.clear();
            }
            s.unknown.insert(kid.to_owned(), self.clock.now());
        }
        found
    }

    /// Every key, for a token without a `kid` (fetching first when the set is stale); none once
    /// the last good fetch is older than `max_stale`.
    pub async fn all(&self) -> Vec<Arc<JwkKey>> {
        let stale = {
            let s = self.read();
            let now = self.clock.now();
            !self.fresh(&s, now) && self.may_fetch(&s, now)
        };
        if stale {
            self.refresh().await;
        }
        if !self.usable() {
            return Vec::new();
        }
        let s = self.read();
        s.unnamed.iter().chain(s.by_kid.values()).cloned().collect()
    }

    fn fresh(&self, s: &State, now: Instant) -> bool {
        s.fetched.is_some_and(|t| now.duration_since(t) < self.ttl)
    }

    fn may_fetch(&self, s: &State, now: Instant) -> bool {
        s.attempted.is_none_or(|t| now.duration_since(t) >= self.cooldown)
    }

    /// Fetches the set unless another request did so while this one waited its turn.
    async fn refresh(&self) {
        let turn = self.fetch.lock().await;
        self.refresh_holding(turn).await;
    }

    /// The fetch itself, by the request holding the fetch turn.
    async fn refresh_holding(&self, _turn: tokio::sync::MutexGuard<'_, ()>) {
        if !self.may_fetch(&self.read(), self.clock.now()) {
            return;
        }
        self.fetches.fetch_add(1, Ordering::Relaxed);
        let result = self.download().await;
        let mut s = self.write();
        let now = self.clock.now();
        s.attempted = Some(now);
        match result {
            Ok((by_kid, unnamed)) => {
                tracing::debug!(url = %self.url, keys = by_kid.len() + unnamed.len(), "fetched the JWK set");
                s.by_kid = by_kid;
                s.unnamed = unnamed;
                s.fetched = Some(now);
                s.unknown.clear();
            }
            Err(e) => tracing::warn!("{e}"),
        }
    }

    async fn download(&self) -> Result<(FxHashMap<String, Arc<JwkKey>>, Vec<Arc<JwkKey>>), JwksError> {
        let fail = |message: String| JwksError::Fetch { url: self.url.to_string(), message };
        let request = self
            .client
            .client()
            .get(self.url.to_string())
            .header(http::header::ACCEPT, "application/json")
            .build()
            .map_err(|e| fail(crate::core::text::error_chain(&e.without_url())))?;
        let through = self.client.through(request.url());
        let body = tokio::time::timeout(FETCH_TIMEOUT, async {
            let response = self.client.send(request).await.map_err(|e| fail(e.to_string()))?;
            if !response.status().is_success() {
                return Err(fail(format!("status {}{through}", response.status())));
            }
            crate::net::outbound::read(response, MAX_JWKS_BYTES).await.map_err(fail)
        })
        .await
        .map_err(|_| fail(format!("timed out{through}")))??;
        #[derive(serde::Deserialize)]
        struct Set {
            keys: Vec<serde_json::Value>,
        }
        let set: Set = serde_json::from_slice(&body).map_err(|e| fail(format!("not a JWK set: {e}")))?;
        let mut by_kid = FxHashMap::default();
        let mut unnamed = Vec::new();
        for value in set.keys {
            // One key of a kind this build does not know does not spoil the others.
            let Ok(jwk) = serde_json::from_value::<Jwk>(value) else { continue };
            if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
                continue;
            }
            let Ok(key) = DecodingKey::from_jwk(&jwk) else { continue };
            let alg = match jwk.common.key_algorithm {
                None => None,
                Some(a) => match signing_algorithm(a) {
                    Some(a) => Some(a),
                    None => continue,
                },
            };
            let key = Arc::new(JwkKey { key, alg });
            match jwk.common.key_id {
                Some(kid) => {
                    by_kid.insert(kid, key);
                }
                None => unnamed.push(key),
            }
        }
        Ok((by_kid, unnamed))
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The signing algorithm a JWK's `alg` names (`None` for encryption ones).
fn signing_algorithm(a: KeyAlgorithm) -> Option<Algorithm> {
    a.to_string().parse().ok()
}
