//! Route classification: method + canonical target → Iceberg operation and its objects, for
//! every path and method of the Iceberg REST and S3 signer OpenAPI specs.

use super::names::NameRules;
use super::path::{PathError, Segment, decode_path_part, decode_query_part, encode, is_unreserved};
use super::prefix::{Match, Prefixes};
use super::{Namespace, OperationId};
use std::borrow::Cow;

/// Listener-side settings that change how a target is read.
#[derive(Clone, Copy, Debug, Default)]
pub struct RouteOptions<'a> {
    /// A base path in front of `/v1` (e.g. `/iceberg`), without a trailing slash; empty for none.
    pub base_path: &'a str,
    /// Extra namespace separators the upstream accepts (`upstream.namespace_separators`).
    pub namespace_separators: &'a [String],
    /// Which prefixes name a catalog that folds names to lower case; none when `None`.
    pub folding: Option<Folding<'a>>,
    /// The policy's declared prefixes that hold `/` (docs/design.md §2), matched before any other
    /// path rule; none when `None`.
    pub prefixes: Option<&'a Prefixes>,
}

/// Whether the catalog a `{prefix}` names (`None`: the form without a prefix) folds names to
/// lower case (docs/design.md §2). The names of such a catalog are folded in the route and in the
/// canonical path and query forwarded, so that what is forwarded is what was authorized.
#[derive(Clone, Copy)]
pub struct Folding<'a>(pub &'a dyn Fn(Option<&str>) -> bool);

impl std::fmt::Debug for Folding<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Folding")
    }
}

/// The outcome of reading a syntactically valid target.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(
    clippy::large_enum_variant,
    reason = "made once per request and moved out at once; a box would only add an allocation"
)]
pub enum Classified {
    Route(Route),
    /// A valid target that names no route icegate knows (403 at classification).
    Unrecognized,
}

/// A recognized request: the operation and the objects its path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub operation: OperationId,
    /// The decoded `{prefix}`; `None` for the form without a prefix. A declared prefix that
    /// holds `/` is here as declared, however it was sent (docs/design.md §2).
    pub prefix: Option<String>,
    /// How many path segments after `/v1` the prefix takes (0 without one; 1 for a prefix
    /// sent whole with `%2F`), in the canonical path as in the target.
    pub prefix_segments: usize,
    /// `{namespace}` of the path, when the route has one.
    pub namespace: Option<Namespace>,
    /// `{table}`, `{view}` or `{function}` of the path, when the route has one.
    pub name: Option<String>,
    /// `{plan-id}` of fetchPlanningResult and cancelPlanning.
    pub plan_id: Option<String>,
    pub query: Query,
    /// The path after the base path, every segment re-encoded from what was decoded: what
    /// is forwarded, so the upstream reads exactly what was authorized.
    pub canonical_path: String,
}

impl Route {
    /// `/v1` and the prefix of the canonical path, as forwarded: where the catalog's routes
    /// start (a prefix may take several segments, docs/design.md §2).
    pub fn catalog_base(&self) -> &str {
        let path = self.canonical_path.as_str();
        path.match_indices('/').nth(1 + self.prefix_segments).and_then(|(end, _)| path.get(..end)).unwrap_or(path)
    }
}

/// The query string, checked (docs/design.md §7).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    /// Non-empty `pageToken` (an empty one is the same as none).
    pub page_token: Option<String>,
    pub page_size: Option<u32>,
    /// Non-empty `parent`, checked like a namespace in the path.
    pub parent: Option<Namespace>,
    /// The other parameters, decoded, in order.
    pub pairs: Vec<(String, String)>,
}

impl Query {
    /// The query string to forward (without `?`), re-encoded from what was decoded.
    pub fn canonical(&self) -> String {
        let mut parts: Vec<String> = self.pairs.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect();
        if let Some(parent) = &self.parent {
            let levels: Vec<String> = parent.levels().iter().map(|l| encode(l)).collect();
            parts.push(format!("parent={}", levels.join("%1F")));
        }
        if let Some(size) = self.page_size {
            parts.push(format!("pageSize={size}"));
        }
        if let Some(token) = &self.page_token {
            parts.push(format!("pageToken={}", encode(token)));
        }
        parts.join("&")
    }
}

/// A position of a route shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Lit(&'static str),
    Ns,
    Name,
    Plan,
}

use OperationId as Op;
use Part::{Lit, Name, Ns, Plan};

type Methods = &'static [(&'static str, OperationId)];

