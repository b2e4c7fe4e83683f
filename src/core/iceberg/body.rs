//! Inspected request bodies: what a body adds to the objects an operation touches.
//!
//! Only the fields authorization reads are typed; the rest may be anything (forward
//! compatibility), but a field icegate reads with the wrong type is 400. The bytes are read
//! strictly first (docs/design.md §7), and the bytes that were read are the bytes forwarded.

mod model;
mod wire;

pub use model::{Body, BodyError, SchemaChanges, SignRequest, TableChange, TableUpdate};

use super::OperationId;
use super::json;
use super::names::NameRules;
use super::routes::Route;
use wire::{Commit, Ident};

pub use wire::LOCATION_PROPERTIES;

/// Parses and checks the body of an inspected operation; the names it introduces follow the
/// rules of names in paths, folded where the catalog folds (`rules`, docs/design.md §2, §4).
pub fn inspect(route: &Route, bytes: &[u8], rules: &NameRules<'_>) -> Result<Body, BodyError> {
    use OperationId as Op;
    let op = route.operation;
    if !op.inspects_request_body() {
        return Err(BodyError::NotInspected(op.as_str()));
    }
    if bytes.is_empty() {
        return Err(BodyError::Missing(op.as_str()));
    }
    if bytes.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r')) != Some(&b'{') {
        return Err(BodyError::NotAnObject);
    }
    Ok(match op {
        Op::CreateNamespace => {
            let b: wire::CreateNamespace = json::from_slice(bytes)?;
            let location = b.places_data();
            Body::CreateNamespace { namespace: wire::checked_namespace(b.namespace, "namespace", rules)?, location }
        }
        Op::UpdateProperties => {
            let b: wire::UpdateProperties = json::from_slice(bytes)?;
            Body::UpdateProperties { location: b.moves_location() }
        }
        Op::CreateTable => {
            let b: wire::CreateTable = json::from_slice(bytes)?;
            let (explicit_location, locations) = (b.places_data(), b.chosen_locations()?);
            Body::CreateTable {
                name: wire::checked_name(b.name, "name", rules)?,
                explicit_location,
                stage_create: b.stage_create.unwrap_or(false),
                locations,
            }
        }
        Op::RegisterTable => {
            let b: wire::Register = json::from_slice(bytes)?;
            Body::RegisterTable { name: wire::checked_name(b.name, "name", rules)? }
        }
        Op::UpdateTable => {
            let b: Commit = json::from_slice(bytes)?;
            check_path_identifier(route, b.identifier.as_ref(), rules)?;
            Body::UpdateTable(b.table_update("")?)
        }
        Op::RenameTable | Op::RenameView => {
            let b: wire::Rename = json::from_slice(bytes)?;
            Body::Rename {
                source: b.source.checked(rules, "source")?,
                destination: b.destination.checked(rules, "destination")?,
            }
        }
        Op::CommitTransaction => {
            let b: wire::Transaction = json::from_slice(bytes)?;
            Body::CommitTransaction(transaction(b.table_changes, rules)?)
        }
        Op::SignRequest => {
            let b: wire::Sign = json::from_slice(bytes)?;
            let values = |header: &str| -> Vec<String> {
                b.headers
                    .iter()
                    .filter(|(name, _)| name.eq_ignore_ascii_case(header))
                    .flat_map(|(_, v)| v.clone())
                    .collect()
            };
            let (copy_sources, hosts) = (values("x-amz-copy-source"), values("host"));
            Body::SignRequest(SignRequest {
                region: b.region,
                method: b.method,
                uri: b.uri,
                provider: b.provider,
                body: b.body,
                copy_sources,
                hosts,
                headers: b.headers.into_iter().collect(),
                properties: b.properties,
            })
        }
        Op::CreateView => {
            let b: wire::CreateView = json::from_slice(bytes)?;
            Body::CreateView { name: wire::checked_name(b.name, "name", rules)? }
        }
        Op::RegisterView => {
            let b: wire::Register = json::from_slice(bytes)?;
            Body::RegisterView { name: wire::checked_name(b.name, "name", rules)? }
        }
        Op::ReplaceView => {
            let b: wire::CommitView = json::from_slice(bytes)?;
            check_path_identifier(route, b.identifier.as_ref(), rules)?;
            Body::ReplaceView
        }
        Op::GetConfig
        | Op::GetToken
        | Op::ListNamespaces
        | Op::LoadNamespaceMetadata
        | Op::NamespaceExists
        | Op::DropNamespace
        | Op::ListTables
        | Op::ListFunctions
        | Op::LoadFunction
        | Op::PlanTableScan
        | Op::FetchPlanningResult
        | Op::CancelPlanning
        | Op::FetchScanTasks
        | Op::LoadTable
        | Op::DropTable
        | Op::TableExists
        | Op::UnregisterTable
        | Op::LoadCredentials
        | Op::ReportMetrics
        | Op::ListViews
        | Op::LoadView
        | Op::DropView
        | Op::ViewExists
        | Op::SignS3Request => return Err(BodyError::NotInspected(op.as_str())),
    })
}

