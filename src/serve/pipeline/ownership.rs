//! The ownership store in the request path: intents written before a create, drop or rename
//! is forwarded (or 503), settled from the upstream's answer before the response is returned,
//! and the reconciliation of ambiguous answers by existence checks upstream.
//!
//! The rule (docs/design.md §4, README "Ownership by creation"):
//! - 2xx: it happened (a drop's 404 too: the object is gone). Other 4xx: it did not.
//! - A 5xx, a timeout or a transport error is ambiguous and is never guessed: icegate asks the
//!   upstream (HEAD with the caller's request headers, or none in the background). A create
//!   happened when the object exists now and did not exist just before the create was
//!   forwarded (checked then, and recorded in the intent); a drop when the object is gone; a
//!   rename when the source is gone and the destination exists. A reconciled create never
//!   replaces an owner recorded in the meantime. When the upstream cannot tell, the intent
//!   stays pending and is reconciled again later.

use crate::core::decide::Existence;
use crate::error::{self, Stop};
use crate::ops::owners::{Change, Intent, Object, OwnersError, Settlement};
use crate::serve::pipeline::state::Shared;
use crate::serve::pipeline::upstream_calls;
use http::{HeaderMap, Response, StatusCode};

use hyper::body::Incoming;
use std::sync::Arc;
use std::time::Duration;

/// Intents written for one request, to settle once it is answered.
#[derive(Debug)]
pub struct Prepared {
    intents: Vec<(i64, Intent)>,
}

/// Publishes the store's current index into the decision state, unless a newer one is there.
pub fn publish(shared: &Shared) {
    let (index, version) = shared.owners.indexed();
    shared.metrics.owners_records.set(i64::try_from(index.len()).unwrap_or(i64::MAX));
    shared.state.owners(&index, version);
}

/// Before forwarding: writes the intents of `changes` durably. An error means the store
/// cannot be written, and the request must be refused (503) without forwarding.
pub async fn prepare(
    shared: &Shared,
    caller: &HeaderMap,
    user: &str,
    changes: Vec<Change>,
) -> Result<Option<Prepared>, OwnersError> {
    if changes.is_empty() || !shared.owners.is_on() {
        return Ok(None);
    }
    let mut intents = Vec::with_capacity(changes.len());
    for change in changes {
        let confirmable = match &change {
            Change::Create(o) => exists(shared, caller, o).await == Some(false),
            _ => false,
        };
        intents.push(Intent { change, user: user.to_owned(), confirmable });
    }
    let intents = shared.owners.begin(intents).await;
    shared.owners.note(intents.is_ok());
    let intents = intents.inspect_err(|_| shared.metrics.owners_event("refused"))?;
    Ok(Some(Prepared { intents }))
}

/// After the upstream answered (or failed to): settles every intent before the response goes
/// back, so a confirmed create is durable when the client learns of it. When the upstream
/// carried a change out but the store cannot record it, the client gets 503 instead of the
/// upstream's success (the intent stays pending, for reconciliation), never a success whose
/// record could be lost.
pub async fn settle(
    shared: &Shared,
    caller: &HeaderMap,
    prepared: Option<Prepared>,
    response: Result<Response<Incoming>, Stop>,
) -> Result<Response<Incoming>, Stop> {
    let Some(prepared) = prepared else { return response };
    let status = response.as_ref().ok().map(Response::status);
    let mut unrecorded = None;
    for (id, intent) in prepared.intents {
        let settlement = match answered(&intent.change, status) {
            Some(s) => Some(s),
            None => reconcile(shared, caller, &intent).await,
        };
        if let Err(e) = finish(shared, id, intent, settlement).await
            && settlement == Some(Settlement::Happened { direct: true })
        {
            unrecorded = Some(e);
        }
    }
    publish(shared);
    match (unrecorded, response) {
        (Some(e), Ok(_)) => {
            shared.metrics.owners_event("unrecorded");
            Err(error::stop(None)(OwnersError::Unrecorded(e.to_string())))
        }
        (_, response) => response,
    }
}

async fn finish(shared: &Shared, id: i64, intent: Intent, settlement: Option<Settlement>) -> Result<(), OwnersError> {
    let Some(settlement) = settlement else {
        tracing::warn!(change = ?intent.change, "ownership change left pending: the upstream could not tell whether it happened");
        shared.metrics.owners_event("pending");
        return Ok(());
    };
    let change = intent.change.clone();
    let settled = shared.owners.settle(id, intent, settlement).await;
    shared.owners.note(settled.is_ok());
    settled.inspect_err(|e| {
        // The intent stays in the store and is reconciled later.
        tracing::error!(error = %e, ?change, "cannot settle an ownership change; it stays pending");
    })
}

