//! One request's context: what the stages learned as they ran (who, what, the decision, the
//! upstream's status, timings, whether the body was taken, the request line for a denial's
//! hint, the shadow capture). The audit line and the metric labels are built from it at the
//! end, so that nothing is written into a record while the request runs.

use crate::core::iceberg::OperationId;
use crate::core::roles::Principal;
use crate::ops::audit::{Object, Record};
use crate::ops::shadow::Capture;
use std::time::{Duration, Instant};

/// What one request learned as the stages ran; the audit line and the metric labels are built
/// from it once the request is answered ([`Context::record`]).
#[derive(Debug)]
pub struct Context {
    /// When the request arrived.
    pub started: Instant,
    /// The caller's user name, once identified.
    pub user: Option<String>,
    /// The groups the caller's identity gave: the explain hint of a denial names them (nothing
    /// from the policy); the audit line has them until narrowing adds the policy's.
    pub identity_groups: Vec<String>,
    /// The raw active-roles header the caller sent.
    pub active_roles_header: Option<String>,
    /// The operation, once classified (or named by the stage that stopped the request).
    pub operation: Option<OperationId>,
    /// The objects the path and the body name.
    pub objects: Vec<Object>,
    /// After narrowing: the caller's groups with the policy's, its held and its active roles.
    pub groups: Option<Vec<String>>,
    pub held_roles: Option<Vec<String>>,
    pub active_roles: Option<Vec<String>>,
    /// Forwarded (every stage allowed it).
    pub allowed: bool,
    /// Why it was allowed or refused.
    pub reason: Option<String>,
    /// What was done to vended credentials.
    pub credential: Option<&'static str>,
    /// The upstream the request's catalog (or getConfig's warehouse) is served by.
    pub upstream: Option<std::sync::Arc<str>>,
    pub upstream_status: Option<u16>,
    /// The answer's status and arrival to answer, once answered.
    pub status: u16,
    pub answered_after: Duration,
    /// Arrival to decision (forward or refuse).
    pub decided_after: Option<Duration>,
    /// The upstream's time to headers.
    pub upstream_took: Option<Duration>,
    /// List entries removed.
    pub hidden_entries: usize,
    /// The request body was read (inspected) or handed on (streamed upstream).
    pub body_taken: bool,
    /// The request's method and raw target, for the explain hint of a denial (never audited:
    /// the target may carry a page token).
    pub request: Option<(String, String)>,
    /// What the shadow decision needs, when a candidate is configured.
    pub shadow: Option<Capture>,
}

impl Context {
    /// The context of a request that arrived now; `shadow` when a candidate policy is
    /// configured.
    pub fn new(shadow: bool) -> Self {
        Self {
            started: Instant::now(),
            user: None,
            identity_groups: Vec::new(),
            active_roles_header: None,
            operation: None,
            objects: Vec::new(),
            groups: None,
            held_roles: None,
            active_roles: None,
            allowed: false,
            reason: None,
            credential: None,
            upstream: None,
            upstream_status: None,
            status: 0,
            answered_after: Duration::ZERO,
            decided_after: None,
            upstream_took: None,
            hidden_entries: 0,
            body_taken: false,
            request: None,
            shadow: shadow.then(Capture::default),
        }
    }

    /// Notes the request line (and gives it to the shadow decision, when there is one).
    pub fn requested(&mut self, method: &str, target: &str) {
        self.request = Some((method.to_owned(), target.to_owned()));
        if let Some(capture) = &mut self.shadow {
            method.clone_into(&mut capture.method);
            target.clone_into(&mut capture.target);
        }
    }

    /// Notes who is calling and the active-roles header they sent.
    pub fn identified(&mut self, principal: &Principal, active_roles: Option<&[u8]>) {
        self.user = Some(principal.user.clone());
        self.identity_groups.clone_from(&principal.groups);
        self.active_roles_header = active_roles.map(|v| String::from_utf8_lossy(v).into_owned());
        if let Some(capture) = &mut self.shadow {
            capture.principal = Some(principal.clone());
            capture.active_roles = active_roles.map(<[u8]>::to_vec);
        }
    }

    /// Notes the forwarded request's answer: its status, and the time since it was `sent`
    /// (the one place both are written, for the audit line and the metrics).
    pub fn forwarded(&mut self, sent: Instant, status: http::StatusCode) {
        self.upstream_took = Some(sent.elapsed());
        self.upstream_status = Some(status.as_u16());
    }

    /// Marks the moment the request was decided (the first time only).
    pub fn decided(&mut self) {
        if self.decided_after.is_none() {
            self.decided_after = Some(self.started.elapsed());
        }
    }

    /// Notes the answer's status and the request's duration, once it is answered.
    pub fn answered(&mut self, status: u16) {
        self.status = status;
        self.answered_after = self.started.elapsed();
    }

    /// The audit line of the answered request: `start` (its id and arrival time, and the
    /// policy it was decided by) with what the request learned.
    pub fn record(self, start: Record) -> Record {
        let identified = self.user.is_some();
        Record {
            user: self.user,
            groups: self.groups.or_else(|| identified.then_some(self.identity_groups)),
            held_roles: self.held_roles,
            active_roles: self.active_roles,
            active_roles_header: self.active_roles_header,
            operation: self.operation.map(OperationId::as_str),
            objects: self.objects,
            decision: if self.allowed { "allow" } else { "deny" },
            status: self.status,
            reason: self.reason,
            credential: self.credential,
            upstream: self.upstream,
            upstream_status: self.upstream_status,
            duration_ms: self.answered_after.as_secs_f64() * 1000.0,
            ..start
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_keeps_the_identity_groups_and_the_audit_line_none_of_the_context() {
        let mut cx = Context::new(true);
        cx.requested("GET", "/v1/prod/namespaces?pageToken=secret");
        let principal = Principal { user: "ann".into(), groups: vec!["eng".into()], claim_roles: None };
        cx.identified(&principal, Some(b"analyst"));
        cx.decided();
        let first = cx.decided_after;
        cx.decided();
        assert_eq!(cx.decided_after, first, "the first decision's moment is kept");
        cx.answered(403);
        assert_eq!(cx.identity_groups, ["eng"]);
        assert_eq!(cx.shadow.as_ref().map(|c| c.target.as_str()), Some("/v1/prod/namespaces?pageToken=secret"));
        let line = serde_json::to_string(&cx.record(Record::default())).unwrap();
        assert!(!line.contains("pageToken"), "the raw target is never audited: {line}");
        assert!(line.contains(r#""active_roles_header":"analyst""#) && line.contains(r#""status":403"#), "{line}");
    }
}