/// Shapes after `/v1` that take an optional `{prefix}` in front.
const PREFIXED: &[(&[Part], Methods)] = &[
    (&[Lit("namespaces")], &[("GET", Op::ListNamespaces), ("POST", Op::CreateNamespace)]),
    (
        &[Lit("namespaces"), Ns],
        &[("GET", Op::LoadNamespaceMetadata), ("HEAD", Op::NamespaceExists), ("DELETE", Op::DropNamespace)],
    ),
    (&[Lit("namespaces"), Ns, Lit("properties")], &[("POST", Op::UpdateProperties)]),
    (&[Lit("namespaces"), Ns, Lit("tables")], &[("GET", Op::ListTables), ("POST", Op::CreateTable)]),
    (&[Lit("namespaces"), Ns, Lit("functions")], &[("GET", Op::ListFunctions)]),
    (&[Lit("namespaces"), Ns, Lit("functions"), Name], &[("GET", Op::LoadFunction)]),
    (&[Lit("namespaces"), Ns, Lit("register")], &[("POST", Op::RegisterTable)]),
    (
        &[Lit("namespaces"), Ns, Lit("tables"), Name],
        &[("GET", Op::LoadTable), ("POST", Op::UpdateTable), ("DELETE", Op::DropTable), ("HEAD", Op::TableExists)],
    ),
    (&[Lit("namespaces"), Ns, Lit("tables"), Name, Lit("plan")], &[("POST", Op::PlanTableScan)]),
    (
        &[Lit("namespaces"), Ns, Lit("tables"), Name, Lit("plan"), Plan],
        &[("GET", Op::FetchPlanningResult), ("DELETE", Op::CancelPlanning)],
    ),
    (&[Lit("namespaces"), Ns, Lit("tables"), Name, Lit("tasks")], &[("POST", Op::FetchScanTasks)]),
    (&[Lit("namespaces"), Ns, Lit("tables"), Name, Lit("unregister")], &[("POST", Op::UnregisterTable)]),
    (&[Lit("namespaces"), Ns, Lit("tables"), Name, Lit("credentials")], &[("GET", Op::LoadCredentials)]),
    (&[Lit("namespaces"), Ns, Lit("tables"), Name, Lit("sign")], &[("POST", Op::SignRequest)]),
    (&[Lit("namespaces"), Ns, Lit("tables"), Name, Lit("metrics")], &[("POST", Op::ReportMetrics)]),
    (&[Lit("tables"), Lit("rename")], &[("POST", Op::RenameTable)]),
    (&[Lit("transactions"), Lit("commit")], &[("POST", Op::CommitTransaction)]),
    (&[Lit("namespaces"), Ns, Lit("views")], &[("GET", Op::ListViews), ("POST", Op::CreateView)]),
    (
        &[Lit("namespaces"), Ns, Lit("views"), Name],
        &[("GET", Op::LoadView), ("POST", Op::ReplaceView), ("DELETE", Op::DropView), ("HEAD", Op::ViewExists)],
    ),
    (&[Lit("views"), Lit("rename")], &[("POST", Op::RenameView)]),
    (&[Lit("namespaces"), Ns, Lit("register-view")], &[("POST", Op::RegisterView)]),
];

/// Shapes after `/v1` that never take a prefix.
const UNPREFIXED: &[(&[Part], Methods)] = &[
    (&[Lit("config")], &[("GET", Op::GetConfig)]),
    (&[Lit("oauth"), Lit("tokens")], &[("POST", Op::GetToken)]),
    (&[Lit("aws"), Lit("s3"), Lit("sign")], &[("POST", Op::SignS3Request)]),
];

/// Whether `segments` fit `shape`; a literal spelled with escapes is refused, as the two
/// sides could match it differently.
fn fits(shape: &[Part], segments: &[Segment<'_>]) -> Result<bool, PathError> {
    if shape.len() != segments.len() {
        return Ok(false);
    }
    for (part, seg) in shape.iter().zip(segments) {
        if let Lit(lit) = part
            && seg.raw != *lit
        {
            if seg.parts.len() == 1 && seg.parts.first().is_some_and(|p| p.as_ref() == *lit) {
                return Err(PathError::EncodedLiteral(seg.raw.to_owned()));
            }
            return Ok(false);
        }
    }
    Ok(true)
}

fn find<'s>(
    table: &'s [(&'s [Part], Methods)],
    segments: &[Segment<'_>],
) -> Result<Option<&'s (&'s [Part], Methods)>, PathError> {
    for entry in table {
        if fits(entry.0, segments)? {
            return Ok(Some(entry));
        }
    }
    Ok(None)
}

