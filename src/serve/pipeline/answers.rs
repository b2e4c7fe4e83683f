//! The served answers to the sequencer's questions ([`crate::core::sequence::Answers`]): the
//! request body read bounded, and what only the upstream knows asked over the network. Each
//! answer is written into the request's context: its audit record, and the shadow capture when
//! a candidate policy is configured, so that the shadow decision replays it instead of asking
//! again.

use crate::core::decide::Collision;
use crate::core::iceberg::body::{Body as ParsedBody, SignRequest};
use crate::core::iceberg::routes::Route;
use crate::core::iceberg::{Namespace, OperationId, TableIdent};
use crate::core::policy::Snapshot;
use crate::core::roles::Narrowed;
use crate::core::sequence::{Answers, BodyIn, Existence};
use crate::error::{self, Stop};
use crate::ops::audit;
use crate::serve::pipeline::context::Context;
use crate::serve::pipeline::inspect::{self, RequestBody};
use crate::serve::pipeline::outbound::Outbound;
use crate::serve::pipeline::state::Shared;
use crate::serve::upstream::upstreams::{Lane, RouteError};
use crate::serve::{pipeline::directories, pipeline::upstream_calls, storage::vending};
use http::HeaderMap;
use hyper::body::Incoming;

/// One served request's answers.
#[derive(Debug)]
pub struct Served<'s, 'a> {
    shared: &'s Shared,
    snap: &'a Snapshot,
    method: &'a http::Method,
    caller: &'a HeaderMap,
    user: &'a str,
    cx: &'a mut Context,
    /// The body as it arrived, until the inspect stage takes it.
    incoming: Option<Incoming>,
    /// What the inspect stage left for forwarding.
    forward: Option<RequestBody>,
    /// How an authorized sign request is forwarded (docs/design.md §8).
    sign: Option<crate::serve::pipeline::signing::Forward>,
    /// The upstream of the request's catalog, once classified; `None` for a catalog no upstream
    /// serves, which the sequence refuses before asking anything.
    lane: Option<&'s Lane>,
}

impl<'s, 'a> Served<'s, 'a> {
    /// The answers of the request `parts` and `incoming` of `user`.
    pub fn new(
        shared: &'s Shared,
        snap: &'a Snapshot,
        parts: &'a http::request::Parts,
        user: &'a str,
        cx: &'a mut Context,
        incoming: Incoming,
    ) -> Self {
        let (method, caller) = (&parts.method, &parts.headers);
        Self { shared, snap, method, caller, user, cx, incoming: Some(incoming), forward: None, sign: None, lane: None }
    }

    /// What the forward stage takes once the sequence allowed the request: the body the
    /// inspect stage left (`None` for getConfig, whose body is never read), how an authorized
    /// sign request is forwarded, and the upstream of the classified catalog (`None` when no
    /// upstream serves it).
    pub fn into_forward(
        self,
    ) -> (Option<RequestBody>, Option<crate::serve::pipeline::signing::Forward>, Option<&'s Lane>) {
        (self.forward, self.sign, self.lane)
    }
}

impl<'s, 'a> Served<'s, 'a> {
    /// The upstream of the classified catalog; a refusal when there is none (the sequence
    /// refuses an unserved catalog before any question, so this is only a safeguard: nothing
    /// is ever asked of another catalog's upstream).
    fn lane(&self) -> Result<&'s Lane, crate::error::Refusal> {
        self.lane.ok_or_else(|| crate::error::Refusal::from(&RouteError::Unserved))
    }

    /// The caller's request as sent on its own behalf to `path` (narrowed active roles).
    fn outbound<'o>(&'o self, upstream: &'o Lane, path: &'o str, narrowed: &'o Narrowed) -> Outbound<'o> {
        Outbound {
            upstream,
            method: self.method,
            path,
            query: "",
            user: self.user,
            active_roles: narrowed.upstream_header.as_deref(),
            strip_delegation: false,
        }
    }
}

impl Answers for Served<'_, '_> {
    type Refusal = crate::error::Refusal;

    async fn body(&mut self, op: OperationId, limit: usize) -> Result<BodyIn, Stop> {
        let Some(incoming) = self.incoming.take() else { return Ok(BodyIn::Absent) };
        let timeout = self.shared.config.limits.body_read_timeout_ms;
        let mut read = inspect::read(op, self.caller, incoming, limit, timeout).await.map_err(error::stop(Some(op)))?;
        // a SigV4 upstream's signature binds the body's hash: a streamed body is held too
        if self.lane.is_some_and(|l| l.client.auth().needs_bodies())
            && let RequestBody::Stream(stream) = read
        {
            let held = inspect::hold(self.caller, stream, limit, timeout).await.map_err(error::stop(Some(op)))?;
            read = RequestBody::Held(held);
        }
        self.cx.body_taken = true;
        let received = match &read {
            RequestBody::Buffered(bytes) => BodyIn::Read(bytes.clone()),
            // held for the signature, not read to authorize
            RequestBody::Held(_) if op.has_request_body() => BodyIn::Streamed,
            RequestBody::Held(_) => BodyIn::Absent,
            // inspect::read refused a missing body of an operation that needs one already
            RequestBody::Stream(_) if op.has_request_body() => BodyIn::Streamed,
            RequestBody::Stream(_) => BodyIn::Absent,
        };
        if let Some(capture) = &mut self.cx.shadow {
            capture.body = received.clone();
        }
        self.forward = Some(read);
        Ok(received)
    }

