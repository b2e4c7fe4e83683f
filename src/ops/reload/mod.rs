//! The one reload path (docs/design.md §9): a change of the policy or shadow path, SIGHUP and the
//! poll interval all send a trigger; one task debounces them, loads off the request path and
//! publishes the new decision state with one `store`. A policy that fails to load leaves the
//! last good one serving.

use crate::core::policy::load::LoadError;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::mpsc;

mod publish;
mod source;
use publish::load_if_changed;
pub use publish::{Host, Outcome, publish};
pub use source::poll_gravitino;

/// Loads the policy (and shadow) again and publishes it if it changed. Blocking: run it off
/// the request path. Callers serialize reloads (the reload task is the only one in serving).
pub fn reload_now(shared: &impl Host) -> Outcome {
    shared.reread_credentials();
    let Some(policy) = shared.config().policy.as_deref() else { return Outcome::Failed("no policy path".into()) };
    let current = shared.state().load_full();
    let live = match load_if_changed(policy, &current.snapshot) {
        Ok(live) => live,
        Err(e) => return failed(shared, "policy", policy, &e),
    };
    publish(shared, &current, live)
}

fn failed(shared: &impl Host, what: &str, path: &Path, e: &LoadError) -> Outcome {
    tracing::error!(path = %path.display(), error = %e, "{what} does not load; the last good policy stays");
    shared.health().stale.store(true, Ordering::Relaxed);
    shared.metrics().stale.set(1);
    shared.metrics().reload("failure");
    Outcome::Failed(e.to_string())
}

/// The reload task until `shutdown`: triggers from the watch, SIGHUP and the poll interval,
/// debounced, each followed by one [`reload_now`]. The watch starts when this is called, not
/// when the task first runs, so a change made after the call is seen.
pub fn run<H: Host>(shared: Arc<H>, shutdown: impl Future<Output = ()>) -> impl Future<Output = ()> {
    let (tx, rx) = mpsc::channel::<&'static str>(64);
    triggered(shared, tx, rx, shutdown)
}

/// [`run`] on a given channel (a test sends triggers on it as the watcher does).
fn triggered<H: Host>(
    shared: Arc<H>,
    tx: mpsc::Sender<&'static str>,
    mut rx: mpsc::Receiver<&'static str>,
    shutdown: impl Future<Output = ()>,
) -> impl Future<Output = ()> {
    let reload = shared.config().reload.clone();
    // Kept alive for the task's lifetime: dropping the watcher stops the watch. It is made again
    // after it failed, or at the next trigger when it could not be made (vector's watcher does so).
    let watch_tx = reload.watch.then(|| tx.clone());
    let mut watcher = watch_tx.as_ref().and_then(|tx| watch(&*shared, tx.clone()));
    spawn_sighup(tx.clone());
    let reader = shared.config().gravitino_source().map(|g| {
        let every = Duration::from_secs(g.poll_seconds);
        let tx = tx.clone();
        // The first read at once: nothing is served before it (docs/design.md §9).
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                if tx.send("gravitino poll").await.is_err() {
                    return;
                }
            }
        });
        crate::ops::gravitino::Reader::new(g)
    });
    if reload.poll_seconds > 0 {
        let tx = tx.clone();
        let every = Duration::from_secs(reload.poll_seconds);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.tick().await;
            loop {
                tick.tick().await;
                if tx.send("poll").await.is_err() {
                    return;
                }
            }
        });
    }
    drop(tx);
    let debounce = Duration::from_millis(reload.debounce_ms);
    async move {
        let mut retry = WATCH_RETRY_FIRST;
        tokio::pin!(shutdown);
        loop {
            let trigger = tokio::select! {
                () = &mut shutdown => return,
                t = rx.recv() => match t { Some(t) => t, None => return },
            };
            // A burst of events (an editor's save, a ConfigMap swap) becomes one reload.
            crate::ops::timer::sleep(shared.clock(), debounce).await;
            let mut failed = trigger == WATCH_FAILED;
            while let Ok(t) = rx.try_recv() {
                failed |= t == WATCH_FAILED;
            }
            if let Some(tx) = &watch_tx
                && (failed || watcher.is_none())
            {
                // the old watch stops before the new one starts
                drop(watcher.take());
                watcher = watch(&*shared, tx.clone());
                if watcher.is_some() {
                    tracing::info!("the policy watcher was made again");
                    retry = WATCH_RETRY_FIRST;
                } else {
                    // No other trigger may come (polling is off by default): try again later,
                    // less often each time.
                    let (tx, clock, wait) = (tx.clone(), shared.clock().clone(), retry);
                    tokio::spawn(async move {
                        crate::ops::timer::sleep(&clock, wait).await;
                        let _ = tx.send(WATCH_RETRY).await;
                    });
                    retry = (retry * 2).min(WATCH_RETRY_MAX);
                }
            }
            tracing::debug!(trigger, "reloading the policy");
            match &reader {
                None => {
                    let shared = Arc::clone(&shared);
                    let _ = tokio::task::spawn_blocking(move || reload_now(&*shared)).await;
                }
                Some(Ok(reader)) => {
                    poll_gravitino(&shared, reader).await;
                }
                Some(Err(e)) => {
                    source::refused(&*shared, "failure", &e.to_string());
                }
            }
        }
    }
}

