//! A read of the Gravitino policy source through the one reload path (docs/design.md §9): a
//! read that fails, is implausible or does not make a valid policy keeps the last good snapshot
//! (logged, counted, `stale` in `/readyz`); one whose canonical JSON hashes as the live
//! snapshot's changes nothing; any other is published, generation +1.

use super::publish::{Host, Outcome, publish};
use crate::core::policy::gravitino;
use crate::core::policy::load::content_hash;
use crate::ops::gravitino::Reader;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

/// Reads the metalake once and publishes what changed.
pub async fn poll_gravitino<H: Host>(shared: &Arc<H>, reader: &Reader) -> Outcome {
    shared.reread_credentials();
    let current = shared.state().load_full();
    let read = match reader.read().await {
        Ok(read) => read,
        Err(e @ crate::ops::gravitino::SourceError::Policy(_)) => return refused(&**shared, "invalid", &e.to_string()),
        Err(e) => return refused(&**shared, "failure", &e.to_string()),
    };
    // the role count of the last good read; none before the first
    let before = (current.generation > 0).then(|| current.snapshot.stats().roles);
    let config = reader.config();
    if let Err(e) = gravitino::check_plausible(
        &read.metalake,
        config.service_user().unwrap_or_default(),
        before,
        config.allow_no_roles,
    ) {
        return refused(&**shared, "implausible", &e.to_string());
    }
    let ignored = read.document.ignored_objects;
    let source = gravitino::source(&read.document);
    let changed = current.generation == 0 || content_hash(std::slice::from_ref(&source)) != current.snapshot.hash();
    let host = Arc::clone(shared);
    let published = tokio::task::spawn_blocking(move || {
        let live = if changed {
            match gravitino::load(source) {
                Ok(loaded) => {
                    for w in &loaded.warnings {
                        tracing::warn!("policy: {w}");
                    }
                    Some(Arc::new(loaded.snapshot))
                }
                Err(e) => return Err(e.to_string()),
            }
        } else {
            None
        };
        Ok(publish(&*host, &current, live))
    })
    .await;
    match published {
        Ok(Ok(outcome)) => {
            good_read(&**shared, ignored, changed);
            tracing::debug!(calls = read.calls, changed, "read the Gravitino metalake");
            outcome
        }
        Ok(Err(e)) => refused(&**shared, "invalid", &e),
        Err(e) => refused(&**shared, "failure", &format!("the load task failed: {e}")),
    }
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn good_read(shared: &impl Host, ignored: usize, changed: bool) {
    let now = now_secs();
    let health = shared.health();
    health.source_read_at.store(now, Ordering::Relaxed);
    health.source_failures.store(0, Ordering::Relaxed);
    if let Ok(mut e) = health.source_error.lock() {
        *e = None;
    }
    let metrics = shared.metrics();
    metrics.source_reads(if changed { "changed" } else { "unchanged" });
    metrics.source_read_at.set(i64::try_from(now).unwrap_or(i64::MAX));
    metrics.source_age.set(0);
    metrics.source_ignored.set(i64::try_from(ignored).unwrap_or(i64::MAX));
}

/// A read that is not published: the last good snapshot stays (or, before the first, nothing
/// is served).
pub(super) fn refused(shared: &impl Host, result: &'static str, error: &str) -> Outcome {
    let health = shared.health();
    let failures = health.source_failures.fetch_add(1, Ordering::Relaxed) + 1;
    let read_at = health.source_read_at.load(Ordering::Relaxed);
    if let Ok(mut e) = health.source_error.lock() {
        *e = Some(error.to_owned());
    }
    let metrics = shared.metrics();
    metrics.source_reads(result);
    metrics.reload("failure");
    if read_at == 0 {
        tracing::error!(
            error,
            failures,
            "cannot read the policy from Gravitino; nothing is served until a read succeeds"
        );
    } else {
        let age = now_secs().saturating_sub(read_at);
        metrics.source_age.set(i64::try_from(age).unwrap_or(i64::MAX));
        tracing::error!(
            error,
            failures,
            age_seconds = age,
            "cannot read the policy from Gravitino; the last good one stays"
        );
    }
    health.stale.store(true, Ordering::Relaxed);
    metrics.stale.set(1);
    Outcome::Failed(error.to_owned())
}
