//! Shadow decisions (DESIGN.md §9): each request decided again against the candidate policy,
//! never enforced; a difference from the live policy in status, credential scope or visible
//! list entries is logged and counted.

use crate::core::decide::{self, Input, Outcome, Settings};
use crate::core::policy::Snapshot;
use crate::core::roles::Principal;
use bytes::Bytes;

/// What the request path learned that both decisions need.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    pub method: String,
    pub target: String,
    pub principal: Option<Principal>,
    pub active_roles: Option<Vec<u8>>,
    pub body: Option<Bytes>,
    /// The upstream's answer to the existence lookup of 403-or-404, when one was made.
    pub exists: Option<bool>,
    /// The upstream's first list page, for list operations.
    pub list_response: Option<Bytes>,
}

/// One difference between the live and the candidate decision.
#[derive(Debug, PartialEq, Eq)]
pub struct Disagreement {
    pub operation: &'static str,
    pub live: String,
    pub candidate: String,
}

/// Decides `capture` with both snapshots (and the request's view of the ownership store);
/// `None` when they agree (or the request never got far enough to have a principal).
pub fn compare(
    live: &Snapshot,
    candidate: &Snapshot,
    owners: &crate::core::ownership::OwnerIndex,
    settings: &Settings,
    capture: &Capture,
) -> Option<Disagreement> {
    let principal = capture.principal.clone()?;
    let input = Input {
        method: &capture.method,
        target: &capture.target,
        principal,
        active_roles: capture.active_roles.as_deref(),
        body: capture.body.as_deref(),
        exists: capture.exists.unwrap_or(true),
        list_response: capture.list_response.as_deref(),
    };
    let a = decide::decide_with_owners(live, owners, settings, &input);
    let b = decide::decide_with_owners(candidate, owners, settings, &input);
    let (sa, sb) = (summary(&a), summary(&b));
    if sa == sb {
        return None;
    }
    let operation = a.operation.or(b.operation).map_or("unrecognized", |o| o.as_str());
    Some(Disagreement { operation, live: sa, candidate: sb })
}

/// Status, credential scope and visible entries: what a disagreement is made of.
fn summary(o: &Outcome) -> String {
    let mut s = format!("status {}", o.status);
    if let Some(scope) = o.credential {
        s.push_str(&format!(", credential {}", scope.as_str()));
    }
    if let Some(visible) = &o.visible {
        let entries: Vec<&str> = visible.iter().map(|v| v.get()).collect();
        s.push_str(&format!(", visible [{}]", entries.join(",")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::ownership::OwnerIndex;

    fn snap(select: &str) -> Snapshot {
        let yaml = format!(
            r#"
version: 1
metalake: lake
default_catalog: prod
users:
  - {{ name: ann, roles: [reader] }}
roles:
  - name: reader
    securableObjects:
      - {{ type: CATALOG, fullName: prod, privileges: [{{ name: USE_CATALOG, condition: ALLOW }}] }}
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - {{ name: USE_SCHEMA, condition: ALLOW }}
          - {{ name: SELECT_TABLE, condition: {select} }}
"#
        );
        crate::core::policy::load_str("p.yaml", &yaml).unwrap().snapshot
    }

    fn capture(target: &str, list: Option<&str>) -> Capture {
        Capture {
            method: "GET".into(),
            target: target.into(),
            principal: Some(Principal { user: "ann".into(), groups: vec![], claim_roles: None }),
            list_response: list.map(|l| Bytes::from(l.to_owned())),
            ..Capture::default()
        }
    }

    #[test]
    fn only_requests_decided_differently_are_disagreements() {
        let settings = Settings::default();
        let (live, candidate) = (snap("ALLOW"), snap("DENY"));
        let load = capture("/v1/prod/namespaces/sales/tables/t", None);
        let d = compare(&live, &candidate, OwnerIndex::empty(), &settings, &load).unwrap();
        assert_eq!(d.operation, "loadTable");
        assert_eq!((d.live.as_str(), d.candidate.as_str()), ("status 200, credential read", "status 403"));
        assert_eq!(compare(&live, &live, OwnerIndex::empty(), &settings, &load), None);
        // listing is allowed by both: the entries are what differs
        let list = capture("/v1/prod/namespaces/sales", None);
        assert_eq!(compare(&live, &candidate, OwnerIndex::empty(), &settings, &list), None);
        let no_principal = Capture { principal: None, ..load };
        assert_eq!(compare(&live, &candidate, OwnerIndex::empty(), &settings, &no_principal), None);
    }
}
