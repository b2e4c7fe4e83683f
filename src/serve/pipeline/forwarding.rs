//! Stage `forward` (docs/design.md §1): the authorized request goes upstream, or, for a sign
//! request icegate signs itself, is answered here. Everything it needs is in its arguments —
//! the request as authorized ([`Authorized`]) and its sign plan — so no state travels beside
//! it: the ownership changes are made durable first (else 503), the body carries what a sign
//! request must bind, and the answer is settled in the ownership store before it is returned.

use crate::core::iceberg::OperationId;
use crate::error::{self, Stop};
use crate::ops::owners::Change;
use crate::serve::pipeline::context::Context;
use crate::serve::pipeline::inspect::RequestBody;
use crate::serve::pipeline::outbound::{Outbound, send_to};
use crate::serve::pipeline::ownership;
use crate::serve::pipeline::signing;
use crate::serve::pipeline::state::Shared;
use crate::serve::upstream::forward::{self, Body};
use http::{HeaderMap, Response};
use hyper::body::Incoming;

/// The request as authorized: what goes upstream and with what.
#[derive(Debug)]
pub struct Authorized<'a> {
    /// The operation, which every refusal of the stage names.
    pub operation: OperationId,
    /// Where it goes and as whom (path, query, active roles, delegation).
    pub out: &'a Outbound<'a>,
    /// The caller's headers.
    pub caller: &'a HeaderMap,
    /// The body the inspect stage left (`None`: none).
    pub body: Option<RequestBody>,
    /// The ownership changes it makes if the upstream carries it out.
    pub changes: Vec<Change>,
}

/// What the stage gives the rewrite stage.
#[derive(Debug)]
pub enum Forwarded {
    /// The upstream's answer, to be checked and rewritten.
    Upstream(Response<Incoming>),
    /// icegate's own answer (a sign request signed locally): final.
    Answered(Response<Body>),
}

/// Forwards `request`, as `sign` says when it is a sign request.
pub async fn forward(
    shared: &Shared,
    request: Authorized<'_>,
    sign: Option<&signing::Forward>,
    cx: &mut Context,
) -> Result<Forwarded, Stop> {
    let Authorized { operation, out, caller, body, changes } = request;
    let operation = Some(operation);
    // icegate as the signer: the authorized request is signed here, never forwarded
    if let Some(local) = sign.and_then(|s| s.local.as_ref()) {
        cx.decided();
        let cacheable = sign.is_some_and(signing::Forward::cacheable);
        let signer = out.upstream.vending.local_signer();
        let answer = crate::serve::storage::local_signer::respond(signer, local, cacheable)
            .await
            .map_err(error::stop(operation))?;
        return Ok(Forwarded::Answered(answer.map(forward::full)));
    }
    // a batch delete's sign request carries the hash of the body that was checked (docs/design.md §8)
    let (body, bound_headers) = match sign {
        Some(sign) => sign.bound(body, caller).map_err(|r| Stop::plain(r, operation))?,
        None => (body, None),
    };
    let upstream_body = body.map_or_else(forward::Outgoing::empty, RequestBody::into_upstream);
    // durable in the ownership store before anything is forwarded, else 503 (docs/design.md §4)
    let intents = ownership::prepare(shared, caller, out.user, changes).await.map_err(error::stop(operation))?;
    cx.decided();
    let sent = std::time::Instant::now();
    let to = sign.and_then(|s| s.to.as_ref());
    let response = send_to(shared, bound_headers.as_ref().unwrap_or(caller), out, to, upstream_body).await;
    let response = ownership::settle(shared, caller, intents, response).await?;
    cx.forwarded(sent, response.status());
    Ok(Forwarded::Upstream(response))
}
