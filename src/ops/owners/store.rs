//! The one interface the ownership store's backends implement (the embedded SQLite file,
//! PostgreSQL, and none at all), so that `Owners` holds one `Box<dyn Store>` and says each
//! operation once.
//!
//! The methods return boxed futures: `async fn` in a trait is not object-safe in Rust 1.95, and
//! a generic `Owners<S>` would carry its parameter into the serving state for a choice made
//! once, from the configuration, at start-up. One allocation per store call is nothing next to
//! the write it makes.

use super::change::{Intent, OwnersError, Settlement};
use super::embedded::Embedded;
use super::indexed::{Indexed, poisoned};
use super::postgres::Postgres;
use crate::core::ownership::{Kind, OwnerIndex, Record};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A store operation in progress.
pub(super) type Pending<'a, T> = Pin<Box<dyn Future<Output = Result<T, OwnersError>> + Send + 'a>>;

/// A write's change to the index, given the store's generation after the write (PostgreSQL's;
/// `None` for a store whose writes and index changes happen under one lock).
pub(super) type Apply = Box<dyn FnOnce(Option<i64>) -> Result<(), OwnersError> + Send>;

/// A durable ownership store. A write that changes owners calls its [`Apply`] once the store
/// holds the change: the embedded file under its lock, so that no re-read of the file falls
/// between them; PostgreSQL with the generation, which orders it against re-reads.
pub(super) trait Store: Send + Sync + std::fmt::Debug {
    /// At start-up, before serving (blocking): reads the store at once if that is how it is
    /// read; true when it did.
    fn start(&self, indexed: &Arc<Mutex<Indexed>>) -> Result<bool, OwnersError>;
    fn begin(&self, intents: Vec<Intent>, now: String) -> Pending<'_, Vec<i64>>;
    fn settle(&self, id: i64, intent: Intent, settlement: Settlement, now: String, apply: Apply) -> Pending<'_, ()>;
    fn pending(&self, cutoff: String) -> Pending<'_, Vec<(i64, Intent)>>;
    fn set(&self, record: Record, apply: Apply) -> Pending<'_, ()>;
    fn remove(&self, kind: Kind, full_name: String, apply: Apply) -> Pending<'_, bool>;
    fn forget(&self, id: i64) -> Pending<'_, bool>;
    fn remember_staged(
        &self,
        user: String,
        full_name: String,
        location: String,
        at: (String, String),
    ) -> Pending<'_, ()>;
    fn recall_staged(&self, user: String, full_name: String, now: String) -> Pending<'_, Option<String>>;
    /// Re-reads the store into `indexed` when it changed since the last read; true when it did.
    fn refresh(&self, indexed: Arc<Mutex<Indexed>>) -> Pending<'_, bool>;
    /// The PostgreSQL store, whose notifications the background task listens to.
    fn postgres(&self) -> Option<&Postgres> {
        None
    }
}

/// No store: off by configuration (`why` is `None`), or configured but impossible to set up.
#[derive(Debug)]
pub(super) struct Absent {
    pub(super) why: Option<String>,
}

impl Absent {
    fn refusal(&self) -> OwnersError {
        match &self.why {
            None => OwnersError::Off,
            Some(why) => OwnersError::Store(why.clone()),
        }
    }

    fn refuse<T: Send + 'static>(&self) -> Pending<'_, T> {
        let e = self.refusal();
        Box::pin(async move { Err(e) })
    }
}

fn ready<T: Send + 'static>(value: T) -> Pending<'static, T> {
    Box::pin(async move { Ok(value) })
}

impl Store for Absent {
    fn start(&self, _: &Arc<Mutex<Indexed>>) -> Result<bool, OwnersError> {
        if self.why.is_none() {
            tracing::info!("ownership store is off (`[owners] store = \"off\"`): created objects get no owner");
        }
        Ok(false)
    }

