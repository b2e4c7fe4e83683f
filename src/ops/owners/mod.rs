//! The ownership store (docs/design.md §4 "Ownership of created objects"): who created which
//! schema, table and view through icegate, kept durably (an embedded SQLite file, or
//! PostgreSQL shared by replicas) and published as an immutable [`OwnerIndex`] in the
//! decision state.
//!
//! Every create, drop and rename is first written as an *intent* (durable before the request
//! is forwarded: a store that cannot be written refuses the request with 503), then *settled*
//! from the upstream's answer before the response is returned (`serve::pipeline::ownership` has the rule).

mod change;
pub mod embedded;
mod indexed;
pub mod pg_tls;
pub mod plan;
pub mod postgres;
mod sql;
mod store;

pub use change::{Change, Intent, Object, OwnersError, Settlement};

pub use crate::config::owners::{Config, StoreKind, default_path, default_path_in};
use crate::core::clock::Clock;
use crate::core::ownership::{Kind, OwnerIndex, Record, Source};
use indexed::{Indexed, poisoned};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store::{Absent, Apply, Store};

/// The store and the index built from it; shared by the serving process.
#[derive(Debug)]
pub struct Owners {
    config: Config,
    store: Box<dyn Store>,
    indexed: Arc<Mutex<Indexed>>,
    /// Why the store could not be opened when serving started (`icegate serve` exits on it).
    startup_error: Option<String>,
    /// Whether the last read or write of the store succeeded, for `/readyz`.
    writable: AtomicBool,
    /// Intents the last reconciliation left unsettled, for `/readyz`.
    pending: AtomicUsize,
    /// The time intents are written with and judged old by.
    clock: Clock,
}

/// What `/readyz` says about the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    pub store: StoreKind,
    pub writable: bool,
    pub pending: usize,
}

/// The embedded store's file; the default one's directory is created (readable by this user
/// only: whoever can write the store can make anyone an owner).
fn embedded_path(config: &Config) -> Result<PathBuf, OwnersError> {
    let path = config.embedded_path().ok_or_else(|| OwnersError::Open {
        path: "(none)".into(),
        reason: "`owners.path` is unset and neither `XDG_STATE_HOME` nor `HOME` names a directory".into(),
    })?;
    if config.path.is_none()
        && let Some(dir) = path.parent()
    {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(dir)
            .map_err(|e| OwnersError::Open { path: path.display().to_string(), reason: e.to_string() })?;
    }
    Ok(path)
}

impl Owners {
    /// The configured store, not yet read (see [`Owners::refresh`]).
    pub fn new(config: &Config) -> Result<Arc<Self>, OwnersError> {
        Self::build(config).map(Arc::new)
    }

    fn build(config: &Config) -> Result<Self, OwnersError> {
        let store: Box<dyn Store> = match config.kind() {
            StoreKind::Off => Box::new(Absent { why: None }),
            StoreKind::Embedded => {
                Box::new(store::File::new(embedded_path(config)?, Duration::from_millis(config.timeout_ms)))
            }
            StoreKind::Postgres => Box::new(postgres::Postgres::new(config)?),
        };
        Ok(Self::with_store(config, store, None))
    }

    fn with_store(config: &Config, store: Box<dyn Store>, startup_error: Option<String>) -> Self {
        Self {
            config: config.clone(),
            store,
            indexed: Arc::default(),
            startup_error,
            writable: AtomicBool::new(false),
            pending: AtomicUsize::new(0),
            clock: Clock::real(),
        }
    }

    /// [`Owners::new`] for serving, with an embedded store read at once. A store that cannot
    /// be set up or opened is logged and kept in [`Owners::startup_error`]: `icegate serve`
    /// refuses to start on it, and an in-process server refuses creates, drops and renames
    /// with 503 until it opens. A PostgreSQL server that is not reachable yet is no error.
    pub fn open(config: &Config) -> Arc<Self> {
        Self::open_on(config, Clock::real())
    }

    /// [`Owners::open`], reading `clock` for the time (a test's manual clock).
    pub fn open_on(config: &Config, clock: Clock) -> Arc<Self> {
        let mut owners = Self::build(config).unwrap_or_else(|e| {
            let why = e.to_string();
            Self::with_store(config, Box::new(Absent { why: Some(why.clone()) }), Some(why))
        });
        owners.clock = clock;
        match owners.store.start(&owners.indexed) {
            Ok(read) => {
                if read {
                    owners.note(true);
                }
            }
            Err(e) => owners.startup_error = Some(e.to_string()),
        }
        if let Some(why) = &owners.startup_error {
            tracing::error!(error = %why, "ownership store does not open");
        }
        Arc::new(owners)
    }

    /// Why the store could not be opened at start-up, if it could not.
    pub fn startup_error(&self) -> Option<&str> {
        self.startup_error.as_deref()
    }

    /// Records whether a read or write of the store just succeeded.
    pub fn note(&self, ok: bool) {
        self.writable.store(ok, Ordering::Relaxed);
    }

    /// Records how many intents the last reconciliation left unsettled.
    pub fn note_pending(&self, n: usize) {
        self.pending.store(n, Ordering::Relaxed);
    }

    pub fn status(&self) -> Status {
        Status {
            store: self.config.kind(),
            writable: self.is_on() && self.writable.load(Ordering::Relaxed),
            pending: self.pending.load(Ordering::Relaxed),
        }
    }

