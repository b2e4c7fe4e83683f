//! The reload task's tests: debounce on a manual clock, watcher failures, triggers.

use super::*;
use crate::config::Config;
use crate::core::clock::Clock;
use crate::ops::metrics::Metrics;
use crate::ops::state::{DecisionState, Health, Published};

fn modified(path: &str) -> notify::Result<notify::Event> {
    let kind = notify::EventKind::Modify(notify::event::ModifyKind::Any);
    Ok(notify::Event::new(kind).add_path(PathBuf::from(path)))
}

/// A serving process's state around the policy at `path`, reloaded by the watch only.
struct Serving {
    config: Config,
    state: Published,
    health: Health,
    metrics: Metrics,
    clock: Clock,
}

impl Host for Serving {
    fn config(&self) -> &Config {
        &self.config
    }

    fn state(&self) -> &Published {
        &self.state
    }

    fn health(&self) -> &Health {
        &self.health
    }

    fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    fn clock(&self) -> &Clock {
        &self.clock
    }
}

fn serving(path: &Path, clock: &Clock) -> Arc<Serving> {
    let mut config = Config { policy: Some(path.to_owned()), ..Config::default() };
    config.reload.watch = true;
    config.reload.poll_seconds = 0;
    config.reload.debounce_ms = 20;
    let snapshot = crate::core::policy::load_path(path).unwrap().snapshot;
    let state = DecisionState {
        snapshot: Arc::new(snapshot),
        generation: 1,
        loaded_at: std::time::SystemTime::now(),
        shadow: None,
        owners: Arc::default(),
        owners_version: 0,
    };
    let (health, metrics, clock) = (Health::default(), Metrics::new(), clock.clone());
    Arc::new(Serving { config, state: Published::new(state), health, metrics, clock })
}

