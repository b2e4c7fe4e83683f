//! The policy: its YAML model, loading and validation, the indexed snapshot, and the evaluator.

pub mod authorize;
mod build;
pub mod diagnostic;
pub mod entries;
pub mod eval;
pub mod explain;
pub mod gravitino;
mod json;
mod lint;
pub mod load;
mod located;
pub mod model;
pub(crate) mod names;
mod raw;
mod restrict;
pub mod rules;
pub mod snapshot;

pub use authorize::{CredentialScope, Decision, Reason, Request, Scope, Verdict};
pub use eval::{RoleSet, Subject};
pub use load::{Diagnostic, LoadError, Loaded, load_path, load_str};
pub use snapshot::Snapshot;
