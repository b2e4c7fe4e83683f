//! The stages of the pipeline that need no network, in DESIGN.md §1's order: parse, classify,
//! narrow, authorize what the path decides, inspect, authorize what the body adds, and the
//! decisions of the rewrite stage (credential scope, visible list entries). `icegate explain`
//! and the conformance tests run exactly this; upstream facts (does the object exist, the list
//! response) are inputs.

use crate::error::Refusal;
use crate::iceberg::OperationId;
use crate::iceberg::body::{self, BodyError};
use crate::iceberg::list::{self, ListKind};
use crate::iceberg::routes::{self, Classified, Route, RouteOptions};
use crate::policy::authorize::{self, Verdict};
use crate::policy::explain::describe;
use crate::policy::{Scope, Snapshot};
use crate::roles::{self, OwnershipMode, Principal};
use serde_json::value::RawValue;

/// The inspected-body cap's default (`limits.max_body_bytes`, DESIGN.md §7).
pub const DEFAULT_MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// Settings of the listener and process that change a decision.
#[derive(Clone, Debug)]
pub struct Settings {
    pub base_path: String,
    pub namespace_separators: Vec<String>,
    pub max_body_bytes: usize,
    pub ownership: OwnershipMode,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            base_path: String::new(),
            namespace_separators: Vec::new(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            ownership: OwnershipMode::Always,
        }
    }
}

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
    /// The error response icegate would send, when it answers itself.
    pub refusal: Option<Refusal>,
}

impl Outcome {
    fn refused(operation: Option<OperationId>, refusal: Refusal, reason: String) -> Self {
        Self {
            status: refusal.status,
            operation,
            credential: None,
            narrowing_lowered_scope: false,
            reason,
            visible: None,
            upstream_active_roles: None,
            refusal: Some(refusal),
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
            refusal: None,
        }
    }
}

/// Runs the offline stages on `input`; the first failing stage answers (DESIGN.md §5).
pub fn decide(snap: &Snapshot, settings: &Settings, input: &Input<'_>) -> Outcome {
    if routes::is_get_token(input.method, input.target, &settings.base_path) {
        return Outcome::forwarded(OperationId::GetToken, "getToken is forwarded before every check".to_owned());
    }
    // parse: canonical path and query, then the header grammar
    let options = RouteOptions { base_path: &settings.base_path, namespace_separators: &settings.namespace_separators };
    let classified = match routes::classify(input.method, input.target, &options) {
        Ok(c) => c,
        Err(e) => {
            let r = Refusal::from(&e);
            return Outcome::refused(None, r, format!("invalid request target: {e}"));
        }
    };
    if let Classified::Route(route) = &classified
        && route.query.page_token.is_some()
    {
        // explain holds no page-token key, so no token it is given unwraps (DESIGN.md §10).
        let r = Refusal::bad_request("query parameter `pageToken` is not a page token icegate issued");
        return Outcome::refused(None, r.clone(), r.message);
    }
    let header = match roles::parse_header(input.active_roles, settings.ownership) {
        Ok(h) => h,
        Err(e) => return Outcome::refused(None, Refusal::from(&e), e.to_string()),
    };
    // classify
    let Classified::Route(route) = classified else {
        let r = Refusal::unknown_route(input.method);
        return Outcome::refused(None, r, "the route is not recognized".to_owned());
    };
    let op = route.operation;
    let catalog = if op.names_catalog() { snap.catalog_for_prefix(route.prefix.as_deref()) } else { Some("") };
    let Some(catalog) = catalog else {
        let r = Refusal::forbidden("a catalog prefix is required: the policy sets no `default_catalog`");
        return Outcome::refused(None, r.clone(), r.message);
    };
    // narrow: known and enabled user, held roles
    let user = match roles::check_user(snap, &input.principal) {
        Ok(u) => u,
        Err(e) => return Outcome::refused(Some(op), Refusal::from(&e), e.to_string()),
    };
    if op == OperationId::GetConfig {
        return Outcome::forwarded(op, "getConfig needs only a known, enabled user".to_owned());
    }
    let narrowed = match roles::narrow(snap, &input.principal, user, &header, settings.ownership) {
        Ok(n) => n,
        Err(e) => return Outcome::refused(Some(op), Refusal::from(&e), e.to_string()),
    };
    let subject = narrowed.subject(&input.principal.user);
    let request = authorize::Request {
        op,
        catalog,
        namespace: route.namespace.as_ref(),
        name: route.name.as_deref(),
        parent: route.query.parent.as_ref(),
    };
    // authorize what the path decides
    let decision = authorize::authorize_path(snap, &subject, &request);
    let reason = describe(snap, &subject, catalog, &decision);
    match decision.verdict {
        Verdict::Allow => {}
        Verdict::Deny => return Outcome::refused(Some(op), Refusal::denied(&route), reason),
        Verdict::NotFound => return Outcome::refused(Some(op), Refusal::not_found(&route), reason),
        Verdict::DenyUnlessMissing if input.exists => {
            return Outcome::refused(Some(op), Refusal::denied(&route), format!("{reason}; the object exists"));
        }
        Verdict::DenyUnlessMissing => {
            let reason = format!("{reason}; the upstream says the object does not exist");
            return Outcome::refused(Some(op), Refusal::not_found(&route), reason);
        }
    }
    // inspect, then authorize what the body adds
    let mut reason = reason;
    let parsed_body = match inspect(&route, settings, input.body) {
        Ok(b) => b,
        Err(e) => return Outcome::refused(Some(op), Refusal::from(&e), e.to_string()),
    };
    if let Some(body) = &parsed_body {
        let decision = authorize::authorize_body(snap, &subject, &request, body);
        let body_reason = describe(snap, &subject, catalog, &decision);
        if !decision.is_allowed() {
            return Outcome::refused(Some(op), Refusal::denied(&route), body_reason);
        }
        reason = format!("{reason}; {body_reason}");
    }
    // what the rewrite stage would do
    let mut outcome = Outcome::forwarded(op, reason);
    outcome.upstream_active_roles = narrowed.upstream_header.clone();
    if let Some(scope) = authorize::credential_scope(snap, &subject, &request) {
        outcome.credential = Some(scope.narrowed);
        outcome.narrowing_lowered_scope = scope.narrowed < scope.unnarrowed;
    }
    if let (Some(kind), Some(response)) = (ListKind::for_operation(op), input.list_response) {
        let page = list::filter(kind, response, &settings.namespace_separators, |entry| {
            authorize::entry_visible(snap, &subject, catalog, kind, entry)
        });
        match page {
            Ok(page) => outcome.visible = Some(page.visible().map(ToOwned::to_owned).collect()),
            Err(e) => return Outcome::refused(Some(op), Refusal::from(&e), e.to_string()),
        }
    }
    outcome
}

/// The inspect stage: a spec body must be present; an inspected body must fit the cap and
/// parse strictly.
fn inspect(route: &Route, settings: &Settings, bytes: Option<&[u8]>) -> Result<Option<body::Body>, BodyError> {
    let op = route.operation;
    if !op.has_request_body() {
        return Ok(None);
    }
    let Some(bytes) = bytes else { return Err(BodyError::Missing(op.as_str())) };
    if bytes.len() > settings.max_body_bytes {
        return Err(BodyError::TooLarge { limit: settings.max_body_bytes });
    }
    if !op.inspects_request_body() {
        return Ok(None);
    }
    body::inspect(route, bytes, &settings.namespace_separators).map(Some)
}
