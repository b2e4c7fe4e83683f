//! The stages of the pipeline that need no network, in docs/design.md §1's order: parse, classify,
//! narrow, authorize what the path decides, inspect, authorize what the body adds, and the
//! questions only the upstream can answer. The stages run in [`crate::core::sequence`]'s
//! order, for the proxy and offline alike; the offline driver (`icegate explain`, shadow
//! decisions, the conformance tests) is [`crate::core::offline`].

use crate::core::iceberg::body::{self, BodyError};
use crate::core::iceberg::names::NameRules;
use crate::core::iceberg::routes::{self, Classified, Route, RouteOptions};
use crate::core::iceberg::{Namespace, OperationId, TableIdent};
use crate::core::policy::Snapshot;
use crate::core::policy::Subject;
use crate::core::policy::authorize::{self, Verdict};
use crate::core::policy::explain::describe;
use crate::core::refused::{CoreRefusal, StopAnswer};
use crate::core::roles::{self, ActiveRoles, Narrowed, OwnershipMode, Principal};
use bytes::Bytes;

/// The inspected-body cap's default (`limits.max_body_bytes`, docs/design.md §7).
pub const DEFAULT_MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// Settings of the listener and process that change a decision.
#[derive(Clone, Debug)]
pub struct Settings {
    pub base_path: String,
    pub namespace_separators: Vec<String>,
    pub max_body_bytes: usize,
    pub ownership: OwnershipMode,
    /// The catalogs some upstream serves (docs/design.md §7 "One gate, many catalogs"); `None`:
    /// every catalog (one upstream, or no upstream at all, as `explain` decides).
    pub served_catalogs: Option<Vec<String>>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            base_path: String::new(),
            namespace_separators: Vec::new(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            ownership: OwnershipMode::Always,
            served_catalogs: None,
        }
    }
}

/// What the upstream said about whether an object exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existence {
    Exists,
    Missing,
    /// Any other answer, or none: icegate cannot tell.
    Unknown,
}

/// A request body as the inspect stage received it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum BodyIn {
    /// The request carried none.
    #[default]
    Absent,
    /// Present but not read: an operation whose body is not inspected streams it, whatever its
    /// size (docs/design.md §1).
    Streamed,
    /// Read, for an operation whose body is inspected.
    Read(Bytes),
}

/// A stage that stopped the request: the answer, why (for explain and audit), and the
/// operation when classification had already named it. The core's stages answer with
/// [`CoreRefusal`]; a sequence answers with its [`Answers`]' answer type, which holds those too.
#[derive(Debug)]
pub struct Stop<R = CoreRefusal> {
    pub refusal: R,
    pub reason: String,
    pub operation: Option<OperationId>,
    /// The read restrictions that applied, when they are why the request stopped (for
    /// `explain`, docs/design.md §8).
    pub restrictions: Option<Box<crate::core::restrictions::Applied>>,
}

impl<R: StopAnswer> Stop<R> {
    pub fn new(refusal: R, reason: impl Into<String>, operation: Option<OperationId>) -> Self {
        Self { refusal, reason: reason.into(), operation, restrictions: None }
    }

    pub fn plain(refusal: R, operation: Option<OperationId>) -> Self {
        let reason = refusal.message();
        Self { refusal, reason, operation, restrictions: None }
    }
}

impl Stop {
    /// This stop, answered with `R`.
    pub fn lift<R: StopAnswer>(self) -> Stop<R> {
        Stop {
            refusal: R::from(self.refusal),
            reason: self.reason,
            operation: self.operation,
            restrictions: self.restrictions,
        }
    }
}

/// Stage `parse`: the canonical path and query, the page token, then the header grammar.
/// `Ok(None)` is a valid target that names no known route (refused at `classify`).
/// `unwrap_token` turns a page token the caller sent back into the upstream's, or says it
/// does not unwrap.
pub fn parse_stage(
    snap: &Snapshot,
    settings: &Settings,
    method: &str,
    target: &str,
    active_roles: Option<&[u8]>,
    unwrap_token: impl FnOnce(&Route, &str) -> Option<String>,
) -> Result<(Option<Route>, ActiveRoles), Stop> {
    let folds = |prefix: Option<&str>| snap.catalog_for_prefix(prefix).is_some_and(|c| snap.folds_names(c));
    let options = RouteOptions {
        base_path: &settings.base_path,
        namespace_separators: &settings.namespace_separators,
        folding: Some(routes::Folding(&folds)),
        prefixes: Some(snap.path_prefixes()),
    };
    let classified = routes::classify(method, target, &options).map_err(|e| {
        let reason = format!("invalid request target: {e}");
        Stop::new(CoreRefusal::Target(e), reason, None)
    })?;
    let mut route = match classified {
        Classified::Route(r) => Some(r),
        Classified::Unrecognized => None,
    };
    if let Some(r) = &mut route
        && let Some(token) = r.query.page_token.take()
    {
        let Some(upstream) = unwrap_token(r, &token) else {
            return Err(Stop::plain(CoreRefusal::PageToken, None));
        };
        r.query.page_token = Some(upstream);
    }
    let header =
        roles::parse_header(active_roles, settings.ownership).map_err(|e| Stop::plain(CoreRefusal::Header(e), None))?;
    Ok((route, header))
}