/// Reads `target` (the raw request target: path and optional query) for `method`.
pub fn classify(method: &str, target: &str, options: &RouteOptions<'_>) -> Result<Classified, PathError> {
    if !target.starts_with('/') {
        return Err(PathError::AbsoluteForm(target.to_owned()));
    }
    if target.contains('#') {
        return Err(PathError::Fragment);
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let Some(path) = strip_base(path, options.base_path) else { return Ok(Classified::Unrecognized) };
    let Some(rest) = path.strip_prefix('/') else { return Ok(Classified::Unrecognized) };
    // A declared prefix that holds `/` is matched before any other path rule (docs/design.md §2).
    let declared = match (options.prefixes, rest.strip_prefix("v1/")) {
        (Some(prefixes), Some(after_v1)) if !prefixes.is_empty() => prefixes.find(after_v1),
        _ => None,
    };
    let segments = read_segments(rest, declared.is_some_and(|m| m.whole))?;
    let query = parse_query(query, options.namespace_separators)?;
    let Some((first, after_v1)) = segments.split_first() else { return Ok(Classified::Unrecognized) };
    if !fits(&[Lit("v1")], std::slice::from_ref(first))? {
        return Ok(Classified::Unrecognized);
    }
    // `skip`: the segments before the route's objects (`v1`, and the prefix when there is one).
    // Without a declared prefix that holds `/`, the form without a prefix is read first, so
    // `/v1/namespaces/namespaces` is a namespace.
    let (prefix, shape, methods, skip) = if let Some(Match { text, segments: taken, .. }) = declared {
        match find(PREFIXED, after_v1.get(taken..).unwrap_or_default())? {
            Some((shape, methods)) => (Some(text.to_owned()), *shape, *methods, 1 + taken),
            None => return Ok(Classified::Unrecognized),
        }
    } else if let Some((shape, methods)) = find(UNPREFIXED, after_v1)? {
        (None, *shape, *methods, 1)
    } else if let Some((shape, methods)) = find(PREFIXED, after_v1)? {
        (None, *shape, *methods, 1)
    } else {
        let Some((prefix, objects)) = after_v1.split_first() else { return Ok(Classified::Unrecognized) };
        match find(PREFIXED, objects)? {
            Some((shape, methods)) => (Some(prefix.single()?.to_owned()), *shape, *methods, 2),
            None => return Ok(Classified::Unrecognized),
        }
    };
    let Some((_, operation)) = methods.iter().find(|(m, _)| *m == method) else { return Ok(Classified::Unrecognized) };
    let fold = options.folding.is_some_and(|folds| folds.0(prefix.as_deref()));
    let (mut segments, mut query) = (segments, query);
    if fold {
        let rules = NameRules { separators: options.namespace_separators, fold_case: true };
        for (part, seg) in shape.iter().zip(segments.iter_mut().skip(skip)) {
            if matches!(part, Ns | Name) {
                seg.parts = std::mem::take(&mut seg.parts)
                    .into_iter()
                    .map(|p| Cow::Owned(rules.fold(p.into_owned())))
                    .collect();
            }
        }
        if let Some(parent) = query.parent.take() {
            query.parent = Some(rules.namespace(parent.into_levels())?);
        }
    }
    let objects = segments.get(skip..).unwrap_or_default();
    let canonical_path = if !fold && path.bytes().all(|b| b == b'/' || is_unreserved(b)) {
        // Nothing escaped and nothing to escape: every part decodes and encodes to itself, so
        // the canonical form is the path as sent (the usual case, spared the rebuild below).
        path.to_owned()
    } else {
        let canonical: Vec<String> =
            segments.iter().map(|s| s.parts.iter().map(|p| encode(p)).collect::<Vec<_>>().join("%1F")).collect();
        format!("/{}", canonical.join("/"))
    };
    let mut route = Route {
        operation: *operation,
        prefix,
        prefix_segments: skip - 1,
        namespace: None,
        name: None,
        plan_id: None,
        query,
        canonical_path,
    };
    for (part, seg) in shape.iter().zip(objects) {
        match part {
            Ns => route.namespace = Some(Namespace::new(seg.owned_parts(), options.namespace_separators)?),
            Name => {
                let name = seg.single()?;
                super::names::check_name(name)?;
                route.name = Some(name.to_owned());
            }
            Plan => {
                let plan_id = seg.single()?;
                super::names::check_name(plan_id)?;
                route.plan_id = Some(plan_id.to_owned());
            }
            Lit(_) => {}
        }
    }
    Ok(Classified::Route(route))
}

/// Splits the path after the base path into checked segments. Only a `{namespace}` holds
/// levels, and it always follows the literal `namespaces`; anywhere else a `%1F` decodes to a
/// control character and is refused, known route or not. `whole_prefix`: the segment after
/// `v1` is a declared prefix sent whole, whose `%2F` is read as `/`.
fn read_segments(rest: &str, whole_prefix: bool) -> Result<Vec<Segment<'_>>, PathError> {
    let mut segments = Vec::new();
    let mut after_namespaces = false;
    for (i, raw) in rest.split('/').enumerate() {
        segments.push(match i {
            1 if whole_prefix => Segment::prefix(raw)?,
            _ if after_namespaces => Segment::read_levels(raw)?,
            _ => Segment::read(raw)?,
        });
        after_namespaces = raw == "namespaces";
    }
    Ok(segments)
}

