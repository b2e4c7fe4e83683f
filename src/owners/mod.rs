//! The ownership store (DESIGN.md §4 "Ownership of created objects"): who created which
//! schema, table and view through icegate, kept durably in an embedded SQLite file and
//! published as an immutable [`index::OwnerIndex`] in the decision state.
//!
//! Every create, drop and rename is first written as an *intent* (durable before the request
//! is forwarded: a store that cannot be written refuses the request with 503), then *settled*
//! from the upstream's answer before the response is returned. An ambiguous answer (a
//! transport error or timeout after sending, or a 5xx) is reconciled by asking the upstream
//! whether the object exists ([`settle`]); an intent that cannot be settled stays pending and
//! is retried at start-up and every `reconcile_interval_seconds`.

pub mod cli;
pub mod embedded;
pub mod index;
pub mod plan;
pub mod settle;

use embedded::Embedded;
use index::{Kind, OwnerIndex, Record};
use serde::Deserialize;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum OwnersError {
    #[error("cannot open the ownership store `{path}`: {reason}")]
    Open { path: String, reason: String },
    #[error("the ownership store failed: {0}")]
    Store(String),
    #[error("the ownership store is off (`[owners] store = \"off\"`)")]
    Off,
    #[error("the ownership store's worker failed: {0}")]
    Task(String),
}

/// `[owners]` of the config file (documented in docs/config.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `embedded` or `off`; when unset, `embedded` if `path` is set, else `off`.
    pub store: Option<StoreKind>,
    /// The embedded store's file (created if missing; its directory must exist).
    pub path: Option<PathBuf>,
    /// How long a write waits for a lock held by another process before it fails.
    pub busy_timeout_ms: u64,
    /// How often intents left pending by ambiguous upstream answers are reconciled, and
    /// changes made by other processes (`icegate owners set`) are picked up.
    pub poll_interval_seconds: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self { store: None, path: None, busy_timeout_ms: 2000, poll_interval_seconds: 5 }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    Embedded,
    Off,
}

impl Config {
    pub fn kind(&self) -> StoreKind {
        self.store.unwrap_or(if self.path.is_some() { StoreKind::Embedded } else { StoreKind::Off })
    }

    pub fn validate(&self) -> Result<(), crate::config::ConfigError> {
        if self.kind() == StoreKind::Embedded && self.path.is_none() {
            return Err(crate::config::ConfigError::Invalid {
                key: "owners.path",
                message: "required when `owners.store` is `embedded`".into(),
            });
        }
        Ok(())
    }
}

/// An object a change is about: its Gravitino full name and its path upstream (after the
/// base path), for the existence checks of reconciliation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    pub kind: Kind,
    pub full_name: String,
    pub path: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    Create(Object),
    Drop(Object),
    Rename { from: Object, to: Object },
}

/// A change a request is about to make, by whom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intent {
    pub change: Change,
    pub user: String,
    /// For a create: the upstream said the object did not exist just before it was forwarded,
    /// so finding it afterwards proves this request created it. Otherwise an ambiguous create
    /// records nothing.
    pub confirmable: bool,
}

/// The store and the index built from it; shared by the serving process.
#[derive(Debug)]
pub struct Owners {
    config: Config,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Option<Embedded>,
    index: Arc<OwnerIndex>,
    /// Bumped at every change of `index`, so an older index is never published over a newer.
    version: u64,
    /// SQLite's `data_version` when the file was last read: it changes when another
    /// connection commits.
    data_version: Option<i64>,
}

impl Owners {
    /// Opens the configured store. A store that does not open is logged, not fatal: icegate
    /// serves, refusing creates, drops and renames with 503 until a later write opens it.
    pub fn open(config: &Config) -> Arc<Self> {
        let owners = Self::open_quiet(config);
        match config.kind() {
            StoreKind::Off => {
                tracing::warn!("ownership store is off: created objects get no owner (set `[owners] path` to keep one)")
            }
            StoreKind::Embedded => match owners.with_store(|_, _| Ok(())) {
                Ok(()) => tracing::info!(path = ?config.path, records = owners.index().len(), "ownership store opened"),
                Err(e) => {
                    tracing::error!(error = %e, "ownership store does not open; creates, drops and renames get 503")
                }
            },
        }
        owners
    }

    /// Without the start-up log lines (the `icegate owners` commands).
    pub fn open_quiet(config: &Config) -> Arc<Self> {
        Arc::new(Self {
            config: config.clone(),
            inner: Mutex::new(Inner { store: None, index: Arc::default(), version: 0, data_version: None }),
        })
    }

