//! A trusted reader's loadTable-like answer with the read restrictions that apply written in
//! (docs/design.md §8), before its credentials are rewritten. The work is the core's
//! ([`crate::core::restrictions::answer`]); this step only runs it for answers that carry
//! restrictions and fails the request closed when the policy names what the table lacks.

use crate::core::iceberg::OperationId;
use crate::core::restrictions::Applied;
use crate::core::restrictions::answer::{InjectError, inject};
use bytes::Bytes;

/// Why an answer that must carry read restrictions is not relayed (a 403: fail closed).
#[derive(Debug, thiserror::Error)]
pub enum RestrictError {
    /// The answer would carry restrictions, but no credential rewrite of it could write them.
    #[error("not authorized to {operation} `{table}`: its read restrictions cannot be issued")]
    Unissued { operation: OperationId, table: String },
    /// The policy's mistake goes to icegate's log only (`policy_table`, `source`).
    #[error(
        "not authorized to {operation} `{named}`: the table has read restrictions icegate cannot issue for its \
         current schema; icegate's log has the details"
    )]
    Unwritable { operation: OperationId, named: String, policy_table: String, source: InjectError },
}

impl RestrictError {
    /// What icegate's log says of an unwritable answer.
    pub fn log_event(&self) -> Option<String> {
        let Self::Unwritable { policy_table, source, .. } = self else { return None };
        Some(match source {
            InjectError::Resolve(_) => {
                format!("read restrictions on `{policy_table}` name what the table does not have: fix the policy")
            }
            InjectError::Envelope(_) | InjectError::NoMetadata => {
                format!("read restrictions on `{policy_table}` could not be written into the upstream's answer")
            }
        })
    }
}

/// `bytes` with `applied` written in as `read-restrictions`.
pub fn restricted(bytes: &[u8], applied: &Applied, operation: OperationId) -> Result<Bytes, RestrictError> {
    inject(bytes, applied).map(Bytes::from).map_err(|source| RestrictError::Unwritable {
        operation,
        // the table as the caller named it (without the catalog), as every refusal names it
        named: applied.table.split_once('.').map_or(applied.table.as_str(), |(_, rest)| rest).to_owned(),
        policy_table: applied.table.clone(),
        source,
    })
}
