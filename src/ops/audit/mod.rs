//! Stage `audit`: one JSON line per request (docs/design.md §10) on stdout or a configured file,
//! with the keys the contract fixes. Credentials never enter a record: it holds names,
//! decisions and statuses only.

mod line;
pub mod objects;
mod record;
mod writer;

pub use record::{Object, Record};
pub use writer::{ParkFlush, Sink};

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug)]
pub struct Audit {
    writer: Arc<writer::Writer>,
    /// A per-process prefix and a counter make request ids unique across replicas and restarts.
    prefix: u64,
    next: AtomicU64,
}

impl Audit {
    pub fn new(sink: Sink) -> Self {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        Self {
            writer: Arc::new(writer::Writer::new(sink)),
            prefix: nanos ^ u64::from(std::process::id()).rotate_left(32),
            next: AtomicU64::new(0),
        }
    }

    /// A fresh record with its id and timestamp.
    pub fn start(&self, generation: u64, hash: &str) -> Record {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        Record {
            ts: crate::core::text::rfc3339_now(),
            request_id: request_id(self.prefix, n),
            decision: "deny",
            policy_generation: generation,
            policy_hash: hash.to_owned(),
            ..Record::default()
        }
    }

    /// Writes `record` as one line, at once or with the batch of this turn of the event loop
    /// (see `writer`). A failed write is logged, never fatal to the request.
    pub fn emit(&self, record: &Record) {
        if self.writer.is_off() {
            return;
        }
        self.writer.add_with(|out| line::write_to(out, record));
    }

    /// Batches lines until `park` is flushed (the runtime's thread going idle).
    pub fn batch_until(&self, park: &ParkFlush) {
        park.attach(&self.writer);
    }

    /// Writes every batched line (shutdown).
    pub fn flush(&self) {
        self.writer.flush();
    }
}

/// `prefix` and `n` as the request id `{prefix:016x}-{n:08x}`, without `format!`.
fn request_id(prefix: u64, n: u64) -> String {
    let mut out = String::with_capacity(25);
    let hex = |out: &mut String, v: u64, digits: u32| {
        for i in (0..digits).rev() {
            out.push(crate::core::text::hex_lower((v >> (4 * i)) as u8));
        }
    };
    hex(&mut out, prefix, 16);
    out.push('-');
    // `{n:08x}` widens past eight digits for a counter beyond u32: so does this.
    let digits = (64 - n.leading_zeros()).div_ceil(4).max(8);
    hex(&mut out, n, digits);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_written_as_format_would() {
        for (prefix, n) in
            [(0u64, 0u64), (0x1234_abcd, 42), (u64::MAX, u64::from(u32::MAX)), (7, u64::from(u32::MAX) + 1)]
        {
            assert_eq!(request_id(prefix, n), format!("{prefix:016x}-{n:08x}"));
        }
    }

    #[test]
    fn a_record_has_every_contract_key() {
        let audit = Audit::new(Sink::Off);
        let r = audit.start(3, "sha256:ab");
        let v: serde_json::Value = serde_json::from_slice(&line::write(&r)).unwrap();
        for key in [
            "ts",
            "request_id",
            "user",
            "groups",
            "held_roles",
            "active_roles",
            "active_roles_header",
            "operation",
            "objects",
            "decision",
            "status",
            "reason",
            "credential",
            "policy_generation",
            "upstream_status",
            "duration_ms",
        ] {
            assert!(v.get(key).is_some(), "{key}");
        }
        assert_eq!(v["decision"], "deny");
        assert_eq!(v["policy_hash"], "sha256:ab");
        let written: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(
            written.len(),
            18,
            "the 16 contract keys, `policy_hash`, `upstream`, and nothing internal: {written:?}"
        );
        assert_ne!(audit.start(3, "sha256:ab").request_id, r.request_id);
    }
}
