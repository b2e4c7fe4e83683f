//! The one sequencer of a decision (docs/design.md §1): parse → classify → narrow → authorize what
//! the path decides → inspect → authorize what the body adds, for the served path, `explain`,
//! shadow decisions and the conformance cases alike. What the snapshot cannot say — the request
//! body as it arrives, and what only the upstream knows — is asked through [`Answers`], which
//! the proxy answers over the network and the offline paths answer from their inputs; the
//! evaluator stays pure and synchronous: the sequencer asks, then decides with the answer.

use crate::core::decide::{self, Collision, PathCheck, Settings, Stop};
pub use crate::core::decide::{BodyIn, Existence};
use crate::core::iceberg::body::{Body, SignRequest};
use crate::core::iceberg::routes::Route;
use crate::core::iceberg::{Namespace, OperationId, TableIdent};
use crate::core::ownership::OwnerIndex;
use crate::core::policy::authorize::{self, Facts};
use crate::core::policy::{Snapshot, Subject};
use crate::core::refused::{CoreRefusal, StopAnswer};
use crate::core::restrictions::{Applied, apply, cover};
use crate::core::roles::{Narrowed, Principal};
use std::future::Future;

/// What the sequencer cannot know from the snapshot and the request line. Each question is
/// asked at most once per request, at the stage that needs the answer.
pub trait Answers {
    /// How a stop is answered: the core's refusals, and those of the questions below.
    type Refusal: StopAnswer;

    /// The request body, once the path is authorized; an operation whose body is not inspected
    /// may answer [`BodyIn::Streamed`] without reading it.
    fn body(
        &mut self,
        op: OperationId,
        limit: usize,
    ) -> impl Future<Output = Result<BodyIn, Stop<Self::Refusal>>> + Send;

    /// Whether the object `route` names is missing upstream (the lookup step of 403-or-404).
    fn missing(&mut self, route: &Route) -> impl Future<Output = bool> + Send;

    /// The locations the upstream assigned to the caller's stage-creates of `tables`; a table
    /// it says nothing about is left out.
    fn staged_locations(
        &mut self,
        route: &Route,
        catalog: &str,
        narrowed: &Narrowed,
        tables: &[TableIdent],
    ) -> impl Future<Output = Vec<(TableIdent, String)>> + Send;

    /// The directory of each namespace in `namespaces` (docs/design.md §4 location rule): its
    /// `location` property as the upstream reports it, else the parent of where the upstream
    /// places a new table there. A stop (503) when the upstream can answer neither.
    fn namespace_locations(
        &mut self,
        route: &Route,
        catalog: &str,
        narrowed: &Narrowed,
        namespaces: &[&Namespace],
    ) -> impl Future<Output = Result<Vec<(Namespace, String)>, Stop<Self::Refusal>>> + Send;

    /// The metadata of each of `tables` (loadTable's `metadata`), for a commit that changes the
    /// current schema of a restricted table (docs/design.md §8 "A restriction keeps covering
    /// what it covered"); a table it says nothing about is left out, and the decision says the
    /// upstream's metadata decides. A stop (503) when the upstream cannot answer.
    fn table_metadata(
        &mut self,
        route: &Route,
        catalog: &str,
        narrowed: &Narrowed,
        tables: &[TableIdent],
    ) -> impl Future<Output = Result<Vec<(TableIdent, serde_json::Value)>, Stop<Self::Refusal>>> + Send;

    /// Whether an object of another kind already has the name `collision` is about to create.
    fn collision(&mut self, route: &Route, collision: &Collision) -> impl Future<Output = Existence> + Send;

    /// Whether the storage a sign request reaches belongs to its table (docs/design.md §8).
    fn sign_location(
        &mut self,
        route: &Route,
        narrowed: &Narrowed,
        request: &SignRequest,
    ) -> impl Future<Output = Result<(), Stop<Self::Refusal>>> + Send;

    /// Told the classified route, before any later stage can refuse (for the audit line).
    fn classified(&mut self, _route: &Route, _catalog: &str) {}

    /// Told the narrowed caller (for the audit line).
    fn narrowed(&mut self, _narrowed: &Narrowed) {}

    /// Told the inspected body (for the audit line).
    fn inspected(&mut self, _route: &Route, _catalog: &str, _body: &Body) {}
}

/// One request as the sequencer sees it.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub method: &'a str,
    /// The raw request target: path and optional query string.
    pub target: &'a str,
    pub principal: &'a Principal,
    /// The raw `X-Gravitino-Active-Roles` value; `None` when absent.
    pub active_roles: Option<&'a [u8]>,
}

/// A request every stage allowed, and what the later stages need of it.
#[derive(Debug)]
pub struct Decided {
    pub route: Route,
    pub catalog: String,
    /// `None` for getConfig, which skips the held-roles check.
    pub narrowed: Option<Narrowed>,
    /// Why the path check allowed it.
    pub reason: String,
    /// Why the body check allowed it, when there was a body to check.
    pub body_reason: Option<String>,
    pub body: Option<Body>,
    /// The read restrictions that apply to a table operation (docs/design.md §8): only a caller
    /// trusted to enforce them gets here with restrictions on an operation that reads data.
    pub restrictions: Option<Applied>,
}

