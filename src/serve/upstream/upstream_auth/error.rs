//! What can go wrong with an upstream's service credential, and what `/readyz` says of it.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum AuthError {
    #[error("invalid upstream credential settings: {0}")]
    Config(String),
    #[error("cannot get a token for the upstream: {0}")]
    Token(String),
    #[error("cannot get AWS credentials to sign upstream requests: {0}")]
    Credentials(String),
    #[error("cannot sign the upstream request: {0}")]
    Sign(String),
    /// The serving path holds every body sent to a SigV4 upstream; a stream here is a bug.
    #[error("cannot sign a streamed request body")]
    Streamed,
}

/// What `/readyz` says of a token or of AWS credentials.
#[derive(Debug, PartialEq, Eq)]
pub struct Status {
    pub mode: &'static str,
    /// A token or credentials are held and not expired.
    pub held: bool,
    /// Seconds until the held one expires, when it says.
    pub expires_in: Option<u64>,
    /// The last fetch's or lookup's error, until one succeeds (never a secret: the messages are
    /// icegate's own, with the status and OAuth2 error code of the answer at most).
    pub last_error: Option<String>,
}

impl Status {
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "mode": self.mode,
            "held": self.held,
            "expires_in_seconds": self.expires_in,
            "last_error": self.last_error,
        })
    }
}