/// Watches the directories holding the policy and shadow paths. A directory, not the file:
/// a ConfigMap update swaps the `..data` symlink, which a watch on the old file's inode never
/// sees. Only events on what a load reads (or on a ConfigMap's `..` entries) trigger: other
/// files in the directory — an audit log written beside the policy, an editor's swap file —
/// would otherwise wake the reload task on every write.
fn watch(shared: &impl Host, tx: mpsc::Sender<&'static str>) -> Option<notify::RecommendedWatcher> {
    use notify::Watcher;
    let paths: Vec<PathBuf> =
        [shared.config().policy.clone(), shared.config().shadow_policy.clone()].into_iter().flatten().collect();
    let targets: Vec<Target> = paths.iter().map(|p| Target::of(p)).collect();
    let matchers = targets.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Some(trigger) = trigger(&event, &matchers) {
            let _ = tx.try_send(trigger);
        }
    })
    .map_err(|e| tracing::error!(error = %e, "cannot watch the policy; reload with SIGHUP or `reload.poll_seconds`"))
    .ok()?;
    let audit_dir = shared.config().audit.file.as_deref().map(watched_dir);
    for target in &targets {
        if let Err(e) = watcher.watch(&target.dir, notify::RecursiveMode::NonRecursive) {
            // None, not a watcher missing a directory: the caller tries again.
            tracing::error!(path = %target.dir.display(), error = %e, "cannot watch the policy directory; trying again later");
            return None;
        }
        // The kernel reports every write in a watched directory: filtered here, but only after
        // the watch thread has woken for it, once per audited request.
        if audit_dir.as_deref().is_some_and(|d| same_dir(d, &target.dir)) {
            tracing::warn!(
                path = %target.dir.display(),
                "the audit file is in the watched policy directory: every audit line wakes the policy watcher; write it elsewhere"
            );
        }
    }
    Some(watcher)
}

/// The trigger of a watch that failed: the watcher is made again, and the policy reloaded (a
/// change may have been missed).
const WATCH_FAILED: &str = "watch failed";

/// The trigger of a later attempt to make a watcher that could not be made.
const WATCH_RETRY: &str = "watch retry";
const WATCH_RETRY_FIRST: Duration = Duration::from_secs(1);
const WATCH_RETRY_MAX: Duration = Duration::from_secs(30);

/// What a watch event triggers: `watch` for a change of what a load reads, [`WATCH_FAILED`]
/// when the watcher reports an error (which is logged) or a watched directory itself is removed
/// (its watch is gone with it: a directory made again in its place is not watched); nothing for
/// any other event.
fn trigger(event: &notify::Result<notify::Event>, targets: &[Target]) -> Option<&'static str> {
    match event {
        Ok(e) if e.kind.is_remove() && e.paths.iter().any(|p| targets.iter().any(|t| t.dir == *p)) => {
            tracing::warn!("the watched policy directory was removed; watching it again when it is back");
            Some(WATCH_FAILED)
        }
        Ok(e) if !e.kind.is_access() && concerns_policy(&e.paths, targets) => Some("watch"),
        Ok(_) => None,
        Err(e) => {
            tracing::error!(error = %e, "the policy watcher failed; it is made again and the policy reloaded");
            Some(WATCH_FAILED)
        }
    }
}

/// A watched directory and, for a policy file, the file's name in it.
#[derive(Clone, Debug)]
struct Target {
    dir: PathBuf,
    file: Option<std::ffi::OsString>,
}

impl Target {
    fn of(path: &Path) -> Self {
        let file = if path.is_dir() { None } else { path.file_name().map(ToOwned::to_owned) };
        Self { dir: watched_dir(path), file }
    }
}

/// Whether an event on `paths` can change what a load reads. An event without paths (the
/// watcher lost track and asks for a rescan) always does.
fn concerns_policy(paths: &[PathBuf], targets: &[Target]) -> bool {
    paths.is_empty()
        || paths.iter().any(|path| {
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return true };
            // `..data` and `..<timestamp>` are how a mounted ConfigMap swaps its files.
            name.starts_with("..")
                || targets.iter().any(|t| match &t.file {
                    Some(file) => file.as_os_str() == name,
                    None => !name.starts_with('.') && (name.ends_with(".yaml") || name.ends_with(".yml")),
                })
        })
}

/// The directory to watch for `path`: itself when it is one, else its parent.
fn watched_dir(path: &Path) -> PathBuf {
    if path.is_dir() {
        return path.to_owned();
    }
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || a.canonicalize().ok().zip(b.canonicalize().ok()).is_some_and(|(a, b)| a == b)
}

fn spawn_sighup(tx: mpsc::Sender<&'static str>) {
    #[cfg(unix)]
    tokio::spawn(async move {
        let Ok(mut hup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) else {
            tracing::warn!("cannot listen for SIGHUP");
            return;
        };
        while hup.recv().await.is_some() {
            if tx.send("sighup").await.is_err() {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests;
