//! The request path (DESIGN.md §1), top to bottom in one function: accept → identify → parse
//! → classify → narrow → authorize what the path decides → inspect → authorize what the body
//! adds → forward → rewrite. The first stage that refuses answers; the decision state is
//! loaded once and every stage reads that one value.

use crate::core::credentials::Action;
use crate::core::decide;
use crate::core::iceberg::OperationId;
use crate::core::iceberg::list::ListKind;
use crate::core::iceberg::routes::{self, Route};
use crate::core::policy::authorize;
use crate::core::sequence;
use crate::error::{self, Refusal, Stop};
use crate::ops::audit;
use crate::serve::answers::Served;
use crate::serve::forward::{Body, ForwardError};
use crate::serve::inspect::RequestBody;
use crate::serve::outbound::Outbound;
use crate::serve::state::{DecisionState, Shared};
use crate::serve::upstream_calls::{self, send, send_to, table_locations};
use crate::serve::{accept, identity, rewrite, vending};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use std::sync::Arc;

/// Serves one request.
pub async fn handle(shared: Arc<Shared>, request: Request<Incoming>, peer: Arc<identity::Peer>) -> Response<Body> {
    let state = shared.state.load_full();
    let mut record = shared.audit.start(state.generation, state.snapshot.hash());
    // An HTTP/1 refusal sent before the request body was read leaves that body on the
    // connection: hyper then closes it, so the client must be told not to reuse it.
    let body_pending = request.version() < http::Version::HTTP_2 && !hyper::body::Body::is_end_stream(request.body());
    if state.shadow.is_some() {
        record.shadow = Some(crate::ops::shadow::Capture::default());
    }
    let response = match pipeline(&shared, &state, request, &peer, &mut record).await {
        Ok(response) => {
            record.decision = "allow";
            response
        }
        Err(stop) => {
            tracing::debug!(status = stop.refusal.status, reason = %stop.reason, "refused");
            if let Some((event, detail)) = stop.refusal.log.as_deref() {
                tracing::warn!(error = %detail, "{event}");
            }
            record.decided();
            record.operation = record.operation.or(stop.operation.map(OperationId::as_str));
            record.reason = Some(stop.reason);
            let (method, target) = record.request.clone().unwrap_or_default();
            let refusal = stop.refusal.with_explain_hint(
                record.user.as_deref().unwrap_or_default(),
                &record.identity_groups,
                record.active_roles_header.as_deref(),
                &method,
                &target,
            );
            let mut response = error::response(&refusal);
            if body_pending && !record.body_taken {
                response.headers_mut().insert(http::header::CONNECTION, HeaderValue::from_static("close"));
            }
            response
        }
    };
    // audit
    record.status = response.status().as_u16();
    record.duration_ms = record.started.map_or(0.0, |s| s.elapsed().as_secs_f64() * 1000.0);
    shared.audit.emit(&record);
    crate::serve::observe::observe(&shared, &state, &mut record);
    response
}

