//! The requests icegate sends upstream on its own behalf or the caller's, outside the one
//! forwarded request: the existence HEAD of 403-or-404, the table load that tells a sign or
//! credentials check where the table's data lives (and a sign request where it goes), the
//! existence checks of names about to be created, the stage-create that tells where the
//! upstream places a staged table (the getConfig that tells which signer a catalog advertises is
//! [`crate::serve::pipeline::signer_lookup`]).

use crate::core::credentials::sign::{self, headers};
use crate::core::credentials::storage::TableStorage;
use crate::core::decide::Collision;
use crate::core::iceberg::TableIdent;
use crate::core::iceberg::body::SignRequest;
use crate::core::iceberg::path::encode;
use crate::core::iceberg::routes::Route;
use crate::core::refused::CoreRefusal;
use crate::core::sequence::Existence;
use crate::error::Refusal;
use crate::serve::pipeline::outbound::{Outbound, send, strip_idempotency};
use crate::serve::pipeline::rewrite::body::collect;
use crate::serve::pipeline::state::Shared;
use crate::serve::storage::vending;
use crate::serve::upstream::forward::Outgoing;
use crate::serve::upstream::upstreams::Lane;
use http::{HeaderMap, HeaderValue, StatusCode};
use std::sync::Arc;

/// The lookup step of 403-or-404: only the upstream's 404 to a HEAD of the object means missing.
pub async fn upstream_says_missing(shared: &Shared, upstream: &Lane, caller: &HeaderMap, route: &Route) -> bool {
    existence(shared, upstream, caller, &route.canonical_path).await == Existence::Missing
}

/// The table's storage (its locations first of all), from the cache or a load of the table
/// upstream (`lookup` is a GET of the table's path with the caller's credentials and enforced
/// active roles).
pub async fn table_locations(
    shared: &Shared,
    caller: &HeaderMap,
    lookup: &Outbound<'_>,
) -> Result<Arc<TableStorage>, vending::VendError> {
    load_table(shared, caller, lookup, false).await
}

/// Authorizes what a sign request has signed and where it reaches (docs/design.md §8) and says how
/// it is forwarded: where it goes (`None` for its table-scoped route, else the signer the
/// upstream advertises for the table) and what its signature must bind. `lookup` loads the table
/// as for [`table_locations`]; refused headers are refused before that load.
pub async fn sign_destination(
    shared: &Shared,
    caller: &HeaderMap,
    lookup: &Outbound<'_>,
    (request, prefix): (&SignRequest, Option<&str>),
) -> Result<crate::serve::pipeline::signing::Forward, Refusal> {
    let lane = lookup.upstream;
    let signing = &lane.vending.config.signing;
    let rules = headers::HeaderRules {
        storage_class: signing.allow_storage_class,
        tagging: signing.allow_tagging,
        sse_c: signing.allow_sse_c,
        kms_key_id: signing.kms_key_id.as_deref(),
    };
    headers::check(&request.headers, &rules).map_err(|e| Refusal::from(&e))?;
    let table = load_table(shared, caller, lookup, true).await.map_err(|e| Refusal::from(&e))?;
    let checked = sign::check(request, &table, lane.vending.signing_endpoints()).map_err(|e| Refusal::from(&e))?;
    if signing.signer == crate::config::credentials::Signer::Local {
        let local =
            crate::serve::storage::local_signer::Local { request: request.clone(), body_sha256: checked.body_sha256 };
        let method = request.method.clone();
        return Ok(crate::serve::pipeline::signing::Forward {
            to: None,
            method,
            body_sha256: None,
            unsigned: Vec::new(),
            local: Some(local),
        });
    }
    // a table whose config names no signer is signed by the one getConfig advertises, if any
    let advertised = match table.signer {
        Some(_) => None,
        None => crate::serve::pipeline::signer_lookup::advertised_signer(shared, lane, caller, lookup.user, prefix)
            .await
            .map_err(|e| Refusal::from(&e))?,
    };
    let to = table
        .signer
        .as_ref()
        .or(advertised.as_ref())
        .map(|signer| signer.destination(&lane.client.catalog_uri(), lane.vending.signer_origins()))
        .transpose()
        .map_err(|e| Refusal::from(&e))?;
    Ok(crate::serve::pipeline::signing::Forward {
        to,
        method: request.method.clone(),
        body_sha256: checked.body_sha256,
        unsigned: headers::hop_by_hop(&request.headers),
        local: None,
    })
}

