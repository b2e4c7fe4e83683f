//! The two operations forwarded without an active set (docs/design.md §4, §5): getToken, how a
//! client gets the credential that identifies it, forwarded as it came with every check
//! skipped; and getConfig, where only the user check applies and the answer is cleaned.

use crate::core::iceberg::OperationId;
use crate::core::iceberg::routes::Route;
use crate::error::{self, Refusal, Stop};
use crate::serve::pipeline::accept;
use crate::serve::pipeline::context::Context;
use crate::serve::pipeline::outbound::Outbound;
use crate::serve::pipeline::outbound::send;
use crate::serve::pipeline::rewrite::{self, FollowUp};
use crate::serve::pipeline::state::Shared;
use crate::serve::upstream::forward::{self, Body, ForwardError};
use http::{HeaderValue, Request, Response, StatusCode};
use hyper::body::Incoming;

/// getToken goes to the default upstream as it came, after hop-by-hop removal; without a
/// default upstream it is off (403).
pub async fn get_token(
    shared: &Shared,
    parts: http::request::Parts,
    body: Incoming,
    cx: &mut Context,
) -> Result<Response<Body>, Stop> {
    let upstream = shared.upstreams.for_token().map_err(error::stop(Some(OperationId::GetToken)))?;
    cx.upstream = Some(std::sync::Arc::clone(&upstream.name));
    let (path, query) = parts.uri.path_and_query().map_or(("/", ""), |pq| (pq.path(), pq.query().unwrap_or_default()));
    let path = path.strip_prefix(shared.settings.base_path.as_str()).unwrap_or(path);
    let uri = upstream.client.uri(path, query).map_err(error::stop(None))?;
    let mut request = Request::builder().method(parts.method.clone()).uri(uri);
    for (name, value) in &parts.headers {
        if name != http::header::HOST {
            request = request.header(name, value);
        }
    }
    let request = request
        .body(forward::streamed(body))
        .map_err(|e| ForwardError::Rebuild(e.to_string()))
        .map_err(error::stop(None))?;
    let response = upstream.client.send_as_is(request).await.map_err(error::stop(None))?;
    let (mut head, body) = response.into_parts();
    if head.status.is_redirection() && head.status != StatusCode::NOT_MODIFIED {
        return Err(Stop::plain(Refusal::upstream_redirect(head.status.as_u16()), None));
    }
    accept::strip_hop_by_hop(&mut head.headers);
    head.headers.insert(http::header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(Response::from_parts(head, forward::streamed(body)))
}

/// getConfig once the user check allowed it: no active set was enforced, so none is sent. It
/// goes to the upstream that answers its `warehouse` (docs/design.md §7).
pub async fn get_config(
    shared: &Shared,
    snap: &crate::core::policy::Snapshot,
    parts: &http::request::Parts,
    route: &Route,
    user: &str,
    cx: &mut Context,
) -> Result<Response<Body>, Stop> {
    let query = route.query.canonical();
    // `warehouse` is a scalar: classification refused it repeated
    let warehouse = route.query.pairs.iter().find(|(k, _)| k == "warehouse").map(|(_, v)| v.as_str());
    let upstream = shared.upstreams.for_config(warehouse).map_err(error::stop(Some(route.operation)))?;
    cx.upstream = Some(std::sync::Arc::clone(&upstream.name));
    let out = Outbound {
        upstream,
        method: &parts.method,
        path: &route.canonical_path,
        query: &query,
        user,
        active_roles: None,
        strip_delegation: false,
    };
    cx.decided();
    let sent = std::time::Instant::now();
    let response = send(shared, &parts.headers, &out, forward::Outgoing::empty()).await?;
    cx.forwarded(sent, response.status());
    if response.status().is_success() {
        upstream.accepted_config_query(out.query);
    }
    let follow_up = FollowUp { caller: &parts.headers, out: &out };
    let (response, _) =
        rewrite::respond(shared, route, rewrite::Needs::Config(snap), response, |_| true, follow_up, cx).await?;
    Ok(response)
}