    pub fn is_on(&self) -> bool {
        self.config.kind() != StoreKind::Off
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The current index and its version.
    pub fn index(&self) -> Arc<OwnerIndex> {
        self.inner.lock().map(|i| Arc::clone(&i.index)).unwrap_or_default()
    }

    pub fn indexed(&self) -> (Arc<OwnerIndex>, u64) {
        self.inner.lock().map(|i| (Arc::clone(&i.index), i.version)).unwrap_or_default()
    }

    /// Runs `f` on the open store (opening it first if needed) and the index. Blocking.
    fn with_store<T>(
        &self,
        f: impl FnOnce(&mut Embedded, &mut IndexGuard<'_>) -> Result<T, OwnersError>,
    ) -> Result<T, OwnersError> {
        let mut inner = self.inner.lock().map_err(|_| OwnersError::Task("the store lock is poisoned".into()))?;
        let path = match (self.config.kind(), &self.config.path) {
            (StoreKind::Embedded, Some(path)) => path.clone(),
            _ => return Err(OwnersError::Off),
        };
        if inner.store.is_none() {
            let store = Embedded::open(&path, Duration::from_millis(self.config.busy_timeout_ms))?;
            inner.data_version = Some(store.data_version()?);
            inner.index = Arc::new(OwnerIndex::from_records(store.records()?));
            inner.version += 1;
            inner.store = Some(store);
        }
        let Inner { store, index, version, data_version } = &mut *inner;
        let Some(store) = store.as_mut() else { return Err(OwnersError::Off) };
        f(store, &mut IndexGuard { index, version, data_version })
    }

    /// Writes the intents durably; their ids in order. Blocking.
    pub fn begin(&self, intents: &[Intent]) -> Result<Vec<i64>, OwnersError> {
        let now = crate::audit::rfc3339_now();
        self.with_store(|store, _| intents.iter().map(|i| store.begin(i, &now)).collect())
    }

    /// Settles one intent and updates the index to match. Blocking.
    pub fn settle(&self, id: i64, intent: &Intent, settlement: settle::Settlement) -> Result<(), OwnersError> {
        let now = crate::audit::rfc3339_now();
        self.with_store(|store, index| {
            store.settle(id, intent, settlement, &now)?;
            if let settle::Settlement::Happened { direct } = settlement {
                index.update(|ix| apply(ix, intent, direct, &now));
            }
            Ok(())
        })
    }

    /// The intents not yet settled. Blocking.
    pub fn pending(&self) -> Result<Vec<(i64, Intent)>, OwnersError> {
        self.with_store(|store, _| store.pending())
    }

    /// `icegate owners set`. Blocking.
    pub fn set(&self, record: &Record) -> Result<(), OwnersError> {
        self.with_store(|store, index| {
            store.set(record)?;
            index.update(|ix| ix.insert(record.clone()));
            Ok(())
        })
    }

    /// `icegate owners remove`; false when there was no record. Blocking.
    pub fn remove(&self, kind: Kind, full_name: &str) -> Result<bool, OwnersError> {
        self.with_store(|store, index| {
            let removed = store.remove(kind, full_name)?;
            index.update(|ix| drop(ix.remove(kind, full_name)));
            Ok(removed)
        })
    }

    /// Re-reads the file when another process changed it (`icegate owners set`, a second
    /// process on the same file); true when the index changed. Blocking.
    pub fn refresh(&self) -> Result<bool, OwnersError> {
        self.with_store(|store, index| {
            let seen = store.data_version()?;
            if Some(seen) == *index.data_version {
                return Ok(false);
            }
            let fresh = OwnerIndex::from_records(store.records()?);
            *index.data_version = Some(seen);
            index.update(|ix| *ix = fresh);
            Ok(true)
        })
    }
}

/// The index under the store's lock.
struct IndexGuard<'a> {
    index: &'a mut Arc<OwnerIndex>,
    version: &'a mut u64,
    data_version: &'a mut Option<i64>,
}

impl IndexGuard<'_> {
    fn update(&mut self, f: impl FnOnce(&mut OwnerIndex)) {
        f(Arc::make_mut(self.index));
        *self.version += 1;
    }
}

/// What a settled intent that happened does to the index (as [`Embedded::settle`] does to the
/// file).
fn apply(index: &mut OwnerIndex, intent: &Intent, direct: bool, now: &str) {
    match &intent.change {
        // A reconciled create never replaces an owner recorded in the meantime.
        Change::Create(o) if !direct && index.get(o.kind, &o.full_name).is_some() => {}
        Change::Create(o) => index.insert(Record {
            kind: o.kind,
            full_name: o.full_name.clone(),
            owner: intent.user.clone(),
            owner_type: crate::policy::model::OwnerType::User,
            created_at: now.to_owned(),
            source: index::Source::Creation,
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
