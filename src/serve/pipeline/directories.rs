//! The namespace directories of the location rule (docs/design.md §4 "Locations are placed only
//! by owners, and only inside what they own"): where a namespace's tables live, asked of the
//! upstream with the caller's credentials and remembered for `credentials.location_cache_seconds`.

use crate::core::iceberg::Namespace;
use crate::core::iceberg::routes::Route;
use crate::core::refused::CoreRefusal;
use crate::error::Refusal;
use crate::serve::pipeline::outbound::Outbound;
use crate::serve::pipeline::outbound::{send, strip_idempotency};
use crate::serve::pipeline::rewrite::body::collect;
use crate::serve::pipeline::state::Shared;
use crate::serve::pipeline::upstream_calls::{namespace_segment, stage_create};
use http::{HeaderMap, StatusCode};
use serde::Deserialize;
use std::sync::atomic::{AtomicU64, Ordering};

/// The directory of each of `namespaces`: from the cache, else the namespace's `location`
/// property (loadNamespaceMetadata), else the parent of the location the upstream assigns to a
/// stage-create of a name no object has (which persists nothing). 503 when the upstream answers
/// neither question for one of them: nothing is forwarded.
pub async fn namespace_locations(
    shared: &Shared,
    caller: &HeaderMap,
    out: &Outbound<'_>,
    route: &Route,
    namespaces: &[&Namespace],
) -> Result<Vec<(Namespace, String)>, Refusal> {
    let mut found = Vec::with_capacity(namespaces.len());
    for namespace in namespaces {
        let path = format!("{}/namespaces/{}", route.catalog_base(), namespace_segment(namespace.levels()));
        let directory = match out.upstream.vending.cached_directory(&path) {
            Some(directory) => directory,
            None => {
                let directory = match property(shared, caller, out, &path).await {
                    Some(directory) => directory,
                    None => probe(shared, caller, out, &path).await.ok_or_else(|| {
                        Refusal::from(CoreRefusal::NamespaceDirectoryUnknown { namespace: namespace.to_string() })
                    })?,
                };
                out.upstream.vending.remember_directory(&path, &directory);
                directory
            }
        };
        found.push(((*namespace).clone(), directory));
    }
    Ok(found)
}

/// The namespace's `location` property, as loadNamespaceMetadata reports it.
async fn property(shared: &Shared, caller: &HeaderMap, out: &Outbound<'_>, path: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Metadata {
        properties: Option<std::collections::HashMap<String, serde_json::Value>>,
    }
    let get = http::Method::GET;
    let load = Outbound { method: &get, path, query: "", strip_delegation: true, ..*out };
    let response = send(shared, &strip_idempotency(caller), &load, crate::serve::upstream::forward::Outgoing::empty())
        .await
        .ok()?;
    if response.status() != StatusCode::OK {
        return None;
    }
    let bytes = collect(response.into_body()).await.ok()?;
    let metadata: Metadata = serde_json::from_slice(&bytes).ok()?;
    let properties = metadata.properties?;
    let location = properties.iter().find(|(k, _)| k.eq_ignore_ascii_case("location"))?.1.as_str()?;
    (!location.trim().is_empty()).then(|| location.to_owned())
}

/// The parent of where the upstream would place a new table of the namespace: a stage-create of
/// a name icegate chooses, which no object has.
async fn probe(shared: &Shared, caller: &HeaderMap, out: &Outbound<'_>, namespace_path: &str) -> Option<String> {
    static PROBES: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let name = format!("icegate_location_probe_{nanos:x}_{}", PROBES.fetch_add(1, Ordering::Relaxed));
    let assigned = stage_create(shared, caller, out, namespace_path, &name).await?;
    parent_of(&assigned)
}

/// The directory holding a location: what precedes its last segment, if that is more than a
/// scheme and an authority.
fn parent_of(location: &str) -> Option<String> {
    let trimmed = location.trim_end_matches('/');
    let (parent, last) = trimmed.rsplit_once('/')?;
    let authority_only = parent.ends_with('/') || !parent.contains('/');
    (!last.is_empty() && !authority_only).then(|| parent.to_owned())
}

#[cfg(test)]
mod tests {
    use super::parent_of;

    #[test]
    fn the_directory_of_a_probe_is_what_precedes_its_last_segment() {
        assert_eq!(parent_of("s3://lake/sales/p_1").as_deref(), Some("s3://lake/sales"));
        assert_eq!(parent_of("s3://lake/sales/p_1-8e3a/").as_deref(), Some("s3://lake/sales"));
        assert_eq!(parent_of("file:/tmp/wh/sales/p_1").as_deref(), Some("file:/tmp/wh/sales"));
        assert_eq!(parent_of("s3://lake/p_1").as_deref(), Some("s3://lake"));
        assert_eq!(parent_of("p_1"), None);
        assert_eq!(parent_of("s3://p_1"), None, "no directory above the bucket");
    }
}
