//! Stage `rewrite`: what icegate changes in an upstream answer before the caller sees it —
//! lists filtered to what the caller may see ([`list`]), getConfig cleaned ([`config`]),
//! vended credentials kept, stripped or downscoped ([`crate::serve::storage::vending`]), `stack` traces
//! removed from errors ([`errors`]), `no-store` on answers that may carry credentials; a
//! redirect, which could send the client around icegate, is refused.

pub mod body;
mod config;
mod errors;
mod list;
pub mod restrict;

pub use body::{MAX_PAGES_WITHOUT_SIZE, MAX_REWRITE_BYTES, RewriteError, collect};
pub use config::clean_config;
pub use errors::strip_stack;
pub use list::{Filtered, ListRead, filter_list};

use crate::core::credentials::Action;
use crate::core::iceberg::OperationId;
use crate::core::iceberg::body::Body as ParsedBody;
use crate::core::iceberg::list::{Entry, ListKind};
use crate::core::iceberg::routes::Route;
use crate::error::{self, Refusal, Stop};
use crate::serve::pipeline::context::Context;
use crate::serve::pipeline::outbound::Outbound;
use crate::serve::pipeline::outbound::send;
use crate::serve::pipeline::state::Shared;
use crate::serve::pipeline::upstream_calls::{self, table_locations};
use crate::serve::upstream::forward::{self, Body};
use crate::serve::{pipeline::staged, pipeline::tokens, storage::vending};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;

/// How the rewrite stage asks the upstream again (further list pages, a table's locations):
/// with the caller's headers and the forwarded request's settings.
#[derive(Clone, Copy, Debug)]
pub struct FollowUp<'a> {
    pub caller: &'a HeaderMap,
    pub out: &'a Outbound<'a>,
}

/// What the rewrite stage does with the answer of a credential-bearing request.
#[derive(Debug)]
pub struct Vend<'a> {
    action: Action,
    catalog: &'a str,
    user: &'a str,
    /// The table's path after the base path (for a create, the table it creates).
    table_path: String,
    /// A stage-create's table: the location in the answer is remembered.
    staged: Option<crate::core::iceberg::TableIdent>,
    /// `catalog.schema.table`, for session names, tags and the cache key.
    table_name: String,
    active_roles: Vec<String>,
    /// The request asked for vended credentials (`X-Iceberg-Access-Delegation`).
    asked: bool,
    /// The read restrictions a trusted reader's answer carries (docs/design.md §8).
    restrictions: Option<&'a crate::core::restrictions::Applied>,
}

impl<'a> Vend<'a> {
    /// What vending needs for the answer to a request whose credentials get `action`, or `None`
    /// when the request names no table (its answer then passes as it came). `cx` holds what
    /// the earlier stages learned: the object the path names and the active roles.
    pub fn of(
        action: Action,
        (route, body): (&Route, Option<&ParsedBody>),
        (catalog, user): (&'a str, &'a str),
        cx: &Context,
        caller: &HeaderMap,
    ) -> Option<Self> {
        let created = vending::Created::of(route, body);
        let object = cx.objects.first().map_or("", |o| o.full_name.as_str());
        Some(Self {
            action,
            catalog,
            user,
            table_name: created.table_name(object),
            table_path: created.table_path?,
            staged: created.staged,
            active_roles: cx.active_roles.clone().unwrap_or_default(),
            asked: asks_for_vended_credentials(caller),
            restrictions: None,
        })
    }

    /// The answer carries `restrictions`, when there are any: only a caller trusted to
    /// enforce them gets here with some (docs/design.md §8).
    pub fn restricted(self, restrictions: Option<&'a crate::core::restrictions::Applied>) -> Self {
        Self { restrictions, ..self }
    }

    fn caller(&self) -> vending::Caller<'_> {
        vending::Caller {
            user: self.user,
            catalog: self.catalog,
            active_roles: &self.active_roles,
            table: &self.table_name,
            asked: self.asked,
        }
    }
}

