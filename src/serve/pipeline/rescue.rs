//! The serving layer's one place where an error becomes an answer: the refusal of each error
//! of the serving path's stages (docs/design.md §7), and the HTTP response of a refusal.

use crate::core::iceberg::errors::ErrorKind;
use crate::error::Refusal;
use crate::ops::owners::OwnersError;
use crate::serve::pipeline::accept::AcceptError;
use crate::serve::pipeline::identity::IdentityError;
use crate::serve::pipeline::inspect::ReadError;
use crate::serve::pipeline::rewrite::body::RewriteError;
use crate::serve::pipeline::rewrite::restrict::RestrictError;
use crate::serve::pipeline::signer_lookup::LookupError;
use crate::serve::storage::local_signer::LocalSignError;
use crate::serve::storage::vending::VendError;
use crate::serve::upstream::forward::{self, ForwardError};
use crate::serve::upstream::upstreams::RouteError;
use http::{HeaderValue, StatusCode, header};

/// The HTTP response of a refusal: the Iceberg error JSON, never cached.
pub fn response(refusal: &Refusal) -> http::Response<forward::Body> {
    let body = forward::full(bytes::Bytes::from(refusal.to_json()));
    let mut response = http::Response::new(body);
    *response.status_mut() = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::BAD_GATEWAY);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if refusal.close_connection {
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    if refusal.status() == 401 {
        headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"icegate\""));
    }
    response
}

impl From<&RouteError> for Refusal {
    /// getToken without a default upstream is off: 403, as design.md §4 has it for getToken
    /// configured off; getConfig that names no upstream is the caller's to fix (400).
    fn from(e: &RouteError) -> Self {
        match e {
            RouteError::UnknownWarehouse(_) | RouteError::NoDefault => Self::bad_request(e.to_string()),
            RouteError::NoTokenUpstream | RouteError::Unserved => Self::forbidden(e.to_string()),
        }
    }
}

impl From<&LookupError> for Refusal {
    /// The request was authorized, but where the catalog signs is unknown: the upstream's fault
    /// or the configuration's, never the caller's.
    fn from(e: &LookupError) -> Self {
        Self::bad_gateway(e.to_string())
    }
}

impl From<&ReadError> for Refusal {
    fn from(e: &ReadError) -> Self {
        match e {
            ReadError::Body(body) => Self::from(body),
            ReadError::Io(_) => Self::bad_request(e.to_string()),
            ReadError::Timeout(_) => Self::request_timeout(e.to_string()),
        }
    }
}

impl From<&AcceptError> for Refusal {
    /// Ambiguous framing also closes the connection: what follows the body could be read as
    /// another request by one of the two hops.
    fn from(e: &AcceptError) -> Self {
        let refusal = Self::bad_request(e.to_string());
        match e {
            AcceptError::Framing => Self { close_connection: true, ..refusal },
            _ => refusal,
        }
    }
}

impl From<&OwnersError> for Refusal {
    /// The ownership store cannot be written: creates, drops and renames wait (docs/design.md §4).
    fn from(e: &OwnersError) -> Self {
        let message = match e {
            OwnersError::Unrecorded(_) => e.to_string(),
            _ => format!("creates, drops and renames are unavailable while the ownership store cannot be written: {e}"),
        };
        Self::service_unavailable(message)
    }
}

impl From<&crate::serve::pipeline::state::NoPolicyYet> for Refusal {
    /// Nothing is decided before the policy source was first read (docs/design.md §9).
    fn from(e: &crate::serve::pipeline::state::NoPolicyYet) -> Self {
        Self::service_unavailable(e.to_string())
    }
}

impl From<&IdentityError> for Refusal {
    fn from(e: &IdentityError) -> Self {
        Self::not_authorized(e.to_string())
    }
}

impl From<&ForwardError> for Refusal {
    fn from(e: &ForwardError) -> Self {
        match e {
            ForwardError::Timeout(_) => Self::gateway_timeout(e.to_string()),
            ForwardError::Unreachable(_) | ForwardError::Request(_) | ForwardError::Rebuild(_) => {
                Self::bad_gateway(e.to_string())
            }
            // icegate cannot authenticate to the upstream for now (its token endpoint or AWS
            // credentials): the request was not sent
            ForwardError::Credential(_) => Self::service_unavailable(e.to_string()),
        }
    }
}

impl From<&RewriteError> for Refusal {
    fn from(e: &RewriteError) -> Self {
        match e {
            RewriteError::Seal => Self::service_failure(e.to_string()),
            RewriteError::PageRequest(refusal) => (**refusal).clone(),
            _ => Self::unreadable_upstream("response", e),
        }
    }
}

impl From<&VendError> for Refusal {
    fn from(e: &VendError) -> Self {
        match e {
            VendError::TableMissing => Self::new(ErrorKind::NoSuchTable, e.to_string()),
            VendError::Unanswered(refusal) => Self { message: e.to_string(), ..(**refusal).clone() },
            // the envelope's errors may quote the upstream's values (a secret key)
            VendError::Envelope(_) => Self::unreadable_upstream("table response", e),
            // STS's own words (ARNs, policy text) are for the operator's log, not the caller
            VendError::Mint(_) => {
                Self::bad_gateway("cannot mint downscoped credentials; icegate's log has the details")
                    .logged("minting downscoped credentials failed".to_owned(), e)
            }
            _ => Self::bad_gateway(e.to_string()),
        }
    }
}

impl From<&LocalSignError> for Refusal {
    /// The request was authorized: what fails is icegate's own signing.
    fn from(e: &LocalSignError) -> Self {
        match e {
            // STS's own words (ARNs, policy text) are for the operator's log, not the caller
            LocalSignError::Role(_) => {
                Self::service_unavailable("icegate cannot assume its signing role; icegate's log has the details")
                    .logged("assuming the signing role failed".to_owned(), e)
            }
            LocalSignError::Credentials(_) | LocalSignError::Sign(_) => Self::service_unavailable(e.to_string()),
            LocalSignError::NotConfigured | LocalSignError::Build(_) => Self::service_failure(e.to_string()),
        }
    }
}

impl From<&RestrictError> for Refusal {
    /// An answer that must carry read restrictions and cannot is not relayed (fail closed).
    fn from(e: &RestrictError) -> Self {
        let refusal = Self::forbidden(e.to_string());
        match (e.log_event(), e) {
            (Some(event), RestrictError::Unwritable { source, .. }) => refusal.logged(event, source),
            _ => refusal,
        }
    }
}