async fn pipeline(
    shared: &Shared,
    state: &DecisionState,
    request: Request<Incoming>,
    peer: &identity::Peer,
    record: &mut audit::Record,
) -> Result<Response<Body>, Stop> {
    let snap = &state.snapshot;
    let settings = &shared.settings;
    let (mut parts, body) = request.into_parts();

    // accept
    accept::head(&mut parts, peer.framing.seen()).map_err(|e| Stop::plain(Refusal::from(&e), None))?;
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let method = parts.method.as_str().to_owned();
    record.requested(&method, &target);
    // getToken is how a client gets the credential that identifies it: recognized right after
    // hop-by-hop removal, it skips every check (DESIGN.md §4, §5).
    if routes::is_get_token(&method, &target, &settings.base_path) {
        record.operation = Some(OperationId::GetToken.as_str());
        let response = forward_token_request(shared, parts, body).await?;
        record.upstream_status = Some(response.status().as_u16());
        return Ok(response);
    }
    accept::check_duplicates(&parts.headers).map_err(|e| Stop::plain(Refusal::from(&e), None))?;

    // identify
    let principal =
        shared.identity.identify(&parts.headers, peer).await.map_err(|e| Stop::plain(Refusal::from(&e), None))?;
    let roles_header = parts.headers.get("x-gravitino-active-roles").map(HeaderValue::as_bytes);
    record.identified(&principal, roles_header);

    // parse → classify → narrow → authorize the path → inspect → authorize the body: the one
    // sequence `explain` and shadow run too, asking the upstream what only it knows
    let asked =
        sequence::Request { method: &method, target: &target, principal: &principal, active_roles: roles_header };
    let unwrap_token = |route: &Route, token: &str| shared.tokens.open(&token_binding(&principal.user, route), token);
    let mut answers = Served::new(shared, snap, &parts, &principal.user, record, body);
    let mut decided = sequence::sequence(snap, &state.owners, settings, asked, unwrap_token, &mut answers).await?;
    let (body, signer) = answers.into_forward();
    let (route, catalog) = (&decided.route, decided.catalog.as_str());
    let op = route.operation;
    record.reason = Some(std::mem::take(&mut decided.reason));
    let Some(narrowed) = &decided.narrowed else {
        return get_config(shared, &parts, route, &principal.user, record).await;
    };
    let subject = narrowed.subject(&principal.user).with_owners(&state.owners);
    let request = decide::request_of(route, catalog);
    // The ownership changes the request makes if the upstream carries it out (DESIGN.md §4).
    let ownership = crate::ops::owners::plan::changes(route, catalog, decided.body.as_ref());

    // forward
    let action = authorize::credential_scope(snap, &subject, &request).map(|scope| {
        let service = shared.config.upstream.auth == crate::config::UpstreamAuth::Service;
        vending::action(shared.config.credentials.mode, scope, service)
    });
    record.credential = action.map(Action::audit);
    let query = route.query.canonical();
    let out = Outbound {
        method: &parts.method,
        path: &route.canonical_path,
        query: &query,
        user: &principal.user,
        active_roles: narrowed.upstream_header.as_deref(),
        strip_delegation: action.is_some_and(Action::strips_delegation),
    };
    let upstream_body = body.map_or_else(crate::serve::forward::empty, RequestBody::into_upstream);
    // the ownership store's intents are durable before anything is forwarded, else 503
    let intents = crate::serve::ownership::prepare(shared, &parts.headers, &principal.user, ownership)
        .await
        .map_err(|e| Stop::plain(Refusal::from(&e), Some(op)))?;
    record.decided();
    let sent = std::time::Instant::now();
    let response = send_to(shared, &parts.headers, &out, signer.as_ref(), upstream_body).await;
    let response = crate::serve::ownership::settle(shared, &parts.headers, intents, response).await?;
    record.upstream_took = Some(sent.elapsed());
    record.upstream_status = Some(response.status().as_u16());

    // rewrite
    let mut entries = ListKind::for_operation(op)
        .map(|kind| crate::core::policy::entries::EntryFilter::new(snap, &subject, catalog, kind));
    let visible = |entry: &crate::core::iceberg::list::Entry| entries.as_mut().is_some_and(|f| f.visible(entry));
    // What vending needs, built only for a credential-bearing operation (most requests are not).
    let created = action.map(|_| vending::Created::of(route, decided.body.as_ref()));
    let (active_roles, table_name) = match &created {
        Some(created) => {
            let object = record.objects.first().map_or("", |o| o.full_name.as_str());
            (record.active_roles.clone().unwrap_or_default(), created.table_name(object))
        }
        None => (Vec::new(), String::new()),
    };
    let vend = action.zip(created.as_ref()).and_then(|(action, created)| {
        Some(Vend {
            action,
            table_path: created.table_path.as_deref()?,
            staged: created.staged.as_ref().map(|table| (catalog, table)),
            caller: vending::Caller {
                user: &principal.user,
                active_roles: &active_roles,
                table: &table_name,
                asked: asks_for_vended_credentials(&parts.headers),
            },
        })
    });
    let (response, done) = rewrite_response(
        shared,
        route,
        vend,
        response,
        visible,
        FollowUp { caller: &parts.headers, out: &out },
        record,
    )
    .await?;
    record.credential = done.map(Action::audit).or(record.credential);
    Ok(response)
}