/// What the upstream's own answer says; `None` when it is ambiguous.
fn answered(change: &Change, status: Option<StatusCode>) -> Option<Settlement> {
    let status = status?;
    if status.is_success() {
        return Some(Settlement::Happened { direct: true });
    }
    if status == StatusCode::NOT_FOUND && matches!(change, Change::Drop(_)) {
        return Some(Settlement::Happened { direct: true });
    }
    if status.is_client_error() { Some(Settlement::DidNotHappen) } else { None }
}

/// Asks the upstream whether an ambiguous change happened; `None` when it cannot tell.
pub async fn reconcile(shared: &Shared, caller: &HeaderMap, intent: &Intent) -> Option<Settlement> {
    let happened = Settlement::Happened { direct: false };
    match &intent.change {
        Change::Create(o) if !intent.confirmable => {
            tracing::warn!(object = %o.full_name, user = %intent.user, "ambiguous create of an object that was not known to be missing before: no owner recorded");
            Some(Settlement::DidNotHappen)
        }
        Change::Create(o) => {
            exists(shared, caller, o).await.map(|e| if e { happened } else { Settlement::DidNotHappen })
        }
        Change::Drop(o) => exists(shared, caller, o).await.map(|e| if e { Settlement::DidNotHappen } else { happened }),
        Change::Rename { from, to } => match (exists(shared, caller, from).await, exists(shared, caller, to).await) {
            (Some(false), Some(true)) => Some(happened),
            (Some(true), Some(false)) => Some(Settlement::DidNotHappen),
            _ => None,
        },
    }
}

/// Whether `object` exists at the upstream of its catalog; `None` when it cannot tell.
async fn exists(shared: &Shared, caller: &HeaderMap, object: &Object) -> Option<bool> {
    let catalog = object.full_name.split_once('.').map_or(object.full_name.as_str(), |(catalog, _)| catalog);
    let upstream = shared.upstreams.for_catalog(catalog)?;
    match upstream_calls::existence(shared, upstream, caller, &object.path).await {
        Existence::Exists => Some(true),
        Existence::Missing => Some(false),
        Existence::Unknown => None,
    }
}

/// Settles the intents left pending (by ambiguous answers, or by a crash between forwarding
/// and settling). Returns how many remain.
pub async fn reconcile_pending(shared: &Shared) -> usize {
    // Intents younger than this may belong to requests still in flight (here or on another
    // replica); they settle themselves.
    let slowest = shared.upstreams.lanes().iter().map(|l| l.config.response_timeout_ms).max().unwrap_or_default();
    let age = Duration::from_millis(slowest.saturating_mul(2)).max(Duration::from_secs(5));
    let Ok(pending) = shared.owners.pending(age).await else {
        shared.owners.note(false);
        return 0;
    };
    let mut left = 0;
    for (id, intent) in pending {
        let settlement = reconcile(shared, &HeaderMap::new(), &intent).await;
        left += usize::from(settlement.is_none());
        let _ = finish(shared, id, intent, settlement).await;
    }
    shared.owners.note_pending(left);
    publish(shared);
    left
}

/// Picks up changes other processes made to the store (`icegate owners`), then reconciles.
pub async fn poll(shared: &Shared) -> usize {
    let refreshed = shared.owners.refresh().await;
    shared.owners.note(refreshed.is_ok());
    match refreshed {
        Ok(true) => tracing::debug!("ownership store changed elsewhere; index re-read"),
        Ok(false) => {}
        Err(e) => tracing::warn!(error = %e, "cannot read the ownership store; deciding from its last view"),
    }
    reconcile_pending(shared).await
}

/// The background task: [`poll`] at start-up and every `poll_interval_seconds`.
pub async fn run(shared: Arc<Shared>, stopped: impl std::future::Future<Output = ()>) {
    if !shared.owners.is_on() {
        return;
    }
    let every = Duration::from_secs(shared.owners.config().poll_interval_seconds.max(1));
    let changed = shared.owners.postgres().map(|pg| Arc::clone(&pg.changed));
    let listen = async {
        match shared.owners.postgres() {
            Some(pg) => pg.listen(std::future::pending()).await,
            None => std::future::pending().await,
        }
    };
    let work = async {
        loop {
            poll(&shared).await;
            let changed_elsewhere = async {
                match &changed {
                    Some(changed) => changed.notified().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = crate::ops::timer::sleep(&shared.clock, every) => {}
                () = changed_elsewhere => {}
            }
        }
    };
    tokio::select! {
        () = work => {}
        () = listen => {}
        () = stopped => {}
    }
}