/// A single-object commit may repeat its identifier, but only as the object of the path: the
/// path is what was authorized.
fn check_path_identifier(route: &Route, ident: Option<&Ident>, rules: &NameRules<'_>) -> Result<(), BodyError> {
    let Some(ident) = ident else { return Ok(()) };
    let (Some(namespace), Some(name)) = (&route.namespace, &route.name) else {
        return Err(BodyError::NoPathObject(route.operation.as_str()));
    };
    let body = ident.clone().checked(rules, "identifier")?;
    if body.namespace != *namespace || body.name != *name {
        return Err(BodyError::IdentifierMismatch {
            body: json::quote(&body.to_string()),
            path: json::quote(&format!("{namespace}.{name}")),
        });
    }
    Ok(())
}

fn transaction(changes: Vec<Commit>, rules: &NameRules<'_>) -> Result<Vec<TableChange>, BodyError> {
    if changes.is_empty() {
        return Err(BodyError::EmptyTransaction);
    }
    let mut out: Vec<TableChange> = Vec::with_capacity(changes.len());
    let mut seen = std::collections::HashSet::with_capacity(changes.len());
    for (i, change) in changes.into_iter().enumerate() {
        let Some(ident) = change.identifier.clone() else { return Err(BodyError::MissingIdentifier(i)) };
        let identifier = ident.checked(rules, &format!("table-changes[{i}].identifier"))?;
        if !seen.insert(identifier.clone()) {
            return Err(BodyError::RepeatedTable(json::quote(&identifier.to_string())));
        }
        let update = change.table_update(&format!("table-changes[{i}]."))?;
        out.push(TableChange { identifier, update });
    }
    Ok(out)
}

/// The headers of an inspected body: JSON and unencoded, or 415. A missing content type is
/// accepted (clients omit it on small bodies); any `Content-Encoding`, even `identity`, is not,
/// since icegate would authorize bytes other than the ones the upstream decodes.
pub fn check_content_headers(content_type: Option<&str>, content_encoding: Option<&str>) -> Result<(), BodyError> {
    if let Some(encoding) = content_encoding {
        return Err(BodyError::UnsupportedEncoding(json::quote(encoding)));
    }
    match content_type {
        Some(ct) if !is_json_utf8(ct) => Err(BodyError::UnsupportedMediaType(json::quote(ct))),
        _ => Ok(()),
    }
}

/// `application/json` (any case), with parameters; a `charset` must be UTF-8, since the body is
/// read as UTF-8 and an upstream honouring another charset would read other text.
fn is_json_utf8(content_type: &str) -> bool {
    let ows = |c: char| c == ' ' || c == '\t';
    let mut parts = content_type.split(';');
    let media = parts.next().unwrap_or_default().trim_matches(ows);
    if !media.eq_ignore_ascii_case("application/json") {
        return false;
    }
    parts.map(|p| p.trim_matches(ows)).filter(|p| !p.is_empty()).all(|param| match param.split_once('=') {
        Some((name, value)) => {
            let name = name.trim_matches(ows);
            let value = value.trim_matches(ows);
            let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
            !name.is_empty() && (!name.eq_ignore_ascii_case("charset") || value.eq_ignore_ascii_case("utf-8"))
        }
        None => false,
    })
}

#[cfg(test)]
mod tests;
