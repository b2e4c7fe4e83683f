//! Why a read of the Gravitino policy source failed.

use crate::core::policy::gravitino::GravitinoError;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SourceError {
    #[error("cannot set up the Gravitino client: {0}")]
    Setup(String),
    #[error("cannot reach Gravitino at `{url}`: {message}")]
    Unreachable { url: String, message: String },
    #[error("Gravitino answered {status} to `{url}`: {message}")]
    Refused { url: String, status: u16, message: String },
    #[error("cannot read Gravitino's answer to `{url}`: {message}")]
    Answer { url: String, message: String },
    #[error("no credential for Gravitino: {0}")]
    Token(String),
    #[error("cannot read the catalogs file `{path}`: {message}")]
    CatalogsFile { path: String, message: String },
    #[error("{0}")]
    Policy(#[from] GravitinoError),
}