    fn begin(&self, _: Vec<Intent>, _: String) -> Pending<'_, Vec<i64>> {
        self.refuse()
    }

    fn settle(&self, _: i64, _: Intent, _: Settlement, _: String, _: Apply) -> Pending<'_, ()> {
        self.refuse()
    }

    fn pending(&self, _: String) -> Pending<'_, Vec<(i64, Intent)>> {
        ready(Vec::new())
    }

    fn set(&self, _: Record, _: Apply) -> Pending<'_, ()> {
        self.refuse()
    }

    fn remove(&self, _: Kind, _: String, _: Apply) -> Pending<'_, bool> {
        self.refuse()
    }

    fn forget(&self, _: i64) -> Pending<'_, bool> {
        self.refuse()
    }

    /// Nothing to remember without a store; an unusable one is an error.
    fn remember_staged(&self, _: String, _: String, _: String, _: (String, String)) -> Pending<'_, ()> {
        if self.why.is_none() { ready(()) } else { self.refuse() }
    }

    fn recall_staged(&self, _: String, _: String, _: String) -> Pending<'_, Option<String>> {
        ready(None)
    }

    fn refresh(&self, _: Arc<Mutex<Indexed>>) -> Pending<'_, bool> {
        if self.why.is_none() { ready(false) } else { self.refuse() }
    }
}

/// The embedded store's file, opened on first use, and again after a failure to open.
#[derive(Debug)]
pub(super) struct File {
    path: PathBuf,
    busy_timeout: Duration,
    open: Arc<Mutex<Option<Embedded>>>,
}

impl File {
    pub(super) fn new(path: PathBuf, busy_timeout: Duration) -> Self {
        Self { path, busy_timeout, open: Arc::default() }
    }

    /// Runs `f` on the open file, off the runtime's threads.
    fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Embedded) -> Result<T, OwnersError> + Send + 'static,
    ) -> Pending<'_, T> {
        let (path, busy_timeout, open) = (self.path.clone(), self.busy_timeout, Arc::clone(&self.open));
        Box::pin(async move {
            tokio::task::spawn_blocking(move || with_open(&path, busy_timeout, &open, f))
                .await
                .map_err(|e| OwnersError::Task(e.to_string()))?
        })
    }
}

/// Runs `f` on the file open in `slot` (opening it first if needed). Blocking.
fn with_open<T>(
    path: &std::path::Path,
    busy_timeout: Duration,
    slot: &Mutex<Option<Embedded>>,
    f: impl FnOnce(&mut Embedded) -> Result<T, OwnersError>,
) -> Result<T, OwnersError> {
    let mut slot = slot.lock().map_err(poisoned)?;
    if slot.is_none() {
        *slot = Some(Embedded::open(path, busy_timeout)?);
    }
    match slot.as_mut() {
        Some(store) => f(store),
        None => Err(OwnersError::Off),
    }
}

/// Re-reads the file into `indexed` if it changed, under the file's lock so that no write of
/// this process falls between the read and the index it replaces. Blocking.
fn reread(store: &mut Embedded, indexed: &Mutex<Indexed>) -> Result<bool, OwnersError> {
    let seen = indexed.lock().map_err(poisoned)?.read_at;
    let data_version = store.data_version()?;
    if Some(data_version) == seen {
        return Ok(false);
    }
    let index = OwnerIndex::from_records(store.records()?);
    indexed.lock().map_err(poisoned)?.install(index, data_version);
    Ok(true)
}

impl Store for File {
    fn start(&self, indexed: &Arc<Mutex<Indexed>>) -> Result<bool, OwnersError> {
        with_open(&self.path, self.busy_timeout, &self.open, |s| reread(s, indexed))?;
        let records = indexed.lock().map_err(poisoned)?.index.len();
        tracing::info!(path = %self.path.display(), records, "ownership store opened");
        Ok(true)
    }

