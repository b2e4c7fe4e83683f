//! Stage `audit`: one JSON line per request (DESIGN.md §10) on stdout or a configured file,
//! with the keys the contract fixes. Credentials never enter a record: it holds names,
//! decisions and statuses only.

use serde::Serialize;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// An object a request named, as `{"type", "fullName"}`.
#[derive(Clone, Debug, Serialize)]
pub struct Object {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(rename = "fullName")]
    pub full_name: String,
}

/// What the stages learned about one request; absent values are written as `null`.
#[derive(Debug, Default, Serialize)]
pub struct Record {
    pub ts: String,
    pub request_id: String,
    pub user: Option<String>,
    pub groups: Option<Vec<String>>,
    pub held_roles: Option<Vec<String>>,
    pub active_roles: Option<Vec<String>>,
    pub active_roles_header: Option<String>,
    pub operation: Option<&'static str>,
    pub objects: Vec<Object>,
    /// `allow` when forwarded, `deny` otherwise.
    pub decision: &'static str,
    pub status: u16,
    pub reason: Option<String>,
    /// What was done to vended credentials: `kept`, `stripped`, `downscoped`, or null.
    pub credential: Option<&'static str>,
    pub policy_generation: u64,
    /// The live policy's content hash (`sha256:...`), beside its generation.
    pub policy_hash: String,
    pub upstream_status: Option<u16>,
    pub duration_ms: f64,
    /// When the request arrived; not written.
    #[serde(skip)]
    pub started: Option<std::time::Instant>,
    /// Arrival to decision (forward or refuse), for metrics; not written.
    #[serde(skip)]
    pub decided_after: Option<std::time::Duration>,
    /// The upstream's time to headers, for metrics; not written.
    #[serde(skip)]
    pub upstream_took: Option<std::time::Duration>,
    /// List entries removed, for metrics; not written.
    #[serde(skip)]
    pub hidden_entries: usize,
    /// The request body was read (inspected) or handed on (streamed upstream); not written.
    #[serde(skip)]
    pub body_taken: bool,
    /// The request's method and raw target, for the explain hint of a denial; not written
    /// (the target may carry a page token).
    #[serde(skip)]
    pub request: Option<(String, String)>,
    /// What the shadow decision needs, when a candidate is configured; not written.
    #[serde(skip)]
    pub shadow: Option<crate::shadow::Capture>,
}

impl Record {
    /// Marks the moment the request was decided.
    pub fn decided(&mut self) {
        if self.decided_after.is_none() {
            self.decided_after = self.started.map(|s| s.elapsed());
        }
    }
}

/// Where records go.
#[derive(Debug)]
pub enum Sink {
    Stdout,
    File(Mutex<std::fs::File>),
    /// No audit (tests that do not look at it).
    Off,
}

#[derive(Debug)]
pub struct Audit {
    sink: Sink,
    /// A per-process prefix and a counter make request ids unique across replicas and restarts.
    prefix: u64,
    next: AtomicU64,
}

impl Audit {
    pub fn new(sink: Sink) -> Self {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        Self { sink, prefix: nanos ^ u64::from(std::process::id()).rotate_left(32), next: AtomicU64::new(0) }
    }

    /// A fresh record with its id and timestamp.
    pub fn start(&self, generation: u64, hash: &str) -> Record {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        Record {
            ts: rfc3339_now(),
            request_id: format!("{:016x}-{n:08x}", self.prefix),
            decision: "deny",
            policy_generation: generation,
            policy_hash: hash.to_owned(),
            started: Some(std::time::Instant::now()),
            ..Record::default()
        }
    }

    /// Writes `record` as one line. A failed write is logged, never fatal to the request.
    pub fn emit(&self, record: &Record) {
        let mut line = match serde_json::to_vec(record) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "cannot serialize an audit record");
                return;
            }
        };
        line.push(b'\n');
        let written = match &self.sink {
            Sink::Off => Ok(()),
            Sink::Stdout => std::io::stdout().lock().write_all(&line),
            Sink::File(file) => match file.lock() {
                Ok(mut f) => f.write_all(&line),
                Err(_) => Ok(()),
            },
        };
        if let Err(e) = written {
            tracing::warn!(error = %e, "cannot write an audit record");
        }
    }
}

/// Now, as RFC 3339 UTC with milliseconds.
pub fn rfc3339_now() -> String {
    rfc3339(SystemTime::now())
}

/// `t` as RFC 3339 UTC with milliseconds.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // civil-from-days (Howard Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339() {
        let ts = rfc3339_now();
        assert_eq!(ts.len(), 24, "{ts}");
        assert!(ts.starts_with("20") && ts.ends_with('Z') && &ts[10..11] == "T", "{ts}");
    }

    #[test]
    fn a_record_has_every_contract_key() {
        let audit = Audit::new(Sink::Off);
        let r = audit.start(3, "sha256:ab");
        let v: serde_json::Value = serde_json::to_value(&r).unwrap();
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
        assert_eq!(written.len(), 17, "the 16 contract keys, `policy_hash`, and nothing internal: {written:?}");
        assert_ne!(audit.start(3, "sha256:ab").request_id, r.request_id);
    }
}
