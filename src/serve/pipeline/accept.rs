//! Stage `accept`: a request whose body two hops could frame differently is refused, hop-by-hop
//! headers are removed before anything else is read, and a request that carries two
//! `Authorization` or `X-Gravitino-Active-Roles` headers is refused, since the two sides could
//! pick different ones (docs/design.md §7).

use http::HeaderMap;
use http::header::{self, HeaderName};
use thiserror::Error;

/// Why a request's head was refused.
#[derive(Debug, Error)]
pub enum AcceptError {
    /// The connection cannot be trusted to carry another request.
    #[error("a request with both `Content-Length` and `Transfer-Encoding` is not accepted (RFC 9112 §6.1)")]
    Framing,
    #[error("header `{0}` was sent more than once")]
    Repeated(&'static str),
    #[error("header `{0}` is not accepted: icegate authorizes the method of the request line")]
    MethodOverride(String),
    #[error("an absolute-form request target is not accepted")]
    AbsoluteForm,
}

/// Headers icegate reads or sets itself; a `Connection` header can never remove them, so a
/// caller cannot hide its credential or role header from icegate while the upstream sees it.
const PROTECTED: [&str; 3] = ["authorization", "x-gravitino-active-roles", "host"];

/// Removes the hop-by-hop headers, and those `Connection` names (except protected ones).
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    // Every request and response passes here and almost none carries a hop-by-hop header:
    // one look at the names present is cheaper than a removal (a hash) per listed name.
    if !headers.keys().any(is_hop_by_hop) {
        return;
    }
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .filter(|name| !PROTECTED.contains(&name.as_str()))
        .collect();
    for name in named {
        headers.remove(name);
    }
    let listed: Vec<HeaderName> = headers.keys().filter(|k| is_hop_by_hop(k)).cloned().collect();
    for name in listed {
        headers.remove(name);
    }
}

/// A header that describes one hop, never the request (RFC 9110 §7.6.1), or any `proxy-`
/// header (`Proxy-Connection`, `Proxy-Authorization`, `Proxy-Authenticate` among them). Every
/// header of every request and answer is asked: a `match` dispatches on the length first.
fn is_hop_by_hop(name: &HeaderName) -> bool {
    let n = name.as_str();
    matches!(n, "connection" | "keep-alive" | "te" | "trailer" | "transfer-encoding" | "upgrade")
        || n.starts_with("proxy-")
}

/// 400, and the connection closed, for a request with both `Content-Length` and
/// `Transfer-Encoding` (RFC 9112 §6.1): the two hops could frame its body differently, and what
/// follows it on the connection could be read as another request by one of them. hyper drops
/// `Content-Length` from such a request, so the connection's bytes tell (`seen_on_connection`,
/// [`crate::serve::listen::framing`]); the headers are read too, before hop-by-hop removal takes
/// `Transfer-Encoding` away.
fn check_framing(headers: &HeaderMap, seen_on_connection: bool) -> Result<(), AcceptError> {
    if seen_on_connection
        || (headers.contains_key(header::CONTENT_LENGTH) && headers.contains_key(header::TRANSFER_ENCODING))
    {
        return Err(AcceptError::Framing);
    }
    Ok(())
}

/// Headers that ask a server to run another method than the request line's (Jersey's
/// `HttpMethodOverrideFilter`, Spring's and others honour them): icegate authorizes the request
/// line's method, so an upstream honouring one would run what was never authorized.
const METHOD_OVERRIDES: [&str; 3] = ["x-http-method-override", "x-http-method", "x-method-override"];

/// 400 when a header icegate decides on appears more than once, or a method override is sent
/// (in any spelling, `_` for `-` included).
pub fn check_duplicates(headers: &HeaderMap) -> Result<(), AcceptError> {
    for name in [header::AUTHORIZATION.as_str(), "x-gravitino-active-roles"] {
        if headers.get_all(name).iter().nth(1).is_some() {
            let shown = if name == "authorization" { "Authorization" } else { crate::core::roles::HEADER };
            return Err(AcceptError::Repeated(shown));
        }
    }
    for name in headers.keys() {
        let n = name.as_str();
        if n.starts_with("x") && n.contains("method") {
            let folded = n.replace('_', "-");
            if METHOD_OVERRIDES.contains(&folded.as_str()) {
                return Err(AcceptError::MethodOverride(n.to_owned()));
            }
        }
    }
    Ok(())
}

/// The stage's checks of a request's head, before getToken is recognized: unambiguous framing,
/// hop-by-hop headers removed, an origin-form target. HTTP/2 always carries `:scheme` and
/// `:authority`, so only an HTTP/1 target can be absolute.
pub fn head(parts: &mut http::request::Parts, seen_on_connection: bool) -> Result<(), AcceptError> {
    check_framing(&parts.headers, seen_on_connection)?;
    strip_hop_by_hop(&mut parts.headers);
    if parts.version < http::Version::HTTP_2 && parts.uri.scheme().is_some() {
        return Err(AcceptError::AbsoluteForm);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_cannot_remove_what_icegate_reads() {
        let mut h = HeaderMap::new();
        h.insert("connection", "close, x-gravitino-active-roles, Authorization, x-custom".parse().unwrap());
        h.insert("x-gravitino-active-roles", "analyst".parse().unwrap());
        h.insert("authorization", "Basic Ym9i".parse().unwrap());
        h.insert("x-custom", "1".parse().unwrap());
        h.insert("keep-alive", "5".parse().unwrap());
        h.insert("proxy-foo", "x".parse().unwrap());
        h.insert("te", "trailers".parse().unwrap());
        strip_hop_by_hop(&mut h);
        assert!(h.contains_key("x-gravitino-active-roles"));
        assert!(h.contains_key("authorization"));
        for gone in ["x-custom", "keep-alive", "proxy-foo", "te", "connection"] {
            assert!(!h.contains_key(gone), "{gone}");
        }
    }

    #[test]
    fn two_role_or_credential_headers_are_400() {
        let mut h = HeaderMap::new();
        h.append("x-gravitino-active-roles", "a".parse().unwrap());
        assert!(check_duplicates(&h).is_ok());
        h.append("x-gravitino-active-roles", "b".parse().unwrap());
        assert!(matches!(check_duplicates(&h), Err(AcceptError::Repeated(_))));
        let mut h = HeaderMap::new();
        h.append("authorization", "Basic a".parse().unwrap());
        h.append("authorization", "Basic b".parse().unwrap());
        assert!(check_duplicates(&h).unwrap_err().to_string().contains("`Authorization`"));
    }
}
