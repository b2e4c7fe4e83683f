//! What the serving pipeline shares: the decision state behind one `ArcSwap` (loaded once per
//! request, so a request never sees two policies), and the process-lifetime pieces.

use crate::config::Config;
use crate::core::decide::Settings;
use crate::core::policy::Snapshot;
pub use crate::ops::state::{DecisionState, Health, Published};
use crate::serve::pipeline::tokens::TokenCodec;
use crate::serve::upstream::upstreams::Upstreams;

/// No policy has been read yet: a Gravitino policy source before its first good read.
#[derive(Debug, thiserror::Error)]
#[error("icegate has not read its policy from its source yet; try again shortly")]
pub struct NoPolicyYet;

/// How many shadow decisions may wait or run at once; a request answered while that many are
/// pending gets none (counted as skipped), so a slow shadow never holds serving memory
/// (`serve::pipeline::observe`).
pub const SHADOW_QUEUE: usize = 256;

use std::sync::Arc;

/// The serving process's shared pieces.
#[derive(Debug)]
pub struct Shared {
    pub state: Published,
    pub config: Config,
    pub settings: Settings,
    /// The upstreams and which serves what (docs/design.md §7 "One gate, many catalogs").
    pub upstreams: Upstreams,
    pub tokens: TokenCodec,
    /// The identity providers, with the keys they load once.
    pub identity: crate::serve::pipeline::identity::Identifier,
    /// Keys `Idempotency-Key` per user, so one user's key never replays another's response.
    pub idempotency_secret: [u8; 32],
    pub audit: crate::ops::audit::Audit,
    pub health: Health,
    pub metrics: crate::ops::metrics::Metrics,
    /// The ownership store (docs/design.md §4); its index is published in `state`.
    pub owners: Arc<crate::ops::owners::Owners>,
    /// The locations stage-create responses carried (docs/design.md §4 updateTable).
    pub staged: crate::serve::pipeline::staged::StagedLocations,
    /// One permit per shadow decision that may be pending ([`SHADOW_QUEUE`]).
    pub shadow_slots: Arc<tokio::sync::Semaphore>,
    /// The time the JWK set's expiry, the ownership store, its rounds and the reload debounce
    /// read (a test's manual clock, else the real one).
    pub clock: crate::core::clock::Clock,
}

impl crate::ops::reload::Host for Shared {
    fn config(&self) -> &Config {
        &self.config
    }

    fn state(&self) -> &Published {
        &self.state
    }

    fn health(&self) -> &Health {
        &self.health
    }

    fn metrics(&self) -> &crate::ops::metrics::Metrics {
        &self.metrics
    }

    fn clock(&self) -> &crate::core::clock::Clock {
        &self.clock
    }

    fn reread_credentials(&self) {
        self.upstreams.reread_credentials();
    }
}

impl Shared {
    /// How many shadow decisions are waiting or running.
    pub fn shadow_pending(&self) -> usize {
        SHADOW_QUEUE - self.shadow_slots.available_permits()
    }

    pub fn new(config: Config, snapshot: Snapshot, upstream: Upstreams) -> Arc<Self> {
        Self::with_shadow(config, snapshot, None, upstream)
    }

    /// As [`Shared::new`], with a shadow candidate.
    pub fn with_shadow(config: Config, snapshot: Snapshot, shadow: Option<Snapshot>, upstream: Upstreams) -> Arc<Self> {
        Self::build(config, snapshot, shadow, upstream, crate::core::clock::Clock::real())
    }

    /// As [`Shared::new`], with `clock` read for the JWK set's expiry and the ownership store's
    /// times (a test's manual clock).
    pub fn with_clock(
        config: Config,
        snapshot: Snapshot,
        upstream: Upstreams,
        clock: crate::core::clock::Clock,
    ) -> Arc<Self> {
        Self::build(config, snapshot, None, upstream, clock)
    }

