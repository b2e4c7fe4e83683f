//! Unity Catalog's Iceberg REST endpoint: the profile was written from unitycatalog/unitycatalog's
//! `IcebergRestCatalogService` (getConfig takes the Unity catalog's name as `warehouse` and
//! answers `overrides.prefix = "catalogs/<name>"`; namespaces and tables live under
//! `/v1/catalogs/{catalog}/...`; loadTable's `config` is the table's vended storage credentials,
//! from `FileOperations.getFileIOConfig`) and from Databricks' documentation (the endpoint
//! `/api/2.1/unity-catalog/iceberg-rest`, OAuth machine-to-machine tokens from the workspace's
//! `/oidc/v1/token` with the scope `all-apis`). Unity Catalog has no S3 signer.

use super::served::served_path;
use super::{Auth, Profile};
use serde_json::{Value, json};

fn config(_own: &str) -> Value {
    json!({"defaults": {}, "overrides": {"prefix": "catalogs/main"},
           "endpoints": ["GET /v1/{prefix}/namespaces", "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"]})
}

fn table_config(_own: &str, _delegation: Option<&str>) -> Value {
    // Unity vends on every loadTable, asked or not
    json!({"client.region": "us-west-2", "s3.access-key-id": "ASIAUNITY", "s3.secret-access-key": "unity-secret",
           "s3.session-token": "unity-session", "s3.session-token-expires-at-ms": "1893456000000"})
}

pub const UNITY: Profile = Profile {
    catalog: "main",
    declared: Some("catalogs/main"),
    base: "/api/2.1/unity-catalog/iceberg-rest",
    warehouse: "main",
    path_prefix: "catalogs/main",
    config,
    table_config,
    secret_keys: &["s3.access-key-id", "s3.secret-access-key", "s3.session-token", "s3.session-token-expires-at-ms"],
    storage_credentials: false,
    root: "s3://unity-metastore/main",
    auth: Auth::OAuth2 { token_path: "/oidc/v1/token", scope: "all-apis" },
    signer: None,
};

#[tokio::test]
async fn unity_served_path_with_its_two_segment_prefix_and_oauth2() {
    let f = served_path(UNITY).await;
    assert_eq!(f.catalog.tokens_fetched(), 1);
    // a READ caller at full scope gets no credentials either: in front of a catalog that
    // authenticates icegate, not the caller, what it vends is icegate's (docs/design.md §8)
    let a = f.get("dave", "/v1/catalogs/main/namespaces/sales/tables/orders", &[]).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert!(a.json()["config"].get("s3.secret-access-key").is_none(), "{}", a.text());
    assert_eq!(a.json()["config"]["client.region"], "us-west-2");
}