/// The refusal of a target that names no known route.
pub fn unknown_route(method: &str) -> Stop {
    Stop::new(CoreRefusal::UnknownRoute { method: method.to_owned() }, "the route is not recognized", None)
}

/// Stage `classify`: a known route, and the catalog it names.
pub fn classify_stage<'a>(
    snap: &'a Snapshot,
    method: &str,
    route: Option<&'a Route>,
) -> Result<(&'a Route, &'a str), Stop> {
    let Some(route) = route else { return Err(unknown_route(method)) };
    let catalog =
        if route.operation.names_catalog() { snap.catalog_for_prefix(route.prefix.as_deref()) } else { Some("") };
    match (catalog, &route.prefix) {
        (Some(c), _) => Ok((route, c)),
        (None, Some(prefix)) => Err(Stop::plain(CoreRefusal::UnknownPrefix { prefix: prefix.clone() }, None)),
        (None, None) => Err(Stop::plain(CoreRefusal::NoCatalog, None)),
    }
}

/// The end of stage `classify` on the served path: a catalog no upstream serves is refused
/// before anything is asked of an upstream (docs/design.md §7).
pub fn served_stage(settings: &Settings, route: &Route, catalog: &str) -> Result<(), Stop> {
    let Some(served) = &settings.served_catalogs else { return Ok(()) };
    if !route.operation.names_catalog() || served.iter().any(|c| c == catalog) {
        return Ok(());
    }
    Err(Stop::plain(CoreRefusal::Unserved { prefix: route.prefix.clone() }, Some(route.operation)))
}

/// Stage `narrow`: a known, enabled user, then its held and active roles. `Ok(None)` for
/// getConfig, which skips the held-roles check.
pub fn narrow_stage(
    snap: &Snapshot,
    settings: &Settings,
    principal: &Principal,
    header: &ActiveRoles,
    op: OperationId,
) -> Result<Option<Narrowed>, Stop> {
    let user = roles::check_user(snap, principal).map_err(|e| Stop::plain(CoreRefusal::Narrow(e), Some(op)))?;
    if op == OperationId::GetConfig {
        return Ok(None);
    }
    roles::narrow(snap, principal, user, header, settings.ownership)
        .map(Some)
        .map_err(|e| Stop::plain(CoreRefusal::Narrow(e), Some(op)))
}

/// What the path check decided.
#[derive(Debug)]
pub enum PathCheck {
    /// Go on; the reason so far.
    Allow(String),
    /// Denied, unless the upstream says the object does not exist (then 404).
    AskExistence(String),
}

/// Stage `authorize what the path decides`.
pub fn authorize_path_stage(
    snap: &Snapshot,
    subject: &Subject<'_>,
    route: &Route,
    request: &authorize::Request<'_>,
) -> Result<PathCheck, Stop> {
    let decision = authorize::authorize_path(snap, subject, request);
    let reason = describe(snap, subject, request.catalog, &decision);
    let op = Some(route.operation);
    match decision.verdict {
        Verdict::Allow => Ok(PathCheck::Allow(reason)),
        Verdict::Deny if request.purge => {
            let object = denied_object(route);
            Err(Stop::new(CoreRefusal::Purge { object }, reason, op))
        }
        Verdict::Deny => Err(Stop::new(denied(route), reason, op)),
        Verdict::NotFound => Err(Stop::new(not_found(route), reason, op)),
        Verdict::DenyUnlessMissing => Ok(PathCheck::AskExistence(reason)),
    }
}

