//! The request path (docs/design.md §1), top to bottom in one function: accept → identify → parse
//! → classify → narrow → authorize what the path decides → inspect → authorize what the body
//! adds → forward → rewrite → audit. The first stage that refuses answers; the decision state
//! is loaded once and every stage reads that one value.

use crate::core::credentials::Action;
use crate::core::decide;
use crate::core::iceberg::OperationId;
use crate::core::iceberg::list::{Entry, ListKind};
use crate::core::iceberg::routes::{self, Route};
use crate::core::policy::authorize;
use crate::core::policy::entries::EntryFilter;
use crate::core::sequence;
use crate::error::{self, Stop};
use crate::serve::pipeline::answers::Served;
use crate::serve::pipeline::context::Context;
use crate::serve::pipeline::forwarding::{self, Authorized, Forwarded};
use crate::serve::pipeline::outbound::Outbound;
use crate::serve::pipeline::rewrite::restrict::RestrictError;
use crate::serve::pipeline::rewrite::{self, FollowUp, Needs, Vend};
use crate::serve::pipeline::state::{DecisionState, NoPolicyYet, Shared};
use crate::serve::upstream::forward::Body;
use crate::serve::upstream::upstreams::RouteError;
use crate::serve::{
    pipeline::accept, pipeline::identity, pipeline::rescue, pipeline::tokens, pipeline::unnarrowed, storage::vending,
};
use http::{HeaderValue, Request, Response};
use hyper::body::Incoming;
use std::sync::Arc;

/// Serves one request.
pub async fn handle(shared: Arc<Shared>, request: Request<Incoming>, peer: Arc<identity::Peer>) -> Response<Body> {
    let state = shared.state.load_full();
    let start = shared.audit.start(state.generation, state.snapshot.hash());
    let mut cx = Context::new(state.shadow.is_some());
    // An HTTP/1 refusal sent before the request body was read leaves that body on the
    // connection: hyper then closes it, so the client must be told not to reuse it.
    let body_pending = request.version() < http::Version::HTTP_2 && !hyper::body::Body::is_end_stream(request.body());
    let response = match pipeline(&shared, &state, request, &peer, &mut cx).await {
        Ok(response) => {
            cx.allowed = true;
            response
        }
        Err(stop) => {
            tracing::debug!(status = stop.refusal.status(), reason = %stop.reason, "refused");
            if let Some((event, detail)) = stop.refusal.log.as_deref() {
                tracing::warn!(error = %detail, "{event}");
            }
            cx.decided();
            cx.operation = cx.operation.or(stop.operation);
            cx.reason = Some(stop.reason);
            let (method, target) = cx.request.clone().unwrap_or_default();
            let refusal = stop.refusal.with_explain_hint(
                cx.user.as_deref().unwrap_or_default(),
                &cx.identity_groups,
                cx.active_roles_header.as_deref(),
                &method,
                &target,
            );
            let mut response = rescue::response(&refusal);
            if body_pending && !cx.body_taken {
                response.headers_mut().insert(http::header::CONNECTION, HeaderValue::from_static("close"));
            }
            response
        }
    };
    // audit
    cx.answered(response.status().as_u16());
    crate::serve::pipeline::observe::observe(&shared, &state, &mut cx);
    shared.audit.emit(&cx.record(start));
    crate::serve::pipeline::state::retire(state);
    response
}

