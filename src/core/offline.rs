//! The offline driver of the decision sequence: `icegate explain`, the conformance cases and
//! shadow decisions run [`crate::core::sequence`] here with the upstream's facts as inputs
//! (docs/design.md §10), and read what icegate would do, the rewrite stage's decisions included.

use crate::core::decide::{BodyIn, Collision, Existence, Settings, Stop, request_of};
use crate::core::iceberg::body::SignRequest;
use crate::core::iceberg::list::{self, ListKind};
use crate::core::iceberg::routes::{self, Route};
use crate::core::iceberg::{Namespace, OperationId, TableIdent};
use crate::core::ownership::OwnerIndex;
use crate::core::policy::entries::EntryFilter;
use crate::core::policy::{Scope, Snapshot, authorize};
use crate::core::refused::{CoreRefusal, StopAnswer};
use crate::core::roles::{Narrowed, Principal};
use crate::core::sequence::{self, Answers};
use serde_json::value::RawValue;

/// One request, as far as the offline stages see it.
#[derive(Clone, Debug)]
pub struct Input<'a> {
    pub method: &'a str,
    /// The raw request target: path and optional query string.
    pub target: &'a str,
    pub principal: Principal,
    /// The raw `X-Gravitino-Active-Roles` value; `None` when absent.
    pub active_roles: Option<&'a [u8]>,
    pub body: Option<&'a [u8]>,
    /// Whether the named object exists upstream (for 403-or-404).
    pub exists: bool,
    /// The upstream's list response, for list operations.
    pub list_response: Option<&'a [u8]>,
    /// The directory of the table's namespace, as the upstream would report it (docs/design.md
    /// §4 location rule); without it, a location chosen by a caller without `TOP` is refused.
    pub namespace_location: Option<&'a str>,
    /// The metadata of the table a commit changes, as the upstream's loadTable reports it (its
    /// `metadata`, docs/design.md §8 "A restriction keeps covering what it covered"); without
    /// it, the decision says that the upstream's metadata decides.
    pub table_metadata: Option<&'a serde_json::Value>,
}

/// What icegate would do. `status` 200 means "forwarded".
#[derive(Debug)]
pub struct Outcome {
    pub status: u16,
    pub operation: Option<OperationId>,
    /// The narrowed credential scope, for a forwarded credential-bearing operation.
    pub credential: Option<Scope>,
    /// Whether the scope was lowered by narrowing (credentials would be stripped, §8).
    pub narrowing_lowered_scope: bool,
    pub reason: String,
    /// Kept list entries, raw, when a list response was given and the request was forwarded.
    pub visible: Option<Vec<Box<RawValue>>>,
    /// The active-roles value sent upstream; `None` for no header.
    pub upstream_active_roles: Option<String>,
    /// The read restrictions that apply to a table operation, whether it was forwarded or
    /// refused for them (docs/design.md §8).
    pub restrictions: Option<crate::core::restrictions::Applied>,
}

impl Outcome {
    fn refused(operation: Option<OperationId>, status: u16, reason: String) -> Self {
        Self {
            status,
            operation,
            credential: None,
            narrowing_lowered_scope: false,
            reason,
            visible: None,
            upstream_active_roles: None,
            restrictions: None,
        }
    }

    fn forwarded(operation: OperationId, reason: String) -> Self {
        Self {
            status: 200,
            operation: Some(operation),
            credential: None,
            narrowing_lowered_scope: false,
            reason,
            visible: None,
            upstream_active_roles: None,
            restrictions: None,
        }
    }
}

/// Runs the stages on `input` as the proxy would, answering what only the upstream knows as
/// docs/design.md §10 says `explain` assumes; the first failing stage answers (docs/design.md §5).
/// Without an ownership store (`explain`, the conformance cases): only the policy's owners.
pub fn decide(snap: &Snapshot, settings: &Settings, input: &Input<'_>) -> Outcome {
    decide_with_owners(snap, OwnerIndex::empty(), settings, input)
}

/// [`decide`] with the ownership store's index merged into the policy's owners.
pub fn decide_with_owners(snap: &Snapshot, owners: &OwnerIndex, settings: &Settings, input: &Input<'_>) -> Outcome {
    let body = match input.body {
        Some(bytes) => BodyIn::Read(bytes::Bytes::copy_from_slice(bytes)),
        None => BodyIn::Absent,
    };
    let mut answers = Offline {
        body,
        exists: input.exists,
        namespace_location: input.namespace_location.map(str::to_owned),
        table_metadata: input.table_metadata.cloned(),
    };
    decide_with_answers(snap, owners, settings, input, &mut answers)
}

/// [`decide_with_owners`] with `answers` for what only the upstream knows (a shadow decision
/// answers from what its served request learned). Every answer must be at hand.
pub fn decide_with_answers<A: Answers>(
    snap: &Snapshot,
    owners: &OwnerIndex,
    settings: &Settings,
    input: &Input<'_>,
    answers: &mut A,
) -> Outcome {
    match run(snap, owners, settings, input, answers) {
        Ok(outcome) => outcome,
        Err(stop) => {
            let mut outcome = Outcome::refused(stop.operation, stop.refusal.status(), stop.reason);
            outcome.restrictions = stop.restrictions.map(|r| *r);
            outcome
        }
    }
}

