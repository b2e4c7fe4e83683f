//! A trusted reader's loadTable-like answer with the read restrictions that apply written in
//! (docs/design.md §8), before its credentials are rewritten. The work is the core's
//! ([`crate::core::restrictions::answer`]); this step only runs it for answers that carry
//! restrictions and fails the request closed when the policy names what the table lacks.

use crate::core::iceberg::OperationId;
use crate::core::restrictions::Applied;
use crate::core::restrictions::answer::{InjectError, inject};
use crate::error::{Refusal, Stop};
use bytes::Bytes;

/// `bytes` with `applied` written in as `read-restrictions`; a 403 when they cannot be issued
/// for the table as it is now, with the policy's mistake in icegate's log only.
pub fn restricted(bytes: &[u8], applied: &Applied, op: OperationId) -> Result<Bytes, Stop> {
    inject(bytes, applied).map(Bytes::from).map_err(|e| {
        // the table as the caller named it (without the catalog), as every refusal names it
        let named = applied.table.split_once('.').map_or(applied.table.as_str(), |(_, rest)| rest);
        let message = format!(
            "not authorized to {op} `{named}`: the table has read restrictions icegate cannot issue for its current \
             schema; icegate's log has the details"
        );
        let event = match e {
            InjectError::Resolve(_) => {
                format!("read restrictions on `{}` name what the table does not have: fix the policy", applied.table)
            }
            InjectError::Envelope(_) | InjectError::NoMetadata => {
                format!("read restrictions on `{}` could not be written into the upstream's answer", applied.table)
            }
        };
        Stop::plain(Refusal::forbidden(message).logged(event, &e), Some(op))
    })
}