/// The answer to an [`PathCheck::AskExistence`], once the upstream was asked.
pub fn existence_answer(route: &Route, reason: String, missing: bool) -> Stop {
    if missing {
        Stop::new(
            not_found(route),
            format!("{reason}; the upstream says the object does not exist"),
            Some(route.operation),
        )
    } else {
        Stop::new(
            denied(route),
            format!("{reason}; the object exists or its existence is unknown"),
            Some(route.operation),
        )
    }
}

/// Stage `authorize what the body adds`; returns the reason when allowed. `facts` are what
/// the upstream said that the decision reads (none offline).
pub fn authorize_body_stage(
    snap: &Snapshot,
    subject: &Subject<'_>,
    route: &Route,
    request: &authorize::Request<'_>,
    body: &body::Body,
    facts: authorize::Facts<'_>,
) -> Result<String, Stop> {
    let decision = authorize::authorize_body(snap, subject, request, body, facts);
    let reason = describe(snap, subject, request.catalog, &decision);
    if decision.is_allowed() {
        return Ok(reason);
    }
    if let authorize::Reason::Location { refusal, .. } = &decision.reason {
        return Err(Stop::new(CoreRefusal::location(refusal), reason, Some(route.operation)));
    }
    if let (authorize::Reason::RenameRule { .. }, body::Body::Rename { source, destination }) = (&decision.reason, body)
    {
        return Err(Stop::new(
            CoreRefusal::Rename { operation: route.operation, from: source.to_string(), to: destination.to_string() },
            reason,
            Some(route.operation),
        ));
    }
    // The object the body named that failed (a transaction's table, a rename's destination)
    // is what the caller knows; the path alone may name none.
    let failed = match &decision.reason {
        authorize::Reason::Checks(done) => done.last().map(|c| c.object),
        _ => None,
    };
    let refusal = match failed {
        _ if let body::Body::CreateNamespace { namespace, .. } = body => {
            CoreRefusal::Denied { operation: route.operation, object: namespace.to_string() }
        }
        // a move is checked on the table's namespace, but the caller named the table
        _ if matches!(body, body::Body::UpdateTable(_)) => denied(route),
        Some(authorize::Object::Table(i) | authorize::Object::View(i) | authorize::Object::TableOrView(i)) => {
            let mut name = i.namespace.join(".");
            name.push('.');
            name.push_str(i.name);
            CoreRefusal::Denied { operation: route.operation, object: name }
        }
        Some(authorize::Object::Namespace(levels)) if !levels.is_empty() => {
            CoreRefusal::Denied { operation: route.operation, object: levels.join(".") }
        }
        _ => denied(route),
    };
    Err(Stop::new(refusal, reason, Some(route.operation)))
}

/// A denied operation on the object the path names.
fn denied(route: &Route) -> CoreRefusal {
    CoreRefusal::Denied { operation: route.operation, object: denied_object(route) }
}

/// The object the path names, as a denial quotes it.
fn denied_object(route: &Route) -> String {
    let mut object = String::new();
    if let Some(ns) = &route.namespace {
        object.push_str(&ns.to_string());
    }
    if let Some(name) = &route.name {
        if !object.is_empty() {
            object.push('.');
        }
        object.push_str(name);
    }
    object
}

/// The 404 of the hidden-or-missing table or view the path names.
fn not_found(route: &Route) -> CoreRefusal {
    let ns = route.namespace.as_ref().map(ToString::to_string).unwrap_or_default();
    let name = route.name.as_deref().unwrap_or_default();
    CoreRefusal::NotFound { view: route.operation == OperationId::LoadView, object: format!("{ns}.{name}") }
}

/// The objects of a route, for the evaluator.
pub fn request_of<'a>(route: &'a Route, catalog: &'a str) -> authorize::Request<'a> {
    authorize::Request {
        op: route.operation,
        catalog,
        namespace: route.namespace.as_ref(),
        name: route.name.as_deref(),
        parent: route.query.parent.as_ref(),
        purge: route.operation == OperationId::DropTable
            && route.query.pairs.iter().any(|(k, v)| k == "purgeRequested" && v.eq_ignore_ascii_case("true")),
    }
}

/// The inspect stage's refusal of a body.
pub fn body_stop(error: BodyError, op: OperationId) -> Stop {
    Stop::plain(CoreRefusal::Body(error), Some(op))
}