    fn begin(&self, intents: Vec<Intent>, now: String) -> Pending<'_, Vec<i64>> {
        self.blocking(move |s| intents.iter().map(|i| s.begin(i, &now)).collect())
    }

    fn settle(&self, id: i64, intent: Intent, settlement: Settlement, now: String, apply: Apply) -> Pending<'_, ()> {
        self.blocking(move |s| {
            s.settle(id, &intent, settlement, &now)?;
            apply(None)
        })
    }

    fn pending(&self, cutoff: String) -> Pending<'_, Vec<(i64, Intent)>> {
        self.blocking(move |s| s.pending(&cutoff))
    }

    fn set(&self, record: Record, apply: Apply) -> Pending<'_, ()> {
        self.blocking(move |s| {
            s.set(&record)?;
            apply(None)
        })
    }

    fn remove(&self, kind: Kind, full_name: String, apply: Apply) -> Pending<'_, bool> {
        self.blocking(move |s| {
            let removed = s.remove(kind, &full_name)?;
            apply(None)?;
            Ok(removed)
        })
    }

    fn forget(&self, id: i64) -> Pending<'_, bool> {
        self.blocking(move |s| s.forget(id))
    }

    fn remember_staged(
        &self,
        user: String,
        full_name: String,
        location: String,
        at: (String, String),
    ) -> Pending<'_, ()> {
        self.blocking(move |s| s.remember_staged(&user, &full_name, &location, (&at.0, &at.1)))
    }

    fn recall_staged(&self, user: String, full_name: String, now: String) -> Pending<'_, Option<String>> {
        self.blocking(move |s| s.recall_staged(&user, &full_name, &now))
    }

    fn refresh(&self, indexed: Arc<Mutex<Indexed>>) -> Pending<'_, bool> {
        self.blocking(move |s| reread(s, &indexed))
    }
}

impl Store for Postgres {
    fn start(&self, _: &Arc<Mutex<Indexed>>) -> Result<bool, OwnersError> {
        tracing::info!("ownership store is PostgreSQL; reading it");
        Ok(false)
    }

    fn begin(&self, intents: Vec<Intent>, now: String) -> Pending<'_, Vec<i64>> {
        Box::pin(async move { Postgres::begin(self, &intents, &now).await })
    }

    fn settle(&self, id: i64, intent: Intent, settlement: Settlement, now: String, apply: Apply) -> Pending<'_, ()> {
        Box::pin(async move { apply(Postgres::settle(self, id, &intent, settlement, &now).await?) })
    }

    fn pending(&self, cutoff: String) -> Pending<'_, Vec<(i64, Intent)>> {
        Box::pin(async move { Postgres::pending(self, &cutoff).await })
    }

    fn set(&self, record: Record, apply: Apply) -> Pending<'_, ()> {
        Box::pin(async move { apply(Some(Postgres::set(self, &record).await?)) })
    }

    fn remove(&self, kind: Kind, full_name: String, apply: Apply) -> Pending<'_, bool> {
        Box::pin(async move {
            let (removed, generation) = Postgres::remove(self, kind, &full_name).await?;
            apply(generation)?;
            Ok(removed)
        })
    }

    fn forget(&self, id: i64) -> Pending<'_, bool> {
        Box::pin(async move { Postgres::forget(self, id).await })
    }

    fn remember_staged(
        &self,
        user: String,
        full_name: String,
        location: String,
        at: (String, String),
    ) -> Pending<'_, ()> {
        Box::pin(async move { Postgres::remember_staged(self, &user, &full_name, &location, (&at.0, &at.1)).await })
    }

    fn recall_staged(&self, user: String, full_name: String, now: String) -> Pending<'_, Option<String>> {
        Box::pin(async move { Postgres::recall_staged(self, &user, &full_name, &now).await })
    }

    fn refresh(&self, indexed: Arc<Mutex<Indexed>>) -> Pending<'_, bool> {
        Box::pin(async move {
            let seen = indexed.lock().map_err(poisoned)?.read_at;
            let Some((generation, records)) = self.read_if_changed(seen).await? else { return Ok(false) };
            let mut ix = indexed.lock().map_err(poisoned)?;
            if generation < ix.applied {
                // Older than a change this process already applied: the next read catches up.
                return Ok(false);
            }
            ix.install(OwnerIndex::from_records(records), generation);
            Ok(true)
        })
    }

    fn postgres(&self) -> Option<&Postgres> {
        Some(self)
    }
}
