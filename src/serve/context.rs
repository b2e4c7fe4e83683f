//! One request's context: its audit record, and what the serving layer keeps beside it as the
//! stages run (timings for metrics, whether the body was taken, the request line and the
//! identity's own groups for a denial's hint, the shadow capture), none of which is written.

use crate::core::roles::Principal;
use crate::ops::audit::Record;
use crate::ops::shadow::Capture;
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Context {
    /// The audit line's content, filled as the stages learn it.
    pub audit: Record,
    /// When the request arrived.
    pub started: Instant,
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
    /// The groups the caller's identity gave, for the explain hint of a denial (which names
    /// nothing from the policy, so not the audit's `groups`, which adds the policy's).
    pub identity_groups: Vec<String>,
    /// What the shadow decision needs, when a candidate is configured.
    pub shadow: Option<Capture>,
    /// An authorized sign request as forwarded: its answer is checked and marked by it.
    pub sign: Option<crate::serve::signing::Forward>,
}

impl Context {
    /// The context of a request that arrived now, audited as `audit`; `shadow` when a
    /// candidate policy is configured.
    pub fn new(audit: Record, shadow: bool) -> Self {
        Self {
            audit,
            started: Instant::now(),
            decided_after: None,
            upstream_took: None,
            hidden_entries: 0,
            body_taken: false,
            request: None,
            identity_groups: Vec::new(),
            shadow: shadow.then(Capture::default),
            sign: None,
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
        self.audit.user = Some(principal.user.clone());
        self.audit.groups = Some(principal.groups.clone());
        self.identity_groups.clone_from(&principal.groups);
        self.audit.active_roles_header = active_roles.map(|v| String::from_utf8_lossy(v).into_owned());
        if let Some(capture) = &mut self.shadow {
            capture.principal = Some(principal.clone());
            capture.active_roles = active_roles.map(<[u8]>::to_vec);
        }
    }

    /// Marks the moment the request was decided (the first time only).
    pub fn decided(&mut self) {
        if self.decided_after.is_none() {
            self.decided_after = Some(self.started.elapsed());
        }
    }

    /// Notes the answer's status and the request's duration, once it is answered.
    pub fn answered(&mut self, status: u16) {
        self.audit.status = status;
        self.audit.duration_ms = self.started.elapsed().as_secs_f64() * 1000.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_keeps_the_identity_groups_and_the_audit_line_none_of_the_context() {
        let mut cx = Context::new(Record::default(), true);
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
        let line = serde_json::to_string(&cx.audit).unwrap();
        assert!(!line.contains("pageToken"), "the raw target is never audited: {line}");
        assert!(line.contains(r#""active_roles_header":"analyst""#) && line.contains(r#""status":403"#), "{line}");
    }
}