/// getConfig: only the user check applies; no active set was enforced, so none is sent.
async fn get_config(
    shared: &Shared,
    parts: &http::request::Parts,
    route: &Route,
    user: &str,
    record: &mut audit::Record,
) -> Result<Response<Body>, Stop> {
    let query = route.query.canonical();
    let out = Outbound {
        method: &parts.method,
        path: &route.canonical_path,
        query: &query,
        user,
        active_roles: None,
        strip_delegation: false,
    };
    record.decided();
    let response = send(shared, &parts.headers, &out, crate::serve::forward::empty()).await?;
    record.upstream_status = Some(response.status().as_u16());
    if response.status().is_success() {
        shared.health.accepted_config_query(out.query);
    }
    let follow_up = FollowUp { caller: &parts.headers, out: &out };
    let (response, _) = rewrite_response(shared, route, None, response, |_| true, follow_up, record).await?;
    Ok(response)
}

/// How the rewrite stage asks the upstream again (further list pages, a table's locations):
/// with the caller's headers and the forwarded request's settings.
#[derive(Clone, Copy, Debug)]
struct FollowUp<'a> {
    caller: &'a HeaderMap,
    out: &'a Outbound<'a>,
}

/// What the rewrite stage does with a credential-bearing response.
#[derive(Clone, Copy, Debug)]
struct Vend<'a> {
    action: Action,
    /// The table's path after the base path (for a create, the table it creates).
    table_path: &'a str,
    /// A stage-create's catalog and table: the location in the answer is remembered.
    staged: Option<(&'a str, &'a crate::core::iceberg::TableIdent)>,
    caller: vending::Caller<'a>,
}

fn asks_for_vended_credentials(headers: &HeaderMap) -> bool {
    headers
        .get_all("x-iceberg-access-delegation")
        .iter()
        .any(|v| v.to_str().is_ok_and(|v| v.split(',').any(|m| m.trim().eq_ignore_ascii_case("vended-credentials"))))
}

/// Binds a page token to the caller and the list it came from.
fn token_binding(user: &str, route: &Route) -> String {
    let ns = route.namespace.as_ref().map(ToString::to_string).unwrap_or_default();
    let parent = route.query.parent.as_ref().map(ToString::to_string).unwrap_or_default();
    format!("{user}\n{}\n{}\n{ns}\n{parent}", route.prefix.as_deref().unwrap_or_default(), route.operation)
}

