//! What loading a policy reports: each problem at its file and line, and the loaded snapshot
//! with its warnings.

use super::snapshot::Snapshot;
use std::fmt;
use std::path::PathBuf;
use thiserror::Error;

/// One problem found in a policy, at a file and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: PathBuf,
    pub line: u64,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

/// Why a policy did not load.
#[derive(Debug, Error)]
pub enum LoadError {
    #[error("{}", render(.0))]
    Invalid(Vec<Diagnostic>),
}

fn render(diags: &[Diagnostic]) -> String {
    diags.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

impl LoadError {
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Self::Invalid(d) => d,
        }
    }
}

/// A loaded policy and what `check` warns about.
#[derive(Debug)]
pub struct Loaded {
    pub snapshot: Snapshot,
    pub warnings: Vec<Diagnostic>,
}