fn run<A: Answers>(
    snap: &Snapshot,
    owners: &OwnerIndex,
    settings: &Settings,
    input: &Input<'_>,
    answers: &mut A,
) -> Result<Outcome, Stop<A::Refusal>> {
    if routes::is_get_token(input.method, input.target, &settings.base_path) {
        return Ok(Outcome::forwarded(OperationId::GetToken, "getToken is forwarded before every check".to_owned()));
    }
    let request = sequence::Request {
        method: input.method,
        target: input.target,
        principal: &input.principal,
        active_roles: input.active_roles,
    };
    // explain holds no page-token key, so no token it is given unwraps (docs/design.md §10).
    let decided = sequence::at_once(sequence::sequence(snap, owners, settings, request, |_, _| None, answers))
        .ok_or_else(|| Stop::plain(CoreRefusal::Unanswered, None).lift())??;
    let op = decided.route.operation;
    let reason = match &decided.body_reason {
        Some(body) => format!("{}; {body}", decided.reason),
        None => decided.reason,
    };
    let mut outcome = Outcome::forwarded(op, reason);
    outcome.restrictions = decided.restrictions;
    let Some(narrowed) = &decided.narrowed else { return Ok(outcome) };
    // what the rewrite stage would do
    let subject = narrowed.subject(&input.principal.user).with_owners(owners);
    let request = request_of(&decided.route, &decided.catalog);
    outcome.upstream_active_roles = narrowed.upstream_header.clone();
    if let Some(scope) = authorize::credential_scope(snap, &subject, &request) {
        outcome.credential = Some(scope.narrowed);
        outcome.narrowing_lowered_scope = scope.narrowed < scope.unnarrowed;
    }
    if let (Some(kind), Some(response)) = (ListKind::for_operation(op), input.list_response) {
        let mut entries = EntryFilter::new(snap, &subject, &decided.catalog, kind);
        let page = list::filter(kind, response, &settings.namespace_separators, |entry| entries.visible(entry))
            .map_err(|e| Stop::plain(CoreRefusal::List(e), Some(op)).lift())?;
        outcome.visible = Some(page.to_raw_values().map_err(|e| Stop::plain(CoreRefusal::List(e), Some(op)).lift())?);
    }
    Ok(outcome)
}

/// The answers of `explain` and the conformance cases (docs/design.md §10): the body, the
/// existence of the named object, the directory of the table's namespace and the metadata of
/// a committed table are inputs; no
/// location was assigned, nothing collides, and no sign request's location is checked.
#[derive(Clone, Debug)]
pub struct Offline {
    pub body: BodyIn,
    pub exists: bool,
    /// The directory of every namespace asked about (`--namespace-location`); none known when
    /// absent.
    pub namespace_location: Option<String>,
    /// The metadata of every table asked about (`--table-metadata`); none known when absent.
    pub table_metadata: Option<serde_json::Value>,
}

impl Answers for Offline {
    type Refusal = CoreRefusal;

    async fn body(&mut self, _op: OperationId, _limit: usize) -> Result<BodyIn, Stop<CoreRefusal>> {
        Ok(self.body.clone())
    }

    async fn missing(&mut self, _route: &Route) -> bool {
        !self.exists
    }

    async fn staged_locations(
        &mut self,
        _route: &Route,
        _catalog: &str,
        _narrowed: &Narrowed,
        _tables: &[TableIdent],
    ) -> Vec<(TableIdent, String)> {
        Vec::new()
    }

    async fn namespace_locations(
        &mut self,
        _route: &Route,
        _catalog: &str,
        _narrowed: &Narrowed,
        namespaces: &[&Namespace],
    ) -> Result<Vec<(Namespace, String)>, Stop<CoreRefusal>> {
        let Some(location) = &self.namespace_location else { return Ok(Vec::new()) };
        Ok(namespaces.iter().map(|n| ((*n).clone(), location.clone())).collect())
    }

    async fn table_metadata(
        &mut self,
        _route: &Route,
        _catalog: &str,
        _narrowed: &Narrowed,
        tables: &[TableIdent],
    ) -> Result<Vec<(TableIdent, serde_json::Value)>, Stop<CoreRefusal>> {
        let Some(metadata) = &self.table_metadata else { return Ok(Vec::new()) };
        Ok(tables.iter().map(|t| (t.clone(), metadata.clone())).collect())
    }

    async fn collision(&mut self, _route: &Route, _collision: &Collision) -> Existence {
        Existence::Missing
    }

    async fn sign_location(
        &mut self,
        _route: &Route,
        _narrowed: &Narrowed,
        _request: &SignRequest,
    ) -> Result<(), Stop<CoreRefusal>> {
        Ok(())
    }
}
