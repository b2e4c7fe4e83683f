//! The upstream answer's body as the rewrite stage reads it: buffered, bounded, and the one
//! error of reading or rewriting it. It imports nothing of the serving layer, so the modules
//! that ask the upstream again can use it without a cycle.

use crate::core::iceberg::list::ListError;
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use thiserror::Error;

/// The most of an upstream body icegate buffers to rewrite it.
pub const MAX_REWRITE_BYTES: usize = 64 * 1024 * 1024;
/// Pages followed when the caller sent no `pageSize` (the whole list), as a last bound.
pub const MAX_PAGES_WITHOUT_SIZE: usize = 10_000;

#[derive(Debug, Error)]
pub enum RewriteError {
    #[error("upstream response could not be read: {0}")]
    Read(String),
    #[error(transparent)]
    List(#[from] ListError),
    #[error("upstream answered a follow-up page with status {0}")]
    FollowUp(u16),
    /// A follow-up page's request failed as a first page's would, and is answered alike (a
    /// timeout is a 504 on any page).
    #[error("{}", .0.message)]
    PageRequest(Box<crate::error::Refusal>),
    /// Clients would send every request to a prefix icegate refuses (docs/design.md §2, §7).
    #[error("the getConfig answer's `{key}.prefix` `{value}` names no catalog of the policy that this upstream serves")]
    UnmappedPrefix { key: &'static str, value: String },
    /// The upstream's page token could not be wrapped: the list is not sent cut short.
    #[error("the upstream's page token could not be sealed")]
    Seal,
}

/// Buffers an upstream body, bounded.
pub async fn collect(body: Incoming) -> Result<Bytes, RewriteError> {
    Limited::new(body, MAX_REWRITE_BYTES)
        .collect()
        .await
        .map(|c| c.to_bytes())
        .map_err(|e| RewriteError::Read(e.to_string()))
}