    fn build(
        config: Config,
        snapshot: Snapshot,
        shadow: Option<Snapshot>,
        upstream: Upstreams,
        clock: crate::core::clock::Clock,
    ) -> Arc<Self> {
        let key = config.lists.page_token_key.as_deref().and_then(crate::serve::pipeline::tokens::parse_key);
        let tokens = key.map_or_else(TokenCodec::random, TokenCodec::new);
        // Derived from the shared key when set, so every replica maps a user's key alike.
        let idempotency_secret = match key {
            Some(k) => {
                use sha2::Digest;
                sha2::Sha256::new().chain_update(b"icegate idempotency\0").chain_update(k).finalize().into()
            }
            None => rand_secret(),
        };
        let sink = match (&config.audit.enabled, &config.audit.file) {
            (false, _) => crate::ops::audit::Sink::Off,
            (true, None) => crate::ops::audit::Sink::Stdout,
            (true, Some(path)) => match std::fs::OpenOptions::new().create(true).append(true).open(path) {
                Ok(file) => crate::ops::audit::Sink::File(file),
                Err(e) => {
                    tracing::error!(path = %path.display(), error = %e, "cannot open the audit file; auditing to stdout");
                    crate::ops::audit::Sink::Stdout
                }
            },
        };
        let owners = crate::ops::owners::Owners::open_on(&config.owners, clock.clone());
        let mut upstream = upstream;
        let mut metrics = crate::ops::metrics::Metrics::new();
        // A Gravitino source starts with nothing read: generation 0 serves nothing (503) until
        // the first good read publishes generation 1 (docs/design.md §9).
        let generation = if config.gravitino_source().is_some() { 0 } else { 1 };
        metrics.generation.set(generation);
        upstream.attach(&mut metrics);
        let (owners_index, owners_version) = owners.indexed();
        Arc::new(Self {
            owners,
            audit: crate::ops::audit::Audit::new(sink),
            staged: crate::serve::pipeline::staged::StagedLocations::new(
                std::time::Duration::from_secs(config.owners.staged_location_seconds),
                clock.clone(),
            ),
            state: Published::new(DecisionState {
                snapshot: Arc::new(snapshot),
                generation: generation.unsigned_abs(),
                loaded_at: std::time::SystemTime::now(),
                shadow: shadow.map(Arc::new),
                owners: owners_index,
                owners_version,
            }),
            health: Health::default(),
            metrics,
            settings: settings(&config),
            identity: crate::serve::pipeline::identity::Identifier::with_clock(&config.identity, clock.clone()),
            clock,
            config,
            upstreams: upstream,
            tokens,
            idempotency_secret,
            shadow_slots: Arc::new(tokio::sync::Semaphore::new(SHADOW_QUEUE)),
        })
    }
}

/// The settings of the listener and process that change a decision ([`crate::core::decide`]).
pub fn settings(config: &Config) -> Settings {
    use crate::config::Ownership;
    use crate::core::roles::OwnershipMode;
    Settings {
        base_path: config.base_path.clone(),
        namespace_separators: crate::serve::upstream::upstreams::namespace_separators(config),
        served_catalogs: crate::serve::upstream::upstreams::served_catalogs(config),
        max_body_bytes: config.limits.max_body_bytes,
        ownership: match config.narrowing.ownership {
            Ownership::Always => OwnershipMode::Always,
            Ownership::Narrowed => OwnershipMode::Narrowed,
            Ownership::Caller => OwnershipMode::Caller,
        },
    }
}

fn rand_secret() -> [u8; 32] {
    use chacha20poly1305::aead::{KeyInit, OsRng};
    chacha20poly1305::ChaCha20Poly1305::generate_key(&mut OsRng).into()
}

/// Lets go of a request's decision state. The last holder of a replaced state frees it, and
/// with it a whole policy snapshot: for a large policy, millions of allocations, during which
/// a one-thread runtime would serve nothing. That holder hands it to the blocking pool instead;
/// whether this call did is returned.
pub fn retire(state: Arc<DecisionState>) -> bool {
    let Some(last) = Arc::into_inner(state) else { return false };
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn_blocking(move || drop(last));
            true
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> Arc<DecisionState> {
        let text = "version: 1\nmetalake: lake\nusers: [{name: alice}]\n";
        Arc::new(DecisionState {
            snapshot: Arc::new(crate::core::policy::load_str("p.yaml", text).unwrap().snapshot),
            generation: 1,
            loaded_at: std::time::SystemTime::now(),
            shadow: None,
            owners: Arc::default(),
            owners_version: 0,
        })
    }

    #[tokio::test]
    async fn the_last_holder_of_a_replaced_state_hands_it_to_the_blocking_pool() {
        let held = state();
        let snapshot = Arc::downgrade(&held.snapshot);
        let request = Arc::clone(&held);
        assert!(!retire(request), "another holder (the ArcSwap, or another request) keeps it");
        assert!(snapshot.upgrade().is_some());
        assert!(retire(held), "the last holder hands it over");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while snapshot.upgrade().is_some() {
            assert!(std::time::Instant::now() < deadline, "the blocking pool never freed it");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    #[test]
    fn outside_a_runtime_it_is_freed_where_it_is_let_go() {
        let held = state();
        let snapshot = Arc::downgrade(&held.snapshot);
        assert!(!retire(held));
        assert!(snapshot.upgrade().is_none());
    }
}
