//! The credential scope a response may carry (docs/design.md §4, §8): READ or WRITE, with the
//! active roles and with every held role.

use super::model::{Object, Request, path_ident, resolve};
use crate::core::iceberg::OperationId;
use crate::core::policy::eval::{Subject, evaluate};
use crate::core::policy::rules::Rule;
use crate::core::policy::snapshot::Snapshot;

/// READ or WRITE, for the credentials a response may carry (docs/design.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    Read,
    Write,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
        }
    }
}

/// The scope with the active roles and with all held roles; `narrowed < unnarrowed` means the
/// upstream's credentials are broader than the caller's scope (docs/design.md §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CredentialScope {
    pub narrowed: Scope,
    pub unnarrowed: Scope,
}

/// `None` for operations without a credential scope.
pub fn credential_scope(snap: &Snapshot, subject: &Subject<'_>, req: &Request<'_>) -> Option<CredentialScope> {
    if !req.op.has_credential_scope() {
        return None;
    }
    if matches!(req.op, OperationId::CreateTable | OperationId::RegisterTable) {
        return Some(CredentialScope { narrowed: Scope::Write, unnarrowed: Scope::Write });
    }
    let target = resolve(snap, subject, req.catalog, &Object::Table(path_ident(req)?));
    let scope = |s: &Subject<'_>| {
        if evaluate(snap, s, &target, Rule::CredentialWrite.formula()).allowed { Scope::Write } else { Scope::Read }
    };
    Some(CredentialScope { narrowed: scope(subject), unnarrowed: scope(&subject.unnarrowed()) })
}
