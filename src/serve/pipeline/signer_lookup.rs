//! Learning the signer a catalog advertises in getConfig only, for a sign request of a table
//! whose config names none (docs/signing.md "Where a signed request goes"): getConfig asked with
//! the query that answered for the prefix before, else with each configured `warehouse`, with
//! the caller's credentials, until an answer names the prefix; what the answers tell is kept in
//! [`crate::serve::storage::signers::Advertised`].

use crate::core::credentials::storage::Signer;
use crate::serve::pipeline::outbound::Outbound;
use crate::serve::pipeline::rewrite::body::collect;
use crate::serve::pipeline::state::Shared;
use crate::serve::upstream::upstreams::Lane;
use http::HeaderMap;

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum LookupError {
    /// No getConfig asked answered for the catalog: the table's signer is unknown, and a guess
    /// would send the request to a route the catalog may not serve, or to another's signer.
    #[error(
        "the catalog's signer for {catalog} cannot be learnt: its getConfig {why}; list the catalog's getConfig `warehouse` in the upstream's `warehouses`"
    )]
    Unlearnt { catalog: String, why: String },
}

/// How one getConfig asked was answered.
enum Asked {
    Answer(bytes::Bytes),
    Status(u16),
    Unreachable,
}

/// The signer `upstream`'s getConfig advertises for the catalog at `prefix` (`None`: it
/// advertises none, and sign requests go to the table-scoped route), asked with the caller's
/// credentials when not known. An answer without a prefix that advertises no signer says so
/// for every prefix (its clients set their own), and so does a 404 to getConfig without a
/// query (a catalog without getConfig advertises nothing there); anything else must answer
/// for the prefix itself.
pub async fn advertised_signer(
    shared: &Shared,
    upstream: &Lane,
    caller: &HeaderMap,
    user: &str,
    prefix: Option<&str>,
) -> Result<Option<Signer>, LookupError> {
    let prefix = prefix.unwrap_or_default();
    if let Some(known) = upstream.signers.recall(prefix) {
        return Ok(known);
    }
    let mut why = Vec::new();
    for query in upstream.signers.queries_for(prefix, &upstream.config.warehouses) {
        let shown = if query.is_empty() { "without a query".to_owned() } else { format!("with `{query}`") };
        match ask(shared, upstream, caller, user, &query).await {
            Asked::Answer(body) => match upstream.signers.remember_answer(&body, &query) {
                Some((answered, signer)) if answered == prefix => return Ok(signer),
                Some((answered, None)) if answered.is_empty() => {
                    upstream.signers.remember(prefix, None);
                    return Ok(None);
                }
                Some(_) => why.push(format!("{shown} answered for another catalog")),
                None => why.push(format!("{shown} answered what is not a config response")),
            },
            Asked::Status(404) if query.is_empty() => {
                upstream.signers.remember(prefix, None);
                return Ok(None);
            }
            Asked::Status(status) => why.push(format!("{shown} answered {status}")),
            Asked::Unreachable => why.push(format!("{shown} was not answered")),
        }
    }
    let catalog =
        if prefix.is_empty() { "the catalog without a prefix".to_owned() } else { format!("prefix `{prefix}`") };
    Err(LookupError::Unlearnt { catalog, why: why.join(", ") })
}

/// getConfig asked with `query` and the caller's credentials.
async fn ask(shared: &Shared, upstream: &Lane, caller: &HeaderMap, user: &str, query: &str) -> Asked {
    let get = http::Method::GET;
    let out = Outbound {
        upstream,
        method: &get,
        path: "/v1/config",
        query,
        user,
        active_roles: None,
        strip_delegation: true,
    };
    let headers = crate::serve::pipeline::outbound::strip_idempotency(caller);
    let empty = crate::serve::upstream::forward::Outgoing::empty();
    let Ok(response) = crate::serve::pipeline::outbound::send(shared, &headers, &out, empty).await else {
        return Asked::Unreachable;
    };
    if !response.status().is_success() {
        return Asked::Status(response.status().as_u16());
    }
    match collect(response.into_body()).await {
        Ok(body) => Asked::Answer(body),
        Err(_) => Asked::Unreachable,
    }
}