/// What the process logs, kept for the test to read.
#[derive(Clone, Default)]
struct Logs(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// Polls `done` until it holds, for at most 5 s.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "{what} within 5 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The watcher's error is logged, the watcher made again (and the policy reloaded, since a
/// change may have been missed), and the new watcher sees a later change. A current-thread
/// runtime: the reload task runs on the test's thread, whose logs the test reads.
#[tokio::test]
async fn a_watcher_that_failed_is_reported_made_again_and_sees_a_later_change() {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .with_writer(move || writer.clone())
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);
    let dir = std::env::temp_dir().join(format!("icegate-reload-watcher-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("policy.yaml");
    std::fs::write(&path, "version: 1\nmetalake: lake\ndefault_catalog: prod\nusers: [{ name: ann }]\n").unwrap();
    let shared = serving(&path, &Clock::real());
    let (tx, rx) = mpsc::channel(64);
    let injected = tx.clone();
    tokio::spawn(triggered(Arc::clone(&shared), tx, rx, std::future::pending()));

    // what the watcher's handler does with an error notify reports
    let failed = trigger(&Err(notify::Error::generic("inotify read failed")), &[Target::of(&path)]);
    assert_eq!(failed, Some(WATCH_FAILED));
    injected.try_send(WATCH_FAILED).unwrap();
    until("the policy reloaded after the failure", || {
        shared.metrics.render().contains("icegate_policy_reloads_total{result=\"unchanged\"} 1")
    })
    .await;
    let text = logs.text();
    assert!(text.contains("the policy watcher failed") && text.contains("inotify read failed"), "{text}");
    assert!(text.contains("the policy watcher was made again"), "{text}");

    std::fs::write(&path, "version: 1\nmetalake: lake\ndefault_catalog: prod\nusers: [{ name: bob }]\n").unwrap();
    until("the change seen by the new watcher", || shared.state.load().generation == 2).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Regression: removing the watched directory itself ended its watch for good, so a directory
/// made again in its place (`rm -rf` and a copy) was never watched. Its removal is a watch
/// failure now, and a watch that cannot be made yet is tried again later.
#[tokio::test]
async fn a_policy_directory_removed_and_made_again_is_watched_again() {
    let dir = std::env::temp_dir().join(format!("icegate-reload-dir-removed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("policy.yaml");
    std::fs::write(&path, "version: 1\nmetalake: lake\ndefault_catalog: prod\nusers: [{ name: ann }]\n").unwrap();
    let shared = serving(&path, &Clock::real());
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(triggered(Arc::clone(&shared), tx, rx, std::future::pending()));

    std::fs::remove_dir_all(&dir).unwrap();
    // the policy's removal is seen (a reload fails; the last good policy serves) ...
    until("the removal seen", || shared.health.stale.load(Ordering::Relaxed)).await;
    // ... and the watcher cannot be made while the directory is missing
    tokio::time::sleep(Duration::from_millis(100)).await;
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&path, "version: 1\nmetalake: lake\ndefault_catalog: prod\nusers: [{ name: bob }]\n").unwrap();
    until("the new directory's policy loaded", || shared.state.load().generation == 2).await;
    assert!(!shared.health.stale.load(Ordering::Relaxed));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_removal_of_a_watched_directory_is_a_watch_failure() {
    let targets = [Target::of(Path::new("/etc/icegate/policy.yaml"))];
    let removed = |path: &str| {
        Ok(notify::Event::new(notify::EventKind::Remove(notify::event::RemoveKind::Folder)).add_path(path.into()))
    };
    assert_eq!(trigger(&removed("/etc/icegate"), &targets), Some(WATCH_FAILED));
    assert_eq!(trigger(&removed("/etc/icegate/old"), &targets), None, "another directory in it");
}

/// How many reloads `shared` has counted, whatever their result.
fn reloads(shared: &Serving) -> f64 {
    let text = shared.metrics.render();
    let values = text.lines().filter(|l| l.starts_with("icegate_policy_reloads_total"));
    values.filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok()).sum()
}

/// Triggers that come while the debounce runs are one reload with the first. The debounce
/// waits on a manual clock (an hour of it) that the test moves: no wall-clock wait.
#[tokio::test]
async fn a_burst_of_triggers_within_the_debounce_is_one_reload() {
    let dir = std::env::temp_dir().join(format!("icegate-reload-debounce-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("policy.yaml");
    std::fs::write(&path, "version: 1\nmetalake: lake\ndefault_catalog: prod\nusers: [{ name: ann }]\n").unwrap();
    let clock = Clock::manual();
    let mut shared = Arc::into_inner(serving(&path, &clock)).unwrap();
    shared.config.reload.watch = false;
    shared.config.reload.debounce_ms = 3_600_000;
    let shared = Arc::new(shared);
    let (tx, rx) = mpsc::channel(64);
    let injected = tx.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(triggered(Arc::clone(&shared), tx, rx, async move {
        let _ = stopped.await;
    }));
    for _ in 0..5 {
        injected.send("watch").await.unwrap();
        // the reload task takes the trigger (and, were there no debounce, would reload now)
        tokio::task::yield_now().await;
    }
    assert_eq!(reloads(&shared), 0.0, "within the debounce");
    // One more trigger after the first reload: it is the second reload. Were the burst not
    // one reload, its later triggers would have made another before this one.
    for expected in [1.0, 2.0] {
        if expected > 1.0 {
            injected.send("watch").await.unwrap();
            tokio::task::yield_now().await;
        }
        clock.advance(Duration::from_secs(3600));
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while reloads(&shared) < expected {
            assert!(std::time::Instant::now() < deadline, "reload {expected} not made after the debounce");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(reloads(&shared), expected, "{}", shared.metrics.render());
    }
    stop.send(()).unwrap();
    task.await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// (A watcher's error is the test above: the one test that reaches its log line, which a
/// second test on another thread could make the log filter skip.)
#[test]
fn only_changes_of_what_a_load_reads_trigger() {
    let targets = [Target::of(Path::new("/etc/icegate/policy.yaml"))];
    assert_eq!(trigger(&modified("/etc/icegate/policy.yaml"), &targets), Some("watch"));
    assert_eq!(trigger(&modified("/etc/icegate/audit.log"), &targets), None);
}

/// A [`Serving`] that notes the (generation, stale) pair a concurrent `/readyz` would read at
/// every step a reload takes through its host, the reload being the only writer.
struct Observed {
    inner: Serving,
    seen: std::sync::Mutex<Vec<(u64, bool)>>,
}

impl Observed {
    fn note(&self) {
        let pair = (self.inner.state.load().generation, self.inner.health.stale.load(Ordering::Relaxed));
        self.seen.lock().unwrap().push(pair);
    }
}

impl Host for Observed {
    fn config(&self) -> &Config {
        self.note();
        &self.inner.config
    }

    fn state(&self) -> &Published {
        self.note();
        &self.inner.state
    }

    fn health(&self) -> &Health {
        self.note();
        &self.inner.health
    }

    fn metrics(&self) -> &Metrics {
        self.note();
        &self.inner.metrics
    }

    fn clock(&self) -> &Clock {
        &self.inner.clock
    }
}

/// Regression: a publish cleared `stale` before it stored the new state, so between the two a
/// `/readyz` read `stale: false` beside the old generation (the Gravitino source's first read
/// showed a fresh generation 0). The state is stored first now: no step shows the old
/// generation as fresh. Deterministic: the host notes the pair at each of the reload's steps.
#[test]
fn a_publish_never_shows_the_old_generation_as_fresh() {
    let dir = std::env::temp_dir().join(format!("icegate-reload-publish-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("policy.yaml");
    std::fs::write(&path, "version: 1\nmetalake: lake\ndefault_catalog: prod\nusers: [{ name: ann }]\n").unwrap();
    let inner = Arc::into_inner(serving(&path, &Clock::real())).unwrap();
    // the last reload failed: generation 1 serves, stale
    inner.health.stale.store(true, Ordering::Relaxed);
    let observed = Observed { inner, seen: std::sync::Mutex::default() };
    std::fs::write(&path, "version: 1\nmetalake: lake\ndefault_catalog: prod\nusers: [{ name: bob }]\n").unwrap();
    assert!(matches!(reload_now(&observed), Outcome::Reloaded { generation: 2 }));
    observed.note();
    let seen = observed.seen.lock().unwrap().clone();
    assert_eq!(seen.last(), Some(&(2, false)), "{seen:?}");
    assert!(!seen.contains(&(1, false)), "the old generation shown as fresh: {seen:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
