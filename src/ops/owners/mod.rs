//! The ownership store (DESIGN.md §4 "Ownership of created objects"): who created which
//! schema, table and view through icegate, kept durably (an embedded SQLite file, or
//! PostgreSQL shared by replicas) and published as an immutable [`OwnerIndex`] in the
//! decision state.
//!
//! Every create, drop and rename is first written as an *intent* (durable before the request
//! is forwarded: a store that cannot be written refuses the request with 503), then *settled*
//! from the upstream's answer before the response is returned (`serve::ownership` has the rule).

mod change;
pub mod embedded;
pub mod pg_tls;
pub mod plan;
pub mod postgres;
mod sql;

pub use change::{Change, Intent, Object, OwnersError, Settlement};

pub use crate::config::owners::{Config, StoreKind, default_path, default_path_in};
use crate::core::ownership::{Kind, OwnerIndex, Record, Source};
use embedded::Embedded;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug)]
enum Backend {
    Off,
    /// Configured, but it could not be set up (the reason): every write fails, so creates,
    /// drops and renames get 503.
    Unavailable(String),
    /// The file, opened on first use, and again after a failure to open.
    Embedded(PathBuf, Mutex<Option<Embedded>>),
    Postgres(Box<postgres::Postgres>),
}

/// The index as this process sees the store.
#[derive(Debug, Default)]
struct Indexed {
    index: Arc<OwnerIndex>,
    /// Bumped at every change of `index`, so an older index is never published over a newer.
    version: u64,
    /// The store's change counter (SQLite's `data_version`, PostgreSQL's generation) that the
    /// last full read saw.
    read_at: Option<i64>,
    /// The highest generation of a change applied locally (PostgreSQL): a full read older
    /// than it would lose that change, so it is not applied.
    applied: i64,
}

/// The store and the index built from it; shared by the serving process.
#[derive(Debug)]
pub struct Owners {
    config: Config,
    backend: Backend,
    indexed: Mutex<Indexed>,
    /// Why the store could not be opened when serving started (`icegate serve` exits on it).
    startup_error: Option<String>,
    /// Whether the last read or write of the store succeeded, for `/readyz`.
    writable: AtomicBool,
    /// Intents the last reconciliation left unsettled, for `/readyz`.
    pending: AtomicUsize,
}

/// What `/readyz` says about the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    pub store: StoreKind,
    pub writable: bool,
    pub pending: usize,
}

