//! The requests icegate sends upstream on its own behalf or the caller's, outside the one
//! forwarded request: the existence HEAD of 403-or-404, and the table load that tells a sign or
//! credentials check where the table's data lives.

use crate::decide::Stop;
use crate::error::Refusal;
use crate::forward::Body;
use crate::iceberg::routes::Route;
use crate::outbound::{self, Outbound};
use crate::state::Shared;
use crate::{rewrite, vending};
use http::{HeaderMap, Response, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use std::sync::Arc;

/// Sends one request upstream: `out` says what, `caller` the headers it came with.
pub async fn send(
    shared: &Shared,
    caller: &HeaderMap,
    out: &Outbound<'_>,
    body: Body,
) -> Result<Response<Incoming>, Stop> {
    let request = outbound::build(shared, caller, out, body).map_err(|e| Stop::plain(Refusal::from(&e), None))?;
    shared.upstream.send(request).await.map_err(|e| Stop::plain(Refusal::from(&e), None))
}

/// The lookup step of 403-or-404: a HEAD for the object; only a 404 means missing.
pub async fn upstream_says_missing(shared: &Shared, caller: &HeaderMap, route: &Route) -> bool {
    let head = http::Method::HEAD;
    let out = Outbound {
        method: &head,
        path: &route.canonical_path,
        query: "",
        user: "",
        active_roles: None,
        strip_delegation: true,
    };
    let Ok(request) =
        outbound::build(shared, &strip_idempotency(caller), &out, Empty::new().map_err(|never| match never {}).boxed())
    else {
        return false;
    };
    matches!(shared.upstream.send(request).await, Ok(r) if r.status() == StatusCode::NOT_FOUND)
}

pub fn strip_idempotency(headers: &HeaderMap) -> HeaderMap {
    let mut h = headers.clone();
    h.remove("idempotency-key");
    h.remove(http::header::CONTENT_LENGTH);
    h.remove(http::header::CONTENT_TYPE);
    h
}

/// The table's locations, from the cache or a load of the table upstream (`lookup` is a GET
/// of the table's path with the caller's credentials and enforced active roles).
pub async fn table_locations(
    shared: &Shared,
    caller: &HeaderMap,
    lookup: &Outbound<'_>,
) -> Result<Arc<Vec<String>>, vending::VendError> {
    if let Some(cached) = shared.vending.cached_locations(lookup.path) {
        return Ok(cached);
    }
    let get = http::Method::GET;
    let out = Outbound { method: &get, ..*lookup };
    let empty = Empty::new().map_err(|never| match never {}).boxed();
    let response = send(shared, &strip_idempotency(caller), &out, empty)
        .await
        .map_err(|s| vending::VendError::Locations(s.refusal.status))?;
    if response.status() != StatusCode::OK {
        return Err(vending::VendError::Locations(response.status().as_u16()));
    }
    let body = rewrite::collect(response.into_body()).await.map_err(|_| vending::VendError::Locations(502))?;
    let locations = vending::locations_of(body)?;
    shared.vending.remember_locations(lookup.path, Arc::clone(&locations));
    Ok(locations)
}
