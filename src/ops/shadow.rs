//! Shadow decisions (docs/design.md §9): each request decided again against the candidate policy,
//! never enforced; a difference from the live policy in status, credential scope or visible
//! list entries is logged and counted.

use crate::core::decide::{Collision, Settings};
use crate::core::iceberg::body::SignRequest;
use crate::core::iceberg::routes::Route;
use crate::core::iceberg::{Namespace, OperationId, TableIdent};
use crate::core::offline::{self, Input, Outcome};
use crate::core::policy::Snapshot;
use crate::core::roles::{Narrowed, Principal};
use crate::core::sequence::{Answers, BodyIn, Existence};
use crate::error::{Refusal, Stop};
use bytes::Bytes;

/// What the request path learned that both decisions need: the request, and every answer the
/// upstream gave the served sequence, so that the shadow decision predicts enforcement without
/// asking again.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    pub method: String,
    pub target: String,
    pub principal: Option<Principal>,
    pub active_roles: Option<Vec<u8>>,
    pub body: BodyIn,
    /// The upstream's answer to the existence lookup of 403-or-404, when one was made.
    pub exists: Option<bool>,
    /// The locations the upstream assigned to staged creates, when asked.
    pub staged: Vec<(TableIdent, String)>,
    /// The namespace directories the location rule asked for, and the answer.
    pub namespace_locations: Option<Result<Vec<(Namespace, String)>, Refusal>>,
    /// The table metadata a commit to a restricted table asked for, and the answer.
    pub table_metadata: Option<Result<Vec<(TableIdent, serde_json::Value)>, Refusal>>,
    /// The collision questions asked, and their answers.
    pub collisions: Vec<(Collision, Existence)>,
    /// The sign-location check's outcome, when one was made.
    pub sign: Option<Result<(), Refusal>>,
    /// The upstream's first list page, for list operations.
    pub list_response: Option<Bytes>,
}

/// The answers a served request captured. A question the served sequence never asked (the
/// candidate policy reached a stage the live one did not) is answered as `explain` answers it
/// (docs/design.md §10).
struct Recorded<'a>(&'a Capture);

impl Answers for Recorded<'_> {
    type Refusal = Refusal;

    async fn body(&mut self, _op: OperationId, _limit: usize) -> Result<BodyIn, Stop> {
        Ok(self.0.body.clone())
    }

    async fn missing(&mut self, _route: &Route) -> bool {
        self.0.exists == Some(false)
    }

    async fn staged_locations(
        &mut self,
        _route: &Route,
        _catalog: &str,
        _narrowed: &Narrowed,
        tables: &[TableIdent],
    ) -> Vec<(TableIdent, String)> {
        self.0.staged.iter().filter(|(t, _)| tables.contains(t)).cloned().collect()
    }

    async fn namespace_locations(
        &mut self,
        route: &Route,
        _catalog: &str,
        _narrowed: &Narrowed,
        namespaces: &[&Namespace],
    ) -> Result<Vec<(Namespace, String)>, Stop> {
        match &self.0.namespace_locations {
            Some(Ok(found)) => Ok(found.iter().filter(|(n, _)| namespaces.contains(&n)).cloned().collect()),
            Some(Err(refusal)) => Err(Stop::plain(refusal.clone(), Some(route.operation))),
            None => Ok(Vec::new()),
        }
    }

    async fn table_metadata(
        &mut self,
        route: &Route,
        _catalog: &str,
        _narrowed: &Narrowed,
        tables: &[TableIdent],
    ) -> Result<Vec<(TableIdent, serde_json::Value)>, Stop> {
        match &self.0.table_metadata {
            Some(Ok(found)) => Ok(found.iter().filter(|(t, _)| tables.contains(t)).cloned().collect()),
            Some(Err(refusal)) => Err(Stop::plain(refusal.clone(), Some(route.operation))),
            None => Ok(Vec::new()),
        }
    }

    async fn collision(&mut self, _route: &Route, collision: &Collision) -> Existence {
        let asked = self.0.collisions.iter().find(|(c, _)| c == collision);
        asked.map_or(Existence::Missing, |(_, existence)| *existence)
    }

    async fn sign_location(&mut self, route: &Route, _narrowed: &Narrowed, _request: &SignRequest) -> Result<(), Stop> {
        match &self.0.sign {
            Some(Err(refusal)) => Err(Stop::plain(refusal.clone(), Some(route.operation))),
            _ => Ok(()),
        }
    }
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
    let (a, b) =
        (decide_captured(live, owners, settings, capture)?, decide_captured(candidate, owners, settings, capture)?);
    let (sa, sb) = (summary(&a), summary(&b));
    if sa == sb {
        return None;
    }
    let operation = a.operation.or(b.operation).map_or("unrecognized", |o| o.as_str());
    Some(Disagreement { operation, live: sa, candidate: sb })
}