/// Runs the stages on `request`; the first stage that refuses answers (docs/design.md §5).
/// `unwrap_token` turns a page token the caller sent back into the upstream's.
pub async fn sequence<A: Answers>(
    snap: &Snapshot,
    owners: &OwnerIndex,
    settings: &Settings,
    request: Request<'_>,
    unwrap_token: impl FnOnce(&Route, &str) -> Option<String>,
    answers: &mut A,
) -> Result<Decided, Stop<A::Refusal>> {
    // parse
    let (parsed, header) =
        decide::parse_stage(snap, settings, request.method, request.target, request.active_roles, unwrap_token)
            .map_err(Stop::lift)?;

    // classify (the route is kept, not copied, for the stages after the decision)
    let (_, catalog) = decide::classify_stage(snap, request.method, parsed.as_ref()).map_err(Stop::lift)?;
    let catalog = catalog.to_owned();
    let Some(route) = parsed else { return Err(decide::unknown_route(request.method).lift()) };
    let op = route.operation;
    answers.classified(&route, &catalog);
    decide::served_stage(settings, &route, &catalog).map_err(Stop::lift)?;

    // narrow
    let Some(narrowed) = decide::narrow_stage(snap, settings, request.principal, &header, op).map_err(Stop::lift)?
    else {
        let reason = "getConfig needs only a known, enabled user".to_owned();
        return Ok(Decided::new(route, catalog, None, reason));
    };
    answers.narrowed(&narrowed);
    let subject = narrowed.subject(&request.principal.user).with_owners(owners);
    let objects = decide::request_of(&route, &catalog);

    // authorize what the path decides, with the lookup step of 403-or-404
    let reason = match decide::authorize_path_stage(snap, &subject, &route, &objects).map_err(Stop::lift)? {
        PathCheck::Allow(reason) => reason,
        PathCheck::AskExistence(reason) => {
            let missing = answers.missing(&route).await;
            return Err(decide::existence_answer(&route, reason, missing).lift());
        }
    };

    // read restrictions the path alone decides (docs/design.md §8)
    let mut restrictions = None;
    if apply::table_of(&route, None).is_some() && route.operation != OperationId::SignRequest {
        restrictions = restricted(snap, &route, None, &catalog, &narrowed, &request.principal.user)?;
    }

    // inspect
    let rules = decide::name_rules(snap, settings, &catalog);
    let received = answers.body(op, settings.max_body_bytes).await?;
    let parsed = decide::inspect(&route, settings, &rules, &received).map_err(|e| decide::body_stop(e, op).lift())?;
    let Some(body) = parsed else {
        let mut decided = Decided::new(route, catalog, Some(narrowed), reason);
        decided.restrictions = restrictions;
        return Ok(decided);
    };
    answers.inspected(&route, &catalog, &body);

    // authorize what the body adds: what only the upstream knows is asked first
    let questions = decide::questions(snap, &subject, &objects, &body);
    let staged = match questions.staged_locations.is_empty() {
        true => Vec::new(),
        false => answers.staged_locations(&route, &catalog, &narrowed, &questions.staged_locations).await,
    };
    let facts = Facts { staged_locations: &staged, namespace_locations: &[] };
    let directories = authorize::namespace_directories_needed(snap, &subject, &objects, &body, facts);
    let directories = match directories.is_empty() {
        true => Vec::new(),
        false => answers.namespace_locations(&route, &catalog, &narrowed, &directories).await?,
    };
    let facts = Facts { namespace_locations: &directories, ..facts };
    let mut body_reason =
        decide::authorize_body_stage(snap, &subject, &route, &objects, &body, facts).map_err(Stop::lift)?;
    // a restriction keeps covering what it covered (`TOP` can change the policy anyway)
    if !snap.restrictions().is_empty() {
        let caller = (&subject, &narrowed);
        if let Some(note) = keep_covering(snap, &route, &catalog, caller, &body, answers).await? {
            body_reason.push_str("; ");
            body_reason.push_str(&note);
        }
    }
    for collision in &questions.collisions {
        let existence = answers.collision(&route, collision).await;
        if let Some(stop) = decide::collision_answer(&route, collision, existence) {
            return Err(stop.lift());
        }
    }
    // read restrictions of the table a body names, or of a sign request that reads
    if matches!(op, OperationId::SignRequest | OperationId::CreateTable | OperationId::RegisterTable) {
        restrictions = restricted(snap, &route, Some(&body), &catalog, &narrowed, &request.principal.user)?;
    }
    if let Body::SignRequest(sign) = &body {
        answers.sign_location(&route, &narrowed, sign).await?;
    }
    let mut decided = Decided::new(route, catalog, Some(narrowed), reason);
    decided.restrictions = restrictions;
    decided.body_reason = Some(body_reason);
    decided.body = Some(body);
    Ok(decided)
}

impl Decided {
    fn new(route: Route, catalog: String, narrowed: Option<Narrowed>, reason: String) -> Self {
        Self { route, catalog, narrowed, reason, body_reason: None, body: None, restrictions: None }
    }
}

