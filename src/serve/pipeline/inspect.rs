//! Stage `inspect`: reads the request body when the operation needs it, bounded, after its
//! headers say plain JSON; a body over the bound is refused before it is buffered (413).

use crate::core::iceberg::OperationId;
use crate::core::iceberg::body::{BodyError, check_content_headers};
use bytes::Bytes;
use http::HeaderMap;
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body as _, Incoming};

/// What the stage leaves for forwarding: the bytes that were authorized, or the stream.
#[derive(Debug)]
pub enum RequestBody {
    /// Read and parsed to authorize.
    Buffered(Bytes),
    Stream(Incoming),
    /// Held whole for an upstream that signs its hash, but not parsed.
    Held(Bytes),
}

impl RequestBody {
    /// The body forwarded upstream: the authorized bytes, or the stream.
    pub fn into_upstream(self) -> crate::serve::upstream::forward::Outgoing {
        use crate::serve::upstream::forward::{Outgoing, streamed};
        match self {
            Self::Buffered(bytes) | Self::Held(bytes) => Outgoing::Held(bytes),
            // no body at all (a GET, a DELETE): nothing to stream, and the request can be sent again
            Self::Stream(incoming) if incoming.is_end_stream() => Outgoing::empty(),
            Self::Stream(incoming) => Outgoing::Streamed(streamed(incoming)),
        }
    }
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(http::header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

/// Why the body could not be taken in.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Body(#[from] BodyError),
    #[error("request body could not be read: {0}")]
    Io(String),
    #[error("request body was not received within {0} ms")]
    Timeout(u64),
}

/// Reads or passes on `body` for `op`; `limit` is `limits.max_body_bytes`, `timeout_ms`
/// `limits.body_read_timeout_ms` (a body that trickles in is cut off, not waited for).
pub async fn read(
    op: OperationId,
    headers: &HeaderMap,
    body: Incoming,
    limit: usize,
    timeout_ms: u64,
) -> Result<RequestBody, ReadError> {
    if op.has_request_body() && body.is_end_stream() {
        return Err(BodyError::Missing(op.as_str()).into());
    }
    if !op.inspects_request_body() {
        return Ok(RequestBody::Stream(body));
    }
    let text = |name| headers.get(name).and_then(|v: &http::HeaderValue| v.to_str().ok());
    // Two content types are read as one list, which is no media type: the upstream could pick
    // either (415).
    let types: Vec<&str> =
        headers.get_all(http::header::CONTENT_TYPE).iter().map(|v| v.to_str().unwrap_or("(not ASCII)")).collect();
    if types.len() > 1 {
        return Err(BodyError::UnsupportedMediaType(crate::core::iceberg::json::quote(&types.join(", "))).into());
    }
    check_content_headers(text(http::header::CONTENT_TYPE), text(http::header::CONTENT_ENCODING))?;
    if content_length(headers).is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge { limit }.into());
    }
    Ok(RequestBody::Buffered(bounded(body, limit, timeout_ms).await?))
}

/// A body an upstream signed with SigV4 needs whole (its hash is signed), read within the
/// same bounds as an inspected one; it is not parsed.
pub async fn hold(headers: &HeaderMap, body: Incoming, limit: usize, timeout_ms: u64) -> Result<Bytes, ReadError> {
    if content_length(headers).is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge { limit }.into());
    }
    bounded(body, limit, timeout_ms).await
}

async fn bounded(body: Incoming, limit: usize, timeout_ms: u64) -> Result<Bytes, ReadError> {
    let collect = Limited::new(body, limit).collect();
    let collected = tokio::time::timeout(std::time::Duration::from_millis(timeout_ms), collect)
        .await
        .map_err(|_| ReadError::Timeout(timeout_ms))?;
    let collected = collected.map_err(|e| {
        if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() {
            ReadError::Body(BodyError::TooLarge { limit })
        } else {
            ReadError::Io(e.to_string())
        }
    })?;
    Ok(collected.to_bytes())
}
