//! Stage `forward`, its request half: the upstream request is built from what was authorized —
//! the canonical path and query, the enforced active set, the caller's or the service's
//! credential, a per-user `Idempotency-Key` — never from the caller's raw request.

use crate::serve::pipeline::state::Shared;
use crate::serve::upstream::forward::{ForwardError, Outgoing};
use crate::serve::upstream::upstream_auth::ServiceAuth;
use crate::serve::upstream::upstreams::Lane;
use hmac::{Hmac, Mac};
use http::header::{self, HeaderMap, HeaderName, HeaderValue};

/// Headers that never go upstream as the caller sent them.
fn replaced(name: &HeaderName, shared: &Shared) -> bool {
    let n = name.as_str();
    n == "host"
        || n == "authorization"
        || n == "x-gravitino-active-roles"
        || n == "idempotency-key"
        // icegate reads lists, getConfig and error bodies; a compressed one could not be
        // filtered (502) or cleaned of its `stack`, so the upstream is asked for plain bytes.
        || n == "accept-encoding"
        // names are lower case here but the config may spell them in any case
        || n.eq_ignore_ascii_case(&shared.config.identity.header.user_header)
        || n.eq_ignore_ascii_case(&shared.config.identity.header.groups_header)
        || (n.contains('_') && look_alike(n, shared))
}

/// `x_forwarded_user` for `x-forwarded-user`: servers that fold `_` into `-` (CGI, WSGI, some
/// proxies) would read a look-alike as the header icegate sets or strips.
fn look_alike(name: &str, shared: &Shared) -> bool {
    let folded = name.replace('_', "-");
    let header = &shared.config.identity.header;
    [
        "x-gravitino-active-roles",
        "idempotency-key",
        "x-iceberg-access-delegation",
        header.user_header.as_str(),
        header.groups_header.as_str(),
    ]
    .iter()
    .any(|h| folded.eq_ignore_ascii_case(h))
}

/// `Idempotency-Key` bound to the user: a keyed hash of user and key, formatted as a UUID
/// (version 8) as the spec requires a UUID.
fn rebind_idempotency_key(secret: &[u8; 32], user: &str, key: &str) -> String {
    let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(secret) else { return String::new() };
    mac.update(&(user.len() as u64).to_be_bytes());
    mac.update(user.as_bytes());
    mac.update(key.as_bytes());
    // a SHA-256 MAC has 32 bytes, of which the UUID takes 16
    let mut b: [u8; 16] = mac.finalize().into_bytes().get(..16).and_then(|d| d.try_into().ok()).unwrap_or_default();
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let mut uuid = String::with_capacity(36);
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            uuid.push('-');
        }
        uuid.push(crate::core::text::hex_lower(x >> 4));
        uuid.push(crate::core::text::hex_lower(*x));
    }
    uuid
}

/// What the pipeline decided that the upstream request carries, and the upstream it goes to.
#[derive(Debug)]
pub struct Outbound<'a> {
    /// The upstream of the request's catalog (or getConfig's warehouse, docs/design.md §7).
    pub upstream: &'a Lane,
    pub method: &'a http::Method,
    pub path: &'a str,
    pub query: &'a str,
    pub user: &'a str,
    /// The canonical active-roles value; `None` for no header.
    pub active_roles: Option<&'a str>,
    /// Remove `X-Iceberg-Access-Delegation`: the caller's vended credentials would be removed.
    pub strip_delegation: bool,
}

pub fn build(
    shared: &Shared,
    caller: &HeaderMap,
    out: &Outbound<'_>,
    body: Outgoing,
) -> Result<http::Request<Outgoing>, ForwardError> {
    let uri = out.upstream.client.uri(out.path, out.query)?;
    let mut request = http::Request::builder()
        .method(out.method.clone())
        .uri(uri)
        .body(body)
        .map_err(|e| ForwardError::Request(e.to_string()))?;
    let headers = request.headers_mut();
    for (name, value) in caller {
        if !replaced(name, shared) {
            headers.append(name.clone(), value.clone());
        }
    }
    // the service credentials are the upstream client's to set (forward::Upstream::send)
    if matches!(out.upstream.client.auth(), ServiceAuth::Passthrough)
        && let Some(v) = caller.get(header::AUTHORIZATION)
    {
        headers.insert(header::AUTHORIZATION, v.clone());
    }
    if out.upstream.config.forward_active_roles
        && let Some(v) = out.active_roles.and_then(|v| HeaderValue::from_str(v).ok())
    {
        headers.insert(HeaderName::from_static("x-gravitino-active-roles"), v);
    }
    if let Some(key) = caller.get("idempotency-key").and_then(|v| v.to_str().ok()) {
        let bound = rebind_idempotency_key(&shared.idempotency_secret, out.user, key);
        if let Ok(v) = HeaderValue::from_str(&bound) {
            headers.insert(HeaderName::from_static("idempotency-key"), v);
        }
    }
    if out.strip_delegation {
        headers.remove("x-iceberg-access-delegation");
    }
    Ok(request)
}

/// Sends one request upstream: `out` says what, `caller` the headers it came with.
pub async fn send(
    shared: &Shared,
    caller: &HeaderMap,
    out: &Outbound<'_>,
    body: Outgoing,
) -> Result<http::Response<hyper::body::Incoming>, crate::error::Stop> {
    send_to(shared, caller, out, None, body).await
}

/// As [`send`], to `to` instead of `out`'s path on the upstream when given (a sign request
/// going to the signer the upstream advertised, docs/design.md §8).
pub async fn send_to(
    shared: &Shared,
    caller: &HeaderMap,
    out: &Outbound<'_>,
    to: Option<&http::Uri>,
    body: Outgoing,
) -> Result<http::Response<hyper::body::Incoming>, crate::error::Stop> {
    let mut request = build(shared, caller, out, body).map_err(crate::error::stop(None))?;
    if let Some(to) = to {
        *request.uri_mut() = to.clone();
    }
    out.upstream.client.send(request).await.map_err(crate::error::stop(None))
}

/// The caller's headers for a request icegate sends on its own (a HEAD, a load): without the
/// idempotency key, which belongs to the caller's own request, and the body's headers.
pub fn strip_idempotency(headers: &HeaderMap) -> HeaderMap {
    let mut h = headers.clone();
    h.remove("idempotency-key");
    h.remove(http::header::CONTENT_LENGTH);
    h.remove(http::header::CONTENT_TYPE);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idempotency_keys_are_bound_to_the_user_and_look_like_uuids() {
        let s = [7u8; 32];
        let a = rebind_idempotency_key(&s, "alice", "k1");
        assert_eq!(a, rebind_idempotency_key(&s, "alice", "k1"));
        assert_ne!(a, rebind_idempotency_key(&s, "bob", "k1"));
        assert_ne!(rebind_idempotency_key(&s, "ab", "c"), rebind_idempotency_key(&s, "a", "bc"));
        assert_eq!(a.len(), 36);
        assert_eq!(a.as_bytes()[14], b'8');
    }
}