/// getToken goes upstream as it came, after hop-by-hop removal (DESIGN.md §4).
async fn forward_token_request(
    shared: &Shared,
    parts: http::request::Parts,
    body: Incoming,
) -> Result<Response<Body>, Stop> {
    let (path, query) = parts.uri.path_and_query().map_or(("/", ""), |pq| (pq.path(), pq.query().unwrap_or_default()));
    let path = path.strip_prefix(shared.settings.base_path.as_str()).unwrap_or(path);
    let uri = shared.upstream.uri(path, query).map_err(|e| Stop::plain(Refusal::from(&e), None))?;
    let mut request = Request::builder().method(parts.method.clone()).uri(uri);
    for (name, value) in &parts.headers {
        if name != http::header::HOST {
            request = request.header(name, value);
        }
    }
    let request = request
        .body(crate::serve::forward::streamed(body))
        .map_err(|e| Stop::plain(Refusal::from(&ForwardError::Rebuild(e.to_string())), None))?;
    let response = shared.upstream.send(request).await.map_err(|e| Stop::plain(Refusal::from(&e), None))?;
    let (mut head, body) = response.into_parts();
    if head.status.is_redirection() && head.status != StatusCode::NOT_MODIFIED {
        return Err(Stop::plain(Refusal::upstream_redirect(head.status.as_u16()), None));
    }
    accept::strip_hop_by_hop(&mut head.headers);
    head.headers.insert(http::header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(Response::from_parts(head, crate::serve::forward::streamed(body)))
}

/// Stage `rewrite`.
async fn rewrite_response(
    shared: &Shared,
    route: &Route,
    vend: Option<Vend<'_>>,
    response: Response<Incoming>,
    visible: impl FnMut(&crate::core::iceberg::list::Entry) -> bool,
    follow_up: FollowUp<'_>,
    record: &mut audit::Record,
) -> Result<(Response<Body>, Option<Action>), Stop> {
    let FollowUp { caller, out } = follow_up;
    let op = route.operation;
    let (mut head, body) = response.into_parts();
    accept::strip_hop_by_hop(&mut head.headers);
    if vend.is_some() || op == OperationId::GetConfig {
        head.headers.insert(http::header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    let fail = |e: rewrite::RewriteError| Stop::plain(Refusal::from(&e), Some(op));
    // A redirect could send the client around icegate; `304 Not Modified` has no body.
    if head.status.is_redirection() && head.status != StatusCode::NOT_MODIFIED {
        return Err(Stop::plain(Refusal::upstream_redirect(head.status.as_u16()), Some(op)));
    }
    // Every success of an inspected operation is inspected, whatever its 2xx status (an
    // upstream answering 203 or 206 gets no pass for it, DESIGN.md §7).
    let success = head.status.is_success();
    let kind = ListKind::for_operation(op);
    let rewritten: Option<Bytes> = if head.status.is_client_error() || head.status.is_server_error() {
        let (bytes, replaced) = rewrite::strip_stack(rewrite::collect(body).await.map_err(fail)?, head.status);
        if replaced {
            head.headers.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        Some(bytes)
    } else if let (Some(kind), true) = (kind, success) {
        let first = rewrite::collect(body).await.map_err(fail)?;
        if let Some(capture) = &mut record.shadow {
            capture.list_response = Some(first.clone());
        }
        let fetch = |token: String, size: Option<u32>| {
            let mut route = route.clone();
            route.query.page_token = Some(token);
            if size.is_some() {
                route.query.page_size = size;
            }
            async move {
                let query = route.query.canonical();
                let next = Outbound { query: &query, ..*out };
                let empty = crate::serve::forward::empty();
                let response = send(shared, caller, &next, empty)
                    .await
                    .map_err(|s| rewrite::RewriteError::Read(s.refusal.message))?;
                let status = response.status().as_u16();
                Ok((status, rewrite::collect(response.into_body()).await?))
            }
        };
        let read = rewrite::ListRead {
            kind,
            separators: &shared.settings.namespace_separators,
            page_size: route.query.page_size,
            max_pages: shared.config.lists.max_upstream_pages,
        };
        let seal = |t: &str| shared.tokens.seal(&token_binding(out.user, route), t);
        let filtered = rewrite::filter_list(read, first, visible, fetch, seal).await.map_err(fail)?;
        record.hidden_entries = filtered.hidden;
        Some(Bytes::from(filtered.body))
    } else if op == OperationId::GetConfig && success {
        let bytes = rewrite::collect(body).await.map_err(fail)?;
        Some(rewrite::clean_config(&bytes, &shared.config).map_err(fail)?)
    } else if let (Some(vend), true) = (vend, success) {
        let bytes = rewrite::collect(body).await.map_err(fail)?;
        if let Some((catalog, table)) = vend.staged
            && let Some(location) = crate::serve::staged::assigned_location(&bytes)
        {
            upstream_calls::remember_staged(shared, vend.caller.user, catalog, table, location).await;
        }
        let lookup = Outbound { path: vend.table_path, query: "", strip_delegation: true, ..*out };
        let locations = || table_locations(shared, caller, &lookup);
        let (chunks, done) = shared
            .vending
            .rewrite(op, bytes, vend.action, vend.caller, vend.table_path, locations)
            .await
            .map_err(|e| Stop::plain(Refusal::from(&e), Some(op)))?;
        head.headers.insert(http::header::CONTENT_LENGTH, HeaderValue::from(chunks.len()));
        return Ok((Response::from_parts(head, crate::serve::forward::ChunkBody(chunks).boxed()), Some(done)));
    } else {
        let passed = Response::from_parts(head, crate::serve::forward::streamed(body));
        return Ok((passed, None));
    };
    let bytes = rewritten.unwrap_or_default();
    head.headers.insert(http::header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    Ok((Response::from_parts(head, crate::serve::forward::full(bytes)), None))
}