    async fn missing(&mut self, route: &Route) -> bool {
        // without an upstream nothing is missing: the object stays denied
        let Ok(lane) = self.lane() else { return false };
        let missing = upstream_calls::upstream_says_missing(self.shared, lane, self.caller, route).await;
        if let Some(capture) = &mut self.cx.shadow {
            capture.exists = Some(!missing);
        }
        missing
    }

    async fn staged_locations(
        &mut self,
        route: &Route,
        catalog: &str,
        narrowed: &Narrowed,
        tables: &[TableIdent],
    ) -> Vec<(TableIdent, String)> {
        let Ok(lane) = self.lane() else { return Vec::new() };
        let out = self.outbound(lane, &route.canonical_path, narrowed);
        let found = upstream_calls::staged_locations(self.shared, self.caller, &out, (route, catalog), tables).await;
        if let Some(capture) = &mut self.cx.shadow {
            capture.staged.clone_from(&found);
        }
        found
    }

    async fn namespace_locations(
        &mut self,
        route: &Route,
        _catalog: &str,
        narrowed: &Narrowed,
        namespaces: &[&Namespace],
    ) -> Result<Vec<(Namespace, String)>, Stop> {
        let lane = self.lane().map_err(|r| Stop::plain(r, Some(route.operation)))?;
        let out = self.outbound(lane, &route.canonical_path, narrowed);
        let found = directories::namespace_locations(self.shared, self.caller, &out, route, namespaces).await;
        if let Some(capture) = &mut self.cx.shadow {
            capture.namespace_locations = Some(found.clone());
        }
        found.map_err(|refusal| Stop::plain(refusal, Some(route.operation)))
    }

    async fn table_metadata(
        &mut self,
        route: &Route,
        _catalog: &str,
        narrowed: &Narrowed,
        tables: &[TableIdent],
    ) -> Result<Vec<(TableIdent, serde_json::Value)>, Stop> {
        let lane = self.lane().map_err(|r| Stop::plain(r, Some(route.operation)))?;
        let out = self.outbound(lane, &route.canonical_path, narrowed);
        let found = upstream_calls::table_metadata(self.shared, self.caller, &out, route, tables).await;
        if let Some(capture) = &mut self.cx.shadow {
            capture.table_metadata = Some(found.clone());
        }
        found.map_err(|refusal| Stop::plain(refusal, Some(route.operation)))
    }

    async fn collision(&mut self, route: &Route, collision: &Collision) -> Existence {
        let existence = match self.lane() {
            Ok(lane) => upstream_calls::collision(self.shared, lane, self.caller, route, collision).await,
            Err(_) => Existence::Unknown,
        };
        if let Some(capture) = &mut self.cx.shadow {
            capture.collisions.push((collision.clone(), existence));
        }
        existence
    }

    async fn sign_location(&mut self, route: &Route, narrowed: &Narrowed, request: &SignRequest) -> Result<(), Stop> {
        let lane = self.lane().map_err(|r| Stop::plain(r, Some(route.operation)))?;
        let table = vending::table_path(route, None).unwrap_or_default();
        let lookup = Outbound { strip_delegation: true, ..self.outbound(lane, &table, narrowed) };
        let checked =
            upstream_calls::sign_destination(self.shared, self.caller, &lookup, (request, route.prefix.as_deref()))
                .await;
        if let Some(capture) = &mut self.cx.shadow {
            capture.sign = Some(checked.as_ref().map(|_| ()).map_err(Clone::clone));
        }
        self.sign = Some(checked.map_err(|refusal| Stop::plain(refusal, Some(route.operation)))?);
        Ok(())
    }

    fn classified(&mut self, route: &Route, catalog: &str) {
        self.lane = self.shared.upstreams.for_catalog(catalog);
        self.cx.upstream = self.lane.map(|l| std::sync::Arc::clone(&l.name));
        self.cx.operation = Some(route.operation);
        self.cx.objects = audit::objects::of_path(route, catalog);
    }

    fn narrowed(&mut self, narrowed: &Narrowed) {
        let names = |roles: &[crate::core::policy::snapshot::RoleId]| {
            roles.iter().map(|r| self.snap.role_name(*r).to_owned()).collect()
        };
        let (held, active) = (names(&narrowed.held_ordered), names(&narrowed.active_ordered));
        self.cx.groups = Some(narrowed.groups.iter().map(ToString::to_string).collect());
        self.cx.held_roles = Some(held);
        self.cx.active_roles = Some(active);
    }

    fn inspected(&mut self, route: &Route, catalog: &str, body: &ParsedBody) {
        self.cx.objects.extend(audit::objects::of_body(route, catalog, body));
    }
}