/// The answer to a collision question (docs/design.md §4 "One name, one kind, one level"): a name
/// that is both a table (or view) and a child namespace of one namespace shares one storage
/// directory, so creating the second is 409; when the upstream cannot say, 503 and nothing is
/// forwarded. `None` when nothing collides.
pub fn collision_answer(route: &Route, collision: &Collision, existence: Existence) -> Option<Stop> {
    let (created, existing) = match collision {
        Collision::NamespaceOverTableOrView(namespace) => {
            (format!("namespace `{namespace}`"), "a table or view of that name")
        }
        Collision::ObjectOverNamespace(ident) => (format!("`{ident}`"), "a namespace of that name"),
    };
    let refusal = match existence {
        Existence::Missing => return None,
        Existence::Exists => CoreRefusal::Collides { created, existing },
        Existence::Unknown => CoreRefusal::CollisionUnknown { created },
    };
    Some(Stop::plain(refusal, Some(route.operation)))
}

/// How the names of `catalog` are read (docs/design.md §2, §7).
pub fn name_rules<'a>(snap: &Snapshot, settings: &'a Settings, catalog: &str) -> NameRules<'a> {
    NameRules { separators: &settings.namespace_separators, fold_case: snap.folds_names(catalog) }
}

/// The inspect stage: a spec body must be present; an inspected body must fit the cap and
/// parse strictly. A body that is not inspected streams through whatever its size.
pub fn inspect(
    route: &Route,
    settings: &Settings,
    rules: &NameRules<'_>,
    received: &BodyIn,
) -> Result<Option<body::Body>, BodyError> {
    let op = route.operation;
    if !op.has_request_body() {
        return Ok(None);
    }
    let bytes = match received {
        BodyIn::Absent => return Err(BodyError::Missing(op.as_str())),
        _ if !op.inspects_request_body() => return Ok(None),
        BodyIn::Streamed => return Err(BodyError::Missing(op.as_str())),
        BodyIn::Read(bytes) => bytes,
    };
    if bytes.len() > settings.max_body_bytes {
        return Err(BodyError::TooLarge { limit: settings.max_body_bytes });
    }
    body::inspect(route, bytes, rules).map(Some)
}

/// What the upstream must say before a body's request is forwarded: the tables whose staged
/// create's commit sets a location (the location the upstream assigned decides whether that is
/// an explicit location, docs/design.md §4 updateTable), and the names whose creation could collide
/// with an object of another kind in the same storage directory ("One name, one kind, one
/// level"). Offline (`explain`) nothing is asked: no location was assigned, nothing collides.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Questions {
    pub staged_locations: Vec<TableIdent>,
    pub collisions: Vec<Collision>,
}

/// A name a request is about to create, and what must not exist already for it to be created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Collision {
    /// A new namespace: no table or view of its parent may have its last level's name.
    NamespaceOverTableOrView(Namespace),
    /// A new table or view (or a rename's destination): no child namespace may have its name.
    ObjectOverNamespace(TableIdent),
}

/// The questions `body` raises (see [`Questions`]). A staged create's location is asked only
/// for a caller who may create that table: for anyone else the answer could not change the
/// decision, and icegate asks by sending a stage-create on the caller's behalf.
pub fn questions(
    snap: &Snapshot,
    subject: &Subject<'_>,
    request: &authorize::Request<'_>,
    body: &body::Body,
) -> Questions {
    let route_ns = request.namespace;
    use body::Body as B;
    let mut q = Questions::default();
    let in_path = |name: &str| TableIdent::new(route_ns?.clone(), name.to_owned()).ok();
    let may_create = |t: &TableIdent| authorize::may_create_table(snap, subject, request.catalog, t.namespace.levels());
    match body {
        B::CreateNamespace { namespace, .. } if namespace.parent().is_some() => {
            q.collisions.push(Collision::NamespaceOverTableOrView(namespace.clone()));
        }
        B::CreateTable { name, .. } | B::RegisterTable { name } | B::CreateView { name } | B::RegisterView { name } => {
            q.collisions.extend(in_path(name).map(Collision::ObjectOverNamespace));
        }
        B::Rename { destination, .. } => q.collisions.push(Collision::ObjectOverNamespace(destination.clone())),
        B::UpdateTable(update) if update.asserts_create && !update.set_locations.is_empty() => {
            q.staged_locations.extend(request.name.and_then(in_path).filter(may_create));
        }
        B::CommitTransaction(changes) => {
            let staged = changes.iter().filter(|c| c.update.asserts_create && !c.update.set_locations.is_empty());
            q.staged_locations.extend(staged.map(|c| c.identifier.clone()).filter(may_create));
        }
        _ => {}
    }
    q
}