fn strip_base<'a>(path: &'a str, base: &str) -> Option<&'a str> {
    if base.is_empty() {
        return Some(path);
    }
    path.strip_prefix(base).filter(|rest| rest.starts_with('/'))
}

/// Query parameters some servers read as the request's real method (any case): icegate
/// authorizes the method it sees, so none may reach the upstream (docs/design.md §7).
const METHOD_OVERRIDES: [&str; 4] = ["_method", "x-http-method-override", "x-http-method", "x-method-override"];

/// Scalar parameters that must not repeat (docs/design.md §7).
const SCALARS: [&str; 7] = ["pageToken", "pageSize", "parent", "purgeRequested", "snapshots", "warehouse", "planId"];

fn parse_query(query: &str, separators: &[String]) -> Result<Query, PathError> {
    let mut q = Query::default();
    let mut seen: Vec<String> = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        if let Some(c) = pair.chars().find(|c| c.is_control() || !c.is_ascii() || *c == ' ') {
            return Err(PathError::BadQueryCharacter(c));
        }
        let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode_query_part(raw_key)?;
        if METHOD_OVERRIDES.iter().any(|m| key.eq_ignore_ascii_case(m)) {
            return Err(PathError::MethodOverride(key));
        }
        // `parent` keeps its raw `%1F` separators until split into levels
        let value = if key == "parent" { String::new() } else { decode_query_part(raw_value)? };
        if SCALARS.contains(&key.as_str()) {
            if seen.contains(&key) {
                return Err(PathError::RepeatedParameter(key));
            }
            seen.push(key.clone());
        }
        match key.as_str() {
            "pageToken" if !value.is_empty() => q.page_token = Some(value),
            "pageToken" => {}
            "pageSize" => match value.parse::<u32>() {
                Ok(n) if n > 0 => q.page_size = Some(n),
                _ => return Err(PathError::BadPageSize(value)),
            },
            "parent" if raw_value.is_empty() => {}
            "parent" => {
                // checked like a namespace in the path: split on the exact `%1F`, decode levels
                if raw_value.contains("%1f") {
                    return Err(PathError::LowerCaseSeparator(raw_value.to_owned()));
                }
                // a raw `/` (or anything else a path segment may not hold) is refused as in the
                // path, where `%2F` already is: otherwise `a/b` passed and its canonical `a%2Fb`
                // would not
                super::path::check_raw_segment(raw_value)?;
                let levels = raw_value
                    .split("%1F")
                    .map(|level| decode_path_part(level).map(Cow::into_owned))
                    .collect::<Result<Vec<_>, _>>()?;
                q.parent = Some(Namespace::new(levels, separators)?);
            }
            _ => q.pairs.push((key, value)),
        }
    }
    Ok(q)
}

/// The decoded prefix of the paths a client builds from a getConfig answer's `prefix`, read by
/// the rule a request's path is read by (`options` carry the policy's declared prefixes);
/// `None` when no path built from it names a catalog prefix. A client puts the value into its
/// paths as it is, escaping what a path cannot hold unescaped (Nessie's `|`).
pub fn read_config_prefix(value: &str, options: &RouteOptions<'_>) -> Option<String> {
    // a route that only the form with a prefix has, whatever the prefix spells
    let target = format!("/v1/{}/transactions/commit", super::path::encode_for_path(value));
    let options = RouteOptions { base_path: "", folding: None, ..*options };
    match classify("POST", &target, &options) {
        Ok(Classified::Route(route)) => route.prefix,
        _ => None,
    }
}

/// Whether the request is getToken (`POST {base}/v1/oauth/tokens`, any query), which is
/// forwarded before every other stage (docs/design.md §4).
pub fn is_get_token(method: &str, target: &str, base_path: &str) -> bool {
    let path = target.split_once('?').map_or(target, |(p, _)| p);
    method == "POST" && strip_base(path, base_path) == Some("/v1/oauth/tokens")
}

#[cfg(test)]
mod tests;