/// The read restrictions that apply to the request's table; a stop when one applies to an
/// operation that reads data and the caller is not trusted to enforce it (docs/design.md §8).
/// Active roles lift restrictions, so narrowing can only add them; ownership lifts none.
fn restricted<R: StopAnswer>(
    snap: &Snapshot,
    route: &Route,
    body: Option<&Body>,
    catalog: &str,
    narrowed: &Narrowed,
    user: &str,
) -> Result<Option<Applied>, Stop<R>> {
    let Some((namespace, table)) = apply::table_of(route, body) else { return Ok(None) };
    let Some(applied) = apply::applicable(snap, (catalog, namespace, table), user, &narrowed.groups, &narrowed.active)
    else {
        return Ok(None);
    };
    if applied.trusted || !apply::reads_data(route.operation, body) {
        return Ok(Some(applied));
    }
    let refusal = CoreRefusal::Restricted { operation: route.operation, table: format!("{namespace}.{table}") };
    let labels: Vec<String> = applied.entries.iter().map(|e| e.label.clone()).collect();
    let reason = format!(
        "{}: read restrictions apply ({}) and the caller is not a restriction enforcer",
        refusal,
        labels.join(", ")
    );
    let mut stop = Stop::new(refusal, reason, Some(route.operation)).lift();
    stop.restrictions = Some(Box::new(applied));
    Err(stop)
}

/// The rule that a restriction keeps covering what it covered (docs/design.md §8): a rename that
/// would leave one of the source's restrictions behind, a `remove-schemas` on a restricted table,
/// and a commit that moves a restricted name onto another field are refused, unless the caller
/// has `TOP`, which is evaluated only then. `Some` note when the upstream's metadata decides and
/// none was given (offline).
async fn keep_covering<A: Answers>(
    snap: &Snapshot,
    route: &Route,
    catalog: &str,
    (subject, narrowed): (&Subject<'_>, &Narrowed),
    body: &Body,
    answers: &mut A,
) -> Result<Option<String>, Stop<A::Refusal>> {
    let op = route.operation;
    let top = || authorize::has_top(snap, subject, catalog, &[]);
    let uncovered = |table: &dyn std::fmt::Display, why: String| -> Stop<A::Refusal> {
        let refusal = CoreRefusal::Uncovered { operation: op, table: table.to_string() };
        let reason = format!("{refusal}: {why}");
        Stop::new(refusal, reason, Some(op)).lift()
    };
    if let (OperationId::RenameTable, Body::Rename { source, destination }) = (op, body) {
        let left = cover::left_behind(snap, catalog, source, destination);
        if left.is_empty() || top() {
            return Ok(None);
        }
        let why = format!("read restrictions on `{source}` ({}) would not apply to `{destination}`", left.join(", "));
        return Err(uncovered(source, why));
    }
    let pending = match cover::commit(snap, catalog, route, body) {
        cover::Commit::Clear => return Ok(None),
        _ if top() => return Ok(None),
        cover::Commit::Removes { table, labels } => {
            let why = format!(
                "`remove-schemas` on a table with read restrictions ({}) erases the schema history they are kept with",
                labels.join(", ")
            );
            return Err(uncovered(&table, why));
        }
        cover::Commit::Ask(pending) => pending,
    };
    let tables: Vec<TableIdent> = pending.iter().map(|p| p.table.clone()).collect();
    let known = answers.table_metadata(route, catalog, narrowed, &tables).await?;
    let mut undecided = Vec::new();
    for p in &pending {
        let Some((_, metadata)) = known.iter().find(|(t, _)| *t == p.table) else {
            undecided.push(format!("`{}`", p.table));
            continue;
        };
        match cover::moved(p, metadata) {
            Ok(None) => {}
            Ok(Some(moved)) => {
                let now = moved.now.map_or_else(|| "no field".to_owned(), |id| format!("field {id}"));
                let why = format!(
                    "read restrictions ({}) name `{}`, which reads {now} now and would read field {}, while it has \
                     named another field before",
                    p.labels.join(", "),
                    moved.column,
                    moved.after
                );
                return Err(uncovered(&p.table, why));
            }
            Err(cover::Unreadable) => {
                let refusal = CoreRefusal::TableMetadataUnknown { table: p.table.to_string() };
                return Err(Stop::new(
                    refusal,
                    "the upstream's table metadata names no schemas icegate can read",
                    Some(op),
                )
                .lift());
            }
        }
    }
    Ok((!undecided.is_empty()).then(|| {
        format!(
            "the upstream's table metadata decides whether this commit moves a restricted column of {} onto another \
             field (explain decides it with --table-metadata)",
            undecided.join(", ")
        )
    }))
}

/// Runs a sequence whose answers are all at hand (offline, or recorded from a served request)
/// to its end without a runtime: such a future is ready at its first poll. `None` if it was
/// not, which an answer that really waits would cause.
pub fn at_once<F: Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(output) => Some(output),
        std::task::Poll::Pending => None,
    }
}
