//! What a provider makes of a request: recognized or not, and why a credential is refused.

use crate::core::roles::Principal;
use thiserror::Error;

/// Why a request is not authenticated (401).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum IdentityError {
    #[error("no credential: send `Authorization: Basic ...`{0}")]
    Missing(&'static str),
    #[error("invalid credential: {0}")]
    Invalid(String),
    #[error("identity headers `{user}` and `{groups}` are accepted only from a trusted peer")]
    UntrustedPeer { user: String, groups: String },
}

/// What a provider made of a request.
pub(super) enum Recognized {
    /// Not this provider's kind of credential: try the next.
    No,
    Yes(Principal),
}