/// A load of the table for its storage. `for_signing` asks the upstream for remote signing, so
/// that it names the signer it would have the table's clients use.
async fn load_table(
    shared: &Shared,
    caller: &HeaderMap,
    lookup: &Outbound<'_>,
    for_signing: bool,
) -> Result<Arc<TableStorage>, vending::VendError> {
    let vending = &lookup.upstream.vending;
    // icegate as the signer needs the table's locations only, not the upstream's signer: any
    // answer that carried the table's metadata serves, a stage-create's too, which is all there
    // is of a table Spark's CTAS writes before its create commits (the catalog answers 404).
    let needs_upstream_signer = for_signing && vending.local_signer().is_none();
    if let Some(cached) = vending.cached_storage(lookup.path, needs_upstream_signer) {
        return Ok(cached);
    }
    let get = http::Method::GET;
    let mut headers = strip_idempotency(caller);
    let out = match for_signing {
        true => {
            headers.insert("x-iceberg-access-delegation", HeaderValue::from_static("remote-signing"));
            Outbound { method: &get, strip_delegation: false, ..*lookup }
        }
        false => Outbound { method: &get, ..*lookup },
    };
    let empty = crate::serve::upstream::forward::Outgoing::empty();
    let response =
        send(shared, &headers, &out, empty).await.map_err(|s| vending::VendError::Unanswered(Box::new(s.refusal)))?;
    match response.status() {
        StatusCode::OK => {}
        StatusCode::NOT_FOUND => return Err(vending::VendError::TableMissing),
        other => return Err(vending::VendError::Locations(other.as_u16())),
    }
    let body = collect(response.into_body()).await.map_err(|_| vending::VendError::Locations(502))?;
    let table = vending::storage_of(body)?;
    vending.remember_storage(lookup.path, Arc::clone(&table), for_signing);
    Ok(table)
}

/// The metadata of each of `tables` (loadTable's `metadata`), loaded with the caller's
/// credentials and without vended credentials, never from a cache: a commit to a restricted
/// table is decided with its schemas as they are now (docs/design.md §8 "A restriction keeps
/// covering what it covered"). The upstream's 404 is the table missing (a 404, as the commit
/// itself would be answered); any other failure to answer with a table is 503.
pub async fn table_metadata(
    shared: &Shared,
    caller: &HeaderMap,
    out: &Outbound<'_>,
    route: &Route,
    tables: &[TableIdent],
) -> Result<Vec<(TableIdent, serde_json::Value)>, Refusal> {
    #[derive(serde::Deserialize)]
    struct Loaded {
        metadata: serde_json::Map<String, serde_json::Value>,
    }
    let get = http::Method::GET;
    let headers = strip_idempotency(caller);
    let mut found = Vec::with_capacity(tables.len());
    for table in tables {
        let unknown = || Refusal::from(CoreRefusal::TableMetadataUnknown { table: table.to_string() });
        let path = format!(
            "{}/namespaces/{}/tables/{}",
            route.catalog_base(),
            namespace_segment(table.namespace.levels()),
            encode(&table.name)
        );
        let load = Outbound { method: &get, path: &path, query: "", strip_delegation: true, ..*out };
        let response = send(shared, &headers, &load, crate::serve::upstream::forward::Outgoing::empty())
            .await
            .map_err(|_| unknown())?;
        match response.status() {
            StatusCode::OK => {}
            // what the upstream would answer the commit itself, mapped as a load for the table's
            // storage is
            StatusCode::NOT_FOUND => return Err(Refusal::from(&vending::VendError::TableMissing)),
            _ => return Err(unknown()),
        }
        let bytes = collect(response.into_body()).await.map_err(|_| unknown())?;
        let loaded: Loaded = serde_json::from_slice(&bytes).map_err(|_| unknown())?;
        found.push((table.clone(), serde_json::Value::Object(loaded.metadata)));
    }
    Ok(found)
}

/// A namespace as a path segment: levels encoded and joined with `%1F`.
pub(crate) fn namespace_segment(levels: &[String]) -> String {
    levels.iter().map(|l| encode(l)).collect::<Vec<_>>().join("%1F")
}

/// The one existence question to the upstream: a HEAD of `path` at `upstream` with the
/// caller's credentials, without an idempotency key; 2xx exists, 404 missing, anything else
/// (or no answer) unknown.
pub async fn existence(shared: &Shared, upstream: &Lane, caller: &HeaderMap, path: &str) -> Existence {
    let head = http::Method::HEAD;
    let out =
        Outbound { upstream, method: &head, path, query: "", user: "", active_roles: None, strip_delegation: true };
    let empty = crate::serve::upstream::forward::Outgoing::empty();
    match send(shared, &strip_idempotency(caller), &out, empty).await {
        Ok(r) if r.status().is_success() => Existence::Exists,
        Ok(r) if r.status() == StatusCode::NOT_FOUND => Existence::Missing,
        _ => Existence::Unknown,
    }
}

