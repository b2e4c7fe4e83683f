//! Why an upstream response's envelope could not be scanned; the messages never quote the
//! upstream's values (one could be a secret).

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum EnvelopeError {
    #[error("upstream response is not a JSON object")]
    NotAnObject,
    #[error("upstream response is malformed at byte {0}")]
    Malformed(usize),
    /// The byte at which the repeated key starts (the key itself is the upstream's text).
    #[error("upstream response has a member twice (the second at byte {0})")]
    Duplicate(usize),
    /// `key` is the name icegate looked the member up by; nothing of its value is quoted.
    #[error("upstream response member `{key}` is not {expected}")]
    Member { key: String, expected: &'static str },
}