    /// Whether a store is configured (one that could not be set up included).
    pub fn is_on(&self) -> bool {
        self.config.kind() != StoreKind::Off
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    fn now(&self) -> String {
        crate::core::text::rfc3339(self.clock.system_now())
    }

    pub fn postgres(&self) -> Option<&postgres::Postgres> {
        self.store.postgres()
    }

    /// The current index.
    pub fn index(&self) -> Arc<OwnerIndex> {
        self.indexed.lock().map(|i| Arc::clone(&i.index)).unwrap_or_default()
    }

    /// The current index and its version.
    pub fn indexed(&self) -> (Arc<OwnerIndex>, u64) {
        self.indexed.lock().map(|i| (Arc::clone(&i.index), i.version)).unwrap_or_default()
    }

    /// A write's change to the index, for the store to make once it holds the write.
    fn apply(&self, f: impl FnOnce(&mut OwnerIndex) + Send + 'static) -> Apply {
        let indexed = Arc::clone(&self.indexed);
        Box::new(move |generation| {
            indexed.lock().map_err(poisoned)?.update(generation, f);
            Ok(())
        })
    }

    /// Writes the intents durably; their ids in order.
    pub async fn begin(self: &Arc<Self>, intents: Vec<Intent>) -> Result<Vec<(i64, Intent)>, OwnersError> {
        let ids = self.store.begin(intents.clone(), self.now()).await?;
        Ok(ids.into_iter().zip(intents).collect())
    }

    /// Settles one intent and updates the index to match.
    pub async fn settle(self: &Arc<Self>, id: i64, intent: Intent, settlement: Settlement) -> Result<(), OwnersError> {
        let now = self.now();
        let change = match settlement {
            Settlement::Happened { direct } => {
                let (intent, now) = (intent.clone(), now.clone());
                self.apply(move |ix| apply(ix, &intent, direct, &now))
            }
            Settlement::DidNotHappen => Box::new(|_| Ok(())),
        };
        self.store.settle(id, intent, settlement, now, change).await
    }

    /// The intents not yet settled that began more than `age` ago, oldest first.
    pub async fn pending(self: &Arc<Self>, age: Duration) -> Result<Vec<(i64, Intent)>, OwnersError> {
        let cutoff =
            crate::core::text::rfc3339(self.clock.system_now().checked_sub(age).unwrap_or(std::time::UNIX_EPOCH));
        self.store.pending(cutoff).await
    }

    /// `icegate owners set`.
    pub async fn set(self: &Arc<Self>, record: Record) -> Result<(), OwnersError> {
        let inserted = record.clone();
        self.store.set(record, self.apply(move |ix| ix.insert(inserted))).await
    }

    /// `icegate owners remove`; false when there was no record.
    pub async fn remove(self: &Arc<Self>, kind: Kind, full_name: String) -> Result<bool, OwnersError> {
        let removed = full_name.clone();
        self.store.remove(kind, full_name, self.apply(move |ix| drop(ix.remove(kind, &removed)))).await
    }

    /// `icegate owners forget`: drops a pending intent; false when there was none.
    pub async fn forget(self: &Arc<Self>, id: i64) -> Result<bool, OwnersError> {
        self.store.forget(id).await
    }

    /// Records, for every replica, the location the upstream assigned to `user`'s stage-create
    /// of `full_name` (docs/design.md §4 updateTable), for `ttl`. Nothing to do without a store.
    pub async fn remember_staged(
        self: &Arc<Self>,
        user: &str,
        full_name: &str,
        location: &str,
        ttl: Duration,
    ) -> Result<(), OwnersError> {
        let now_at = self.clock.system_now();
        let expires_at =
            now_at.checked_add(ttl).map_or_else(|| "9999-12-31T23:59:59.999Z".to_owned(), crate::core::text::rfc3339);
        let now = crate::core::text::rfc3339(now_at);
        let (user, full_name, location) = (user.to_owned(), full_name.to_owned(), location.to_owned());
        self.store.remember_staged(user, full_name, location, (now, expires_at)).await
    }

    /// The location a replica recorded for `user`'s stage-create of `full_name`, unless expired.
    pub async fn recall_staged(self: &Arc<Self>, user: &str, full_name: &str) -> Result<Option<String>, OwnersError> {
        let now = self.now();
        self.store.recall_staged(user.to_owned(), full_name.to_owned(), now).await
    }

    /// Re-reads the store when it changed since the last read (another replica, another
    /// process, `icegate owners`); true when the index changed.
    pub async fn refresh(self: &Arc<Self>) -> Result<bool, OwnersError> {
        self.store.refresh(Arc::clone(&self.indexed)).await
    }
}

/// What a settled intent that happened does to the index (as the stores do to their tables).
fn apply(index: &mut OwnerIndex, intent: &Intent, direct: bool, now: &str) {
    match &intent.change {
        // A reconciled create never replaces an owner recorded in the meantime.
        Change::Create(o) if !direct && index.get(o.kind, &o.full_name).is_some() => {}
        Change::Create(o) => index.insert(Record {
            kind: o.kind,
            full_name: o.full_name.clone(),
            owner: intent.user.clone(),
            owner_type: crate::core::policy::model::OwnerType::User,
            created_at: now.to_owned(),
            source: Source::Creation,
        }),
        Change::Drop(o) => drop(index.remove(o.kind, &o.full_name)),
        Change::Rename { from, to } => {
            index.remove(to.kind, &to.full_name);
            if let Some(r) = index.remove(from.kind, &from.full_name) {
                index.insert(Record { full_name: to.full_name.clone(), ..(*r).clone() });
            }
        }
    }
}