fn poisoned<T>(_: T) -> OwnersError {
    OwnersError::Task("the ownership index lock is poisoned".into())
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
        let backend = match config.kind() {
            StoreKind::Off => Backend::Off,
            StoreKind::Embedded => Backend::Embedded(embedded_path(config)?, Mutex::new(None)),
            StoreKind::Postgres => Backend::Postgres(Box::new(postgres::Postgres::new(config)?)),
        };
        Ok(Self::with_backend(config, backend, None))
    }

    fn with_backend(config: &Config, backend: Backend, startup_error: Option<String>) -> Self {
        Self {
            config: config.clone(),
            backend,
            indexed: Mutex::default(),
            startup_error,
            writable: AtomicBool::new(false),
            pending: AtomicUsize::new(0),
        }
    }

    /// [`Owners::new`] for serving, with an embedded store read at once. A store that cannot
    /// be set up or opened is logged and kept in [`Owners::startup_error`]: `icegate serve`
    /// refuses to start on it, and an in-process server refuses creates, drops and renames
    /// with 503 until it opens. A PostgreSQL server that is not reachable yet is no error.
    pub fn open(config: &Config) -> Arc<Self> {
        let mut owners = Self::build(config).unwrap_or_else(|e| {
            let why = e.to_string();
            Self::with_backend(config, Backend::Unavailable(why.clone()), Some(why))
        });
        match &owners.backend {
            Backend::Off => {
                tracing::info!("ownership store is off (`[owners] store = \"off\"`): created objects get no owner");
            }
            Backend::Embedded(path, _) => match owners.refresh_blocking() {
                Ok(_) => {
                    owners.note(true);
                    let records = owners.index().len();
                    tracing::info!(path = %path.display(), records, "ownership store opened");
                }
                Err(e) => owners.startup_error = Some(e.to_string()),
            },
            Backend::Postgres(_) => tracing::info!("ownership store is PostgreSQL; reading it"),
            Backend::Unavailable(_) => {}
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

    pub fn is_on(&self) -> bool {
        !matches!(self.backend, Backend::Off)
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn postgres(&self) -> Option<&postgres::Postgres> {
        match &self.backend {
            Backend::Postgres(pg) => Some(pg),
            _ => None,
        }
    }

    /// The current index.
    pub fn index(&self) -> Arc<OwnerIndex> {
        self.indexed.lock().map(|i| Arc::clone(&i.index)).unwrap_or_default()
    }

    /// The current index and its version.
    pub fn indexed(&self) -> (Arc<OwnerIndex>, u64) {
        self.indexed.lock().map(|i| (Arc::clone(&i.index), i.version)).unwrap_or_default()
    }

    /// Runs `f` on the open embedded file (opening it first if needed). Blocking.
    fn embedded<T>(&self, f: impl FnOnce(&mut Embedded) -> Result<T, OwnersError>) -> Result<T, OwnersError> {
        let Backend::Embedded(path, slot) = &self.backend else {
            return Err(OwnersError::Off);
        };
        let mut slot = slot.lock().map_err(poisoned)?;
        if slot.is_none() {
            *slot = Some(Embedded::open(path, Duration::from_millis(self.config.timeout_ms))?);
        }
        match slot.as_mut() {
            Some(store) => f(store),
            None => Err(OwnersError::Off),
        }
    }

    async fn blocking<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&Self) -> Result<T, OwnersError> + Send + 'static,
    ) -> Result<T, OwnersError> {
        let this = Arc::clone(self);
        tokio::task::spawn_blocking(move || f(&this)).await.map_err(|e| OwnersError::Task(e.to_string()))?
    }

    /// Writes the intents durably; their ids in order.
    pub async fn begin(self: &Arc<Self>, intents: Vec<Intent>) -> Result<Vec<(i64, Intent)>, OwnersError> {
        let now = crate::core::text::rfc3339_now();
        let ids = match &self.backend {
            Backend::Off => return Err(OwnersError::Off),
            Backend::Unavailable(why) => return Err(OwnersError::Store(why.clone())),
            Backend::Embedded(..) => {
                let intents = intents.clone();
                self.blocking(move |o| o.embedded(|s| intents.iter().map(|i| s.begin(i, &now)).collect())).await?
            }
            Backend::Postgres(pg) => pg.begin(&intents, &now).await?,
        };
        Ok(ids.into_iter().zip(intents).collect())
    }

    /// Settles one intent and updates the index to match.
    pub async fn settle(self: &Arc<Self>, id: i64, intent: Intent, settlement: Settlement) -> Result<(), OwnersError> {
        let now = crate::core::text::rfc3339_now();
        let generation = match &self.backend {
            Backend::Off => return Err(OwnersError::Off),
            Backend::Unavailable(why) => return Err(OwnersError::Store(why.clone())),
            // The file and the index change under the file's lock, in the order of the writes.
            Backend::Embedded(..) => {
                return self
                    .blocking(move |o| {
                        o.embedded(|s| {
                            s.settle(id, &intent, settlement, &now)?;
                            match settlement {
                                Settlement::Happened { direct } => {
                                    o.update(None, |ix| apply(ix, &intent, direct, &now))
                                }
                                Settlement::DidNotHappen => Ok(()),
                            }
                        })
                    })
                    .await;
            }
            Backend::Postgres(pg) => pg.settle(id, &intent, settlement, &now).await?,
        };
        if let Settlement::Happened { direct } = settlement {
            self.update(generation, |ix| apply(ix, &intent, direct, &now))?;
        }
        Ok(())
    }

    /// The intents not yet settled that began more than `age` ago, oldest first.
    pub async fn pending(self: &Arc<Self>, age: Duration) -> Result<Vec<(i64, Intent)>, OwnersError> {
        let cutoff =
            crate::core::text::rfc3339(std::time::SystemTime::now().checked_sub(age).unwrap_or(std::time::UNIX_EPOCH));
        match &self.backend {
            Backend::Off | Backend::Unavailable(_) => Ok(Vec::new()),
            Backend::Embedded(..) => self.blocking(move |o| o.embedded(|s| s.pending(&cutoff))).await,
            Backend::Postgres(pg) => pg.pending(&cutoff).await,
        }
    }

    /// `icegate owners set`.
    pub async fn set(self: &Arc<Self>, record: Record) -> Result<(), OwnersError> {
        let generation = match &self.backend {
            Backend::Off => return Err(OwnersError::Off),
            Backend::Unavailable(why) => return Err(OwnersError::Store(why.clone())),
            Backend::Embedded(..) => {
                return self
                    .blocking(move |o| {
                        o.embedded(|s| {
                            s.set(&record)?;
                            o.update(None, |ix| ix.insert(record))
                        })
                    })
                    .await;
            }
            Backend::Postgres(pg) => Some(pg.set(&record).await?),
        };
        self.update(generation, |ix| ix.insert(record))
    }

    /// `icegate owners remove`; false when there was no record.
    pub async fn remove(self: &Arc<Self>, kind: Kind, full_name: String) -> Result<bool, OwnersError> {
        let (removed, generation) = match &self.backend {
            Backend::Off => return Err(OwnersError::Off),
            Backend::Unavailable(why) => return Err(OwnersError::Store(why.clone())),
            Backend::Embedded(..) => {
                return self
                    .blocking(move |o| {
                        o.embedded(|s| {
                            let removed = s.remove(kind, &full_name)?;
                            o.update(None, |ix| drop(ix.remove(kind, &full_name)))?;
                            Ok(removed)
                        })
                    })
                    .await;
            }
            Backend::Postgres(pg) => pg.remove(kind, &full_name).await?,
        };
        self.update(generation, |ix| drop(ix.remove(kind, &full_name)))?;
        Ok(removed)
    }

    /// `icegate owners forget`: drops a pending intent; false when there was none.
    pub async fn forget(self: &Arc<Self>, id: i64) -> Result<bool, OwnersError> {
        match &self.backend {
            Backend::Off => Err(OwnersError::Off),
            Backend::Unavailable(why) => Err(OwnersError::Store(why.clone())),
            Backend::Embedded(..) => self.blocking(move |o| o.embedded(|s| s.forget(id))).await,
            Backend::Postgres(pg) => pg.forget(id).await,
        }
    }

    /// Records, for every replica, the location the upstream assigned to `user`'s stage-create
    /// of `full_name` (DESIGN.md §4 updateTable), for `ttl`. Nothing to do without a store.
    pub async fn remember_staged(
        self: &Arc<Self>,
        user: &str,
        full_name: &str,
        location: &str,
        ttl: Duration,
    ) -> Result<(), OwnersError> {
        let now_at = std::time::SystemTime::now();
        let expires_at =
            now_at.checked_add(ttl).map_or_else(|| "9999-12-31T23:59:59.999Z".to_owned(), crate::core::text::rfc3339);
        let now = crate::core::text::rfc3339(now_at);
        match &self.backend {
            Backend::Off => Ok(()),
            Backend::Unavailable(why) => Err(OwnersError::Store(why.clone())),
            Backend::Embedded(..) => {
                let (user, full_name, location) = (user.to_owned(), full_name.to_owned(), location.to_owned());
                self.blocking(move |o| {
                    o.embedded(|s| s.remember_staged(&user, &full_name, &location, (&now, &expires_at)))
                })
                .await
            }
            Backend::Postgres(pg) => pg.remember_staged(user, full_name, location, (&now, &expires_at)).await,
        }
    }

    /// The location a replica recorded for `user`'s stage-create of `full_name`, unless expired.
    pub async fn recall_staged(self: &Arc<Self>, user: &str, full_name: &str) -> Result<Option<String>, OwnersError> {
        let now = crate::core::text::rfc3339_now();
        match &self.backend {
            Backend::Off | Backend::Unavailable(_) => Ok(None),
            Backend::Embedded(..) => {
                let (user, full_name) = (user.to_owned(), full_name.to_owned());
                self.blocking(move |o| o.embedded(|s| s.recall_staged(&user, &full_name, &now))).await
            }
            Backend::Postgres(pg) => pg.recall_staged(user, full_name, &now).await,
        }
    }

    /// Re-reads the store when it changed since the last read (another replica, another
    /// process, `icegate owners`); true when the index changed.
    pub async fn refresh(self: &Arc<Self>) -> Result<bool, OwnersError> {
        match &self.backend {
            Backend::Off => Ok(false),
            Backend::Unavailable(why) => Err(OwnersError::Store(why.clone())),
            Backend::Embedded(..) => self.blocking(Self::refresh_blocking).await,
            Backend::Postgres(pg) => {
                let seen = self.indexed.lock().map_err(poisoned)?.read_at;
                let Some((generation, records)) = pg.read_if_changed(seen).await? else { return Ok(false) };
                let mut ix = self.indexed.lock().map_err(poisoned)?;
                if generation < ix.applied {
                    // Older than a change this process already applied: the next read catches up.
                    return Ok(false);
                }
                ix.index = Arc::new(OwnerIndex::from_records(records));
                ix.version += 1;
                ix.read_at = Some(generation);
                Ok(true)
            }
        }
    }

    /// [`Owners::refresh`] of the embedded store, under the file's lock so that no write of
    /// this process falls between the read and the index it replaces. Blocking.
    fn refresh_blocking(&self) -> Result<bool, OwnersError> {
        self.embedded(|s| {
            let seen = self.indexed.lock().map_err(poisoned)?.read_at;
            let data_version = s.data_version()?;
            if Some(data_version) == seen {
                return Ok(false);
            }
            let index = OwnerIndex::from_records(s.records()?);
            let mut ix = self.indexed.lock().map_err(poisoned)?;
            ix.index = Arc::new(index);
            ix.version += 1;
            ix.read_at = Some(data_version);
            Ok(true)
        })
    }

    /// Applies a change this process made; `generation` is PostgreSQL's after it (a full read
    /// at or after that generation already holds the change, and a rename applied twice would
    /// lose its record, so it is not applied again).
    fn update(&self, generation: Option<i64>, f: impl FnOnce(&mut OwnerIndex)) -> Result<(), OwnersError> {
        let mut ix = self.indexed.lock().map_err(poisoned)?;
        if let (Some(g), Some(read)) = (generation, ix.read_at)
            && read >= g
        {
            return Ok(());
        }
        f(Arc::make_mut(&mut ix.index));
        ix.version += 1;
        if let Some(g) = generation {
            ix.applied = ix.applied.max(g);
        }
        Ok(())
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