/// What the rewrite stage checks an answer against beside the operation's own rules.
#[derive(Debug)]
pub enum Needs<'a> {
    Nothing,
    /// A credential-bearing answer: its credentials are rewritten.
    Vend(Vend<'a>),
    /// A getConfig answer: the `prefix` it gives clients must name a catalog of this policy.
    Config(&'a crate::core::policy::Snapshot),
    /// The answer to an authorized sign request, as it was forwarded: checked and marked by it.
    Sign(&'a crate::serve::pipeline::signing::Forward),
}

impl<'a> From<Option<Vend<'a>>> for Needs<'a> {
    fn from(vend: Option<Vend<'a>>) -> Self {
        vend.map_or(Self::Nothing, Self::Vend)
    }
}

fn asks_for_vended_credentials(headers: &HeaderMap) -> bool {
    headers
        .get_all("x-iceberg-access-delegation")
        .iter()
        .any(|v| v.to_str().is_ok_and(|v| v.split(',').any(|m| m.trim().eq_ignore_ascii_case("vended-credentials"))))
}

/// The stage: `response` as the caller gets it, and what was done to vended credentials.
/// `needs` says what else the answer is checked against; `visible`, which list entries the
/// caller may see.
pub async fn respond(
    shared: &Shared,
    route: &Route,
    needs: Needs<'_>,
    response: Response<Incoming>,
    visible: impl FnMut(&Entry) -> bool,
    follow_up: FollowUp<'_>,
    cx: &mut Context,
) -> Result<(Response<Body>, Option<Action>), Stop> {
    let op = route.operation;
    let (mut head, body) = response.into_parts();
    let (vend, snapshot, sign) = match needs {
        Needs::Nothing => (None, None, None),
        Needs::Vend(vend) => (Some(vend), None, None),
        Needs::Config(snapshot) => (None, Some(snapshot), None),
        Needs::Sign(sign) => (None, None, Some(sign)),
    };
    crate::serve::pipeline::accept::strip_hop_by_hop(&mut head.headers);
    if vend.is_some() || op == OperationId::GetConfig || sign.is_some_and(|s| !s.cacheable()) {
        head.headers.insert(http::header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    let fail = error::stop::<RewriteError>(Some(op));
    // `304 Not Modified` has no body to rewrite.
    if head.status.is_redirection() && head.status != StatusCode::NOT_MODIFIED {
        return Err(Stop::plain(Refusal::upstream_redirect(head.status.as_u16()), Some(op)));
    }
    // Every success of an inspected operation is inspected, whatever its 2xx status (an
    // upstream answering 203 or 206 gets no pass for it, docs/design.md §7).
    let success = head.status.is_success();
    // the answer to a HEAD has no body to give
    let head_request = matches!(op, OperationId::NamespaceExists | OperationId::TableExists | OperationId::ViewExists);
    let bytes = if (head.status.is_client_error() || head.status.is_server_error()) && !head_request {
        let (bytes, replaced) = strip_stack(collect(body).await.map_err(fail)?, head.status);
        if replaced {
            head.headers.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        bytes
    } else if let (Some(kind), true) = (ListKind::for_operation(op), success) {
        let first = collect(body).await.map_err(fail)?;
        if let Some(capture) = &mut cx.shadow {
            capture.list_response = Some(first.clone());
        }
        let filtered = list_pages(shared, route, kind, first, visible, follow_up).await.map_err(fail)?;
        cx.hidden_entries = filtered.hidden;
        Bytes::from(filtered.body)
    } else if let (Some(sign), true) = (sign.filter(|s| s.body_sha256.is_some()), success) {
        // a signature is relayed only when it binds the body that was checked
        let bytes = collect(body).await.map_err(fail)?;
        sign.check_answer(&bytes).map_err(|r| Stop::plain(r, Some(op)))?;
        bytes
    } else if op == OperationId::GetConfig && success {
        let bytes = collect(body).await.map_err(fail)?;
        let upstream = follow_up.out.upstream;
        upstream.signers.remember_answer(&bytes, follow_up.out.query);
        // without the policy, no prefix can be shown to name a catalog; with several upstreams
        // it must name one this upstream serves (docs/design.md §7)
        let names_catalog = |p: &str| {
            snapshot
                .and_then(|s| s.catalog_for_config_prefix(p))
                .is_some_and(|c| shared.upstreams.for_catalog(&c).is_some_and(|served| std::ptr::eq(served, upstream)))
        };
        clean_config(&bytes, &shared.config, names_catalog).map_err(fail)?
    } else if let (Some(vend), true) = (vend, success) {
        let bytes = collect(body).await.map_err(fail)?;
        let (chunks, done) = vended(shared, op, &vend, bytes, follow_up).await?;
        head.headers.insert(http::header::CONTENT_LENGTH, HeaderValue::from(chunks.len()));
        return Ok((Response::from_parts(head, forward::ChunkBody(chunks).boxed()), Some(done)));
    } else {
        return Ok((Response::from_parts(head, forward::streamed(body)), None));
    };
    head.headers.insert(http::header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    Ok((Response::from_parts(head, forward::full(bytes)), None))
}

/// A list answer filtered, with further pages asked as the forwarded request was.
async fn list_pages(
    shared: &Shared,
    route: &Route,
    kind: ListKind,
    first: Bytes,
    visible: impl FnMut(&Entry) -> bool,
    FollowUp { caller, out }: FollowUp<'_>,
) -> Result<Filtered, RewriteError> {
    let fetch = |token: String, size: Option<u32>| {
        let mut route = route.clone();
        route.query.page_token = Some(token);
        if size.is_some() {
            route.query.page_size = size;
        }
        async move {
            let query = route.query.canonical();
            let next = Outbound { query: &query, ..*out };
            let response = send(shared, caller, &next, forward::Outgoing::empty())
                .await
                .map_err(|s| RewriteError::PageRequest(Box::new(s.refusal)))?;
            let status = response.status().as_u16();
            Ok((status, collect(response.into_body()).await?))
        }
    };
    let read = ListRead {
        kind,
        separators: &shared.settings.namespace_separators,
        page_size: route.query.page_size,
        max_pages: shared.config.lists.max_upstream_pages,
    };
    let seal = |t: &str| shared.tokens.seal(&tokens::binding(out.user, route), t);
    filter_list(read, first, visible, fetch, seal).await
}

/// A credential-bearing answer with its credentials rewritten as `vend` says (a stage-create's
/// assigned location remembered first).
async fn vended(
    shared: &Shared,
    op: OperationId,
    vend: &Vend<'_>,
    bytes: Bytes,
    FollowUp { caller, out }: FollowUp<'_>,
) -> Result<(crate::core::credentials::response::Chunks, Action), Stop> {
    let bytes = match vend.restrictions {
        Some(applied) => restrict::restricted(&bytes, applied, op).map_err(error::stop(Some(op)))?,
        None => bytes,
    };
    if let Some(table) = &vend.staged
        && let Some(location) = staged::assigned_location(&bytes)
    {
        upstream_calls::remember_staged(shared, vend.user, vend.catalog, table, location).await;
    }
    let lookup = Outbound { path: &vend.table_path, query: "", strip_delegation: true, ..*out };
    let locations = || table_locations(shared, caller, &lookup);
    out.upstream
        .vending
        .rewrite(op, bytes, vend.action, vend.caller(), &vend.table_path, locations)
        .await
        .map_err(error::stop(Some(op)))
}