/// Whether an object of another kind already has the name `collision` is about to create
/// (docs/design.md §4 "One name, one kind, one level"): the first answer other than missing, of a
/// HEAD per object that could have it.
pub async fn collision(
    shared: &Shared,
    upstream: &Lane,
    caller: &HeaderMap,
    route: &Route,
    collision: &Collision,
) -> Existence {
    let base = route.catalog_base();
    let paths = match collision {
        Collision::NamespaceOverTableOrView(namespace) => {
            let Some((last, parent)) = namespace.levels().split_last() else { return Existence::Missing };
            let parent = format!("{base}/namespaces/{}", namespace_segment(parent));
            vec![format!("{parent}/tables/{}", encode(last)), format!("{parent}/views/{}", encode(last))]
        }
        Collision::ObjectOverNamespace(ident) => {
            let mut levels = ident.namespace.levels().to_vec();
            levels.push(ident.name.clone());
            vec![format!("{base}/namespaces/{}", namespace_segment(&levels))]
        }
    };
    for path in paths {
        match existence(shared, upstream, caller, &path).await {
            Existence::Missing => {}
            found => return found,
        }
    }
    Existence::Missing
}

/// The locations the upstream assigned to the caller's stage-creates of `tables`: remembered
/// from the stage-create responses icegate relayed (by this replica, or by any, through the
/// ownership store), else asked again with a stage-create of the same table, which persists
/// nothing. A table the upstream says nothing about is left out (its
/// `set-location` then counts as an explicit location).
pub async fn staged_locations(
    shared: &Shared,
    caller: &HeaderMap,
    out: &Outbound<'_>,
    (route, catalog): (&Route, &str),
    tables: &[TableIdent],
) -> Vec<(TableIdent, String)> {
    let mut found = Vec::with_capacity(tables.len());
    for table in tables {
        let mut location = shared.staged.recall(out.user, catalog, table);
        if location.is_none() {
            // another replica may have relayed the stage-create
            location = match shared
                .owners
                .recall_staged(out.user, &crate::serve::pipeline::staged::full_name(catalog, table))
                .await
            {
                Ok(l) => l,
                Err(e) => {
                    tracing::warn!(error = %e, "the ownership store cannot say where a staged create was placed");
                    None
                }
            };
        }
        if location.is_none() {
            location = restage(shared, caller, out, route, table).await;
        }
        if let Some(location) = location {
            found.push((table.clone(), location));
        }
    }
    found
}

/// A stage-create of `table` with an empty schema, for the location the upstream assigns.
async fn restage(
    shared: &Shared,
    caller: &HeaderMap,
    out: &Outbound<'_>,
    route: &Route,
    table: &TableIdent,
) -> Option<String> {
    let namespace = format!("{}/namespaces/{}", route.catalog_base(), namespace_segment(table.namespace.levels()));
    stage_create(shared, caller, out, &namespace, &table.name).await
}

/// The location the upstream assigns to a stage-create of `name` in the namespace at
/// `namespace_path` (an empty schema; a stage-create persists nothing); `None` for any answer
/// without one.
pub(crate) async fn stage_create(
    shared: &Shared,
    caller: &HeaderMap,
    out: &Outbound<'_>,
    namespace_path: &str,
    name: &str,
) -> Option<String> {
    let path = format!("{namespace_path}/tables");
    let body = serde_json::json!({
        "name": name,
        "schema": {"type": "struct", "schema-id": 0, "fields": []},
        "stage-create": true,
    });
    let post = http::Method::POST;
    let stage = Outbound { method: &post, path: &path, query: "", strip_delegation: true, ..*out };
    let mut headers = strip_idempotency(caller);
    headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    let body = Outgoing::Held(bytes::Bytes::from(body.to_string()));
    let response = send(shared, &headers, &stage, body).await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let bytes = collect(response.into_body()).await.ok()?;
    crate::serve::pipeline::staged::assigned_location(&bytes)
}

/// Remembers the location a relayed stage-create answer carried, here and for every replica; a
/// store that cannot be written costs only the other replicas' memory (they ask again).
pub async fn remember_staged(shared: &Shared, user: &str, catalog: &str, table: &TableIdent, location: String) {
    let full_name = crate::serve::pipeline::staged::full_name(catalog, table);
    if let Err(e) = shared.owners.remember_staged(user, &full_name, &location, shared.staged.ttl()).await {
        tracing::warn!(error = %e, table = %full_name, "the ownership store did not record a staged create's location");
    }
    shared.staged.remember(user, catalog, table, location);
}