async fn pipeline(
    shared: &Shared,
    state: &DecisionState,
    request: Request<Incoming>,
    peer: &identity::Peer,
    cx: &mut Context,
) -> Result<Response<Body>, Stop> {
    let snap = &state.snapshot;
    let settings = &shared.settings;
    // A Gravitino source not read yet: nothing to decide with (docs/design.md §9).
    if state.generation == 0 {
        return Err(error::stop(None)(NoPolicyYet));
    }
    let (mut parts, body) = request.into_parts();

    // accept
    accept::head(&mut parts, peer.framing.seen()).map_err(error::stop(None))?;
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let method = parts.method.as_str().to_owned();
    cx.requested(&method, &target);
    // getToken is how a client gets the credential that identifies it: recognized right after
    // hop-by-hop removal, it skips every check (docs/design.md §4, §5).
    if routes::is_get_token(&method, &target, &settings.base_path) {
        cx.operation = Some(OperationId::GetToken);
        let response = unnarrowed::get_token(shared, parts, body, cx).await?;
        cx.upstream_status = Some(response.status().as_u16());
        return Ok(response);
    }
    accept::check_duplicates(&parts.headers).map_err(error::stop(None))?;

    // identify
    let principal = shared.identity.identify(&parts.headers, peer).await.map_err(error::stop(None))?;
    let roles_header = parts.headers.get("x-gravitino-active-roles").map(HeaderValue::as_bytes);
    cx.identified(&principal, roles_header);

    // parse → classify → narrow → authorize the path → inspect → authorize the body: the one
    // sequence `explain` and shadow run too, asking the upstream what only it knows
    let asked =
        sequence::Request { method: &method, target: &target, principal: &principal, active_roles: roles_header };
    let unwrap_token = |route: &Route, token: &str| shared.tokens.open(&tokens::binding(&principal.user, route), token);
    let mut answers = Served::new(shared, snap, &parts, &principal.user, cx, body);
    let mut decided = sequence::sequence(snap, &state.owners, settings, asked, unwrap_token, &mut answers).await?;
    let (body, sign, lane) = answers.into_forward();
    let (route, catalog) = (&decided.route, decided.catalog.as_str());
    let op = route.operation;
    cx.reason = Some(std::mem::take(&mut decided.reason));
    let Some(narrowed) = &decided.narrowed else {
        return unnarrowed::get_config(shared, snap, &parts, route, &principal.user, cx).await;
    };
    let subject = narrowed.subject(&principal.user).with_owners(&state.owners);
    let request = decide::request_of(route, catalog);
    // the upstream of the catalog, resolved once, when it was classified (docs/design.md §7);
    // classification refused a catalog none serves
    let lane = lane.ok_or(RouteError::Unserved).map_err(error::stop(Some(op)))?;

    // forward
    let action = authorize::credential_scope(snap, &subject, &request)
        .map(|scope| vending::configured_action(&lane.vending.config, scope, lane.config.auth.is_service()));
    cx.credential = action.map(Action::audit);
    let query = route.query.canonical();
    let out = Outbound {
        upstream: lane,
        method: &parts.method,
        path: &route.canonical_path,
        query: &query,
        user: &principal.user,
        active_roles: narrowed.upstream_header.as_deref(),
        strip_delegation: action.is_some_and(Action::strips_delegation),
    };
    // The ownership changes the request makes if the upstream carries it out (docs/design.md §4).
    let changes = crate::ops::owners::plan::changes(route, catalog, decided.body.as_ref());
    let authorized = Authorized { operation: op, out: &out, caller: &parts.headers, body, changes };
    let response = match forwarding::forward(shared, authorized, sign.as_ref(), cx).await? {
        Forwarded::Upstream(response) => response,
        Forwarded::Answered(answer) => return Ok(answer),
    };

    // rewrite
    let mut entries = ListKind::for_operation(op).map(|kind| EntryFilter::new(snap, &subject, catalog, kind));
    let visible = |entry: &Entry| entries.as_mut().is_some_and(|f| f.visible(entry));
    // a trusted reader's loadTable-like answer carries the read restrictions (docs/design.md §8)
    let restrictions =
        decided.restrictions.as_ref().filter(|r| r.trusted && crate::core::restrictions::apply::answers_with_table(op));
    let vend = action.and_then(|action| {
        Vend::of(action, (route, decided.body.as_ref()), (catalog, &principal.user), cx, &parts.headers)
            .map(|v| v.restricted(restrictions))
    });
    if let (Some(applied), None) = (restrictions, &vend) {
        // an answer that would carry restrictions never passes without them (fail closed)
        let unissued = RestrictError::Unissued { operation: op, table: applied.table.clone() };
        return Err(error::stop(Some(op))(unissued));
    }
    let follow_up = FollowUp { caller: &parts.headers, out: &out };
    let needs = match &sign {
        Some(sign) => Needs::Sign(sign),
        None => vend.into(),
    };
    let (response, done) = rewrite::respond(shared, route, needs, response, visible, follow_up, cx).await?;
    cx.credential = done.map(Action::audit).or(cx.credential);
    Ok(response)
}