/// Decides `capture` with `snap` as the served request would have been decided, from its
/// answers; `None` without a principal.
fn decide_captured(
    snap: &Snapshot,
    owners: &crate::core::ownership::OwnerIndex,
    settings: &Settings,
    capture: &Capture,
) -> Option<Outcome> {
    let input = Input {
        method: &capture.method,
        target: &capture.target,
        principal: capture.principal.clone()?,
        active_roles: capture.active_roles.as_deref(),
        body: None,
        exists: capture.exists.unwrap_or(true),
        list_response: capture.list_response.as_deref(),
        namespace_location: None,
        table_metadata: None,
    };
    Some(offline::decide_with_answers(snap, owners, settings, &input, &mut Recorded(capture)))
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

    /// A create whose name the served request found taken, and a sign request whose location
    /// the served check refused: the replayed live decision is what enforcement answered.
    #[test]
    fn the_live_decision_replays_the_collision_and_sign_answers_of_the_served_request() {
        let yaml = r#"
version: 1
metalake: lake
default_catalog: prod
users:
  - { name: ann, roles: [writer] }
roles:
  - name: writer
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: CREATE_TABLE, condition: ALLOW }
          - { name: SELECT_TABLE, condition: ALLOW }
"#;
        let live = crate::core::policy::load_str("p.yaml", yaml).unwrap().snapshot;
        let settings = Settings::default();
        let sales = crate::core::iceberg::Namespace::new(vec!["sales".into()], &[]).unwrap();
        let t = TableIdent::new(sales, "t".into()).unwrap();
        let create = Capture {
            method: "POST".into(),
            body: BodyIn::Read(Bytes::from_static(br#"{"name":"t","schema":{"type":"struct","fields":[]}}"#)),
            ..capture("/v1/prod/namespaces/sales/tables", None)
        };
        let status = |c: &Capture| decide_captured(&live, OwnerIndex::empty(), &settings, c).unwrap().status;
        assert_eq!(status(&create), 200, "nothing was asked: nothing collides");
        let taken = Capture {
            collisions: vec![(Collision::ObjectOverNamespace(t.clone()), Existence::Exists)],
            ..create.clone()
        };
        assert_eq!(status(&taken), 409);
        let unknown = Capture { collisions: vec![(Collision::ObjectOverNamespace(t), Existence::Unknown)], ..create };
        assert_eq!(status(&unknown), 503);
        let sign = Capture {
            method: "POST".into(),
            body: BodyIn::Read(Bytes::from_static(
                br#"{"region":"us-east-1","method":"GET","uri":"https://lake.s3.amazonaws.com/wh/x","headers":{}}"#,
            )),
            ..capture("/v1/prod/namespaces/sales/tables/t/sign", None)
        };
        assert_eq!(status(&sign), 200);
        let refused = Capture { sign: Some(Err(Refusal::forbidden("not authorized to sign"))), ..sign };
        assert_eq!(status(&refused), 403);
    }
}
