//! Publishing a reload: the one store of a new decision state (a new live snapshot, or a new
//! shadow candidate) and of its freshness, shared by the file reloads and the Gravitino source.

use crate::config::Config;
use crate::core::clock::Clock;
use crate::core::policy::Snapshot;
use crate::core::policy::load::{LoadError, content_hash, load_sources, read_sources};
use crate::ops::metrics::Metrics;
use crate::ops::state::{DecisionState, Health, Published};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// What a reload reads and publishes into: the serving process's shared state implements it.
pub trait Host: Send + Sync + 'static {
    fn config(&self) -> &Config;
    fn state(&self) -> &Published;
    fn health(&self) -> &Health;
    fn metrics(&self) -> &Metrics;
    /// What the debounce waits on.
    fn clock(&self) -> &Clock;
    /// Reads the upstreams' static credential files again (docs/design.md §6: re-read on reload).
    fn reread_credentials(&self) {}
}

impl<H: Host> Host for Arc<H> {
    fn config(&self) -> &Config {
        (**self).config()
    }

    fn state(&self) -> &Published {
        (**self).state()
    }

    fn health(&self) -> &Health {
        (**self).health()
    }

    fn metrics(&self) -> &Metrics {
        (**self).metrics()
    }

    fn clock(&self) -> &Clock {
        (**self).clock()
    }

    fn reread_credentials(&self) {
        (**self).reread_credentials();
    }
}

/// What one reload did.
#[derive(Debug)]
pub enum Outcome {
    Reloaded {
        generation: u64,
    },
    /// Only the shadow candidate changed.
    ShadowReloaded,
    Unchanged,
    Failed(String),
}

/// Publishes `live` (a new live snapshot, `None` when it did not change) with the shadow
/// candidate loaded again if its file changed: generation +1 for a new live snapshot. Blocking
/// (the shadow is a file): run it off the request path.
pub fn publish(shared: &impl Host, current: &DecisionState, live: Option<Arc<Snapshot>>) -> Outcome {
    let shadow = match (&shared.config().shadow_policy, &current.shadow) {
        (None, _) => None,
        (Some(path), Some(old)) => match load_if_changed(path, old) {
            Ok(new) => new.map(Some),
            Err(e) => {
                // The live policy is unaffected; the candidate under review stays as it was.
                tracing::error!(path = %path.display(), error = %e, "shadow policy does not load; the previous candidate stays");
                shared.metrics().reload("shadow_failure");
                None
            }
        },
        (Some(path), None) => match read_sources(path).and_then(load_sources) {
            Ok(loaded) => Some(Some(Arc::new(loaded.snapshot))),
            Err(e) => {
                tracing::error!(path = %path.display(), error = %e, "shadow policy does not load");
                shared.metrics().reload("shadow_failure");
                None
            }
        },
    };
    if live.is_none() && shadow.is_none() {
        fresh(shared);
        shared.metrics().reload("unchanged");
        return Outcome::Unchanged;
    }
    let generation = current.generation + u64::from(live.is_some());
    let next = DecisionState {
        snapshot: live.clone().unwrap_or_else(|| Arc::clone(&current.snapshot)),
        generation,
        loaded_at: if live.is_some() { std::time::SystemTime::now() } else { current.loaded_at },
        shadow: shadow.unwrap_or_else(|| current.shadow.clone()),
        owners: Arc::clone(&current.owners),
        owners_version: current.owners_version,
    };
    let hash = next.snapshot.hash().to_owned();
    shared.state().policy(&next);
    // after the store: cleared before it, `/readyz` showed the old generation as fresh
    fresh(shared);
    if live.is_some() {
        shared.metrics().reload("success");
        shared.metrics().generation.set(i64::try_from(generation).unwrap_or(i64::MAX));
        tracing::info!(generation, %hash, "policy reloaded");
        Outcome::Reloaded { generation }
    } else {
        shared.metrics().reload("shadow_success");
        tracing::info!("shadow policy reloaded");
        Outcome::ShadowReloaded
    }
}

/// The last read was good: what serves is the latest policy. Called once the state is stored.
fn fresh(shared: &impl Host) {
    shared.health().stale.store(false, Ordering::Relaxed);
    shared.metrics().stale.set(0);
}

/// The snapshot at `path` when its content differs from `current`'s, else `None`.
pub(super) fn load_if_changed(path: &Path, current: &Snapshot) -> Result<Option<Arc<Snapshot>>, LoadError> {
    let sources = read_sources(path)?;
    if content_hash(&sources) == current.hash() {
        return Ok(None);
    }
    let loaded = load_sources(sources)?;
    for w in &loaded.warnings {
        tracing::warn!("policy: {w}");
    }
    Ok(Some(Arc::new(loaded.snapshot)))
}
