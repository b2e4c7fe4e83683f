//! Apache Polaris (and Snowflake Open Catalog, which serves Polaris's API): the profile was
//! written from apache/polaris's `IcebergCatalogAdapter.getConfig` (defaults are the catalog's
//! properties, `overrides.prefix` is the catalog's name) and its storage-access properties
//! (vended S3 session credentials with their expiry, `client.region`, and
//! `client.refresh-credentials-endpoint` relative to the catalog URI). Polaris issues its own
//! client-credentials tokens at `/api/catalog/v1/oauth/tokens` and requires a scope
//! (`PRINCIPAL_ROLE:ALL`); it has no S3 signer.

use super::served::served_path;
use super::{Auth, Profile};
use serde_json::{Value, json};

fn config(_own: &str) -> Value {
    json!({
        "defaults": {"default-base-location": "s3://lake-bucket/polaris/analytics"},
        "overrides": {"prefix": "analytics"},
        "endpoints": ["GET /v1/{prefix}/namespaces", "GET /v1/{prefix}/namespaces/{namespace}/tables",
                      "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                      "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"],
    })
}

fn table_config(_own: &str, delegation: Option<&str>) -> Value {
    let mut config = json!({"client.region": "us-east-1"});
    if delegation == Some("vended-credentials") {
        config = json!({
            "client.region": "us-east-1",
            "s3.access-key-id": "ASIAPOLARIS", "s3.secret-access-key": "polaris-secret",
            "s3.session-token": "polaris-session", "s3.session-token-expires-at-ms": "1893456000000",
            "client.refresh-credentials-endpoint": "v1/analytics/namespaces/sales/tables/orders/credentials",
        });
    }
    config
}

pub const POLARIS: Profile = Profile {
    catalog: "analytics",
    declared: None,
    base: "/api/catalog",
    warehouse: "analytics",
    path_prefix: "analytics",
    config,
    table_config,
    secret_keys: &["s3.access-key-id", "s3.secret-access-key", "s3.session-token", "s3.session-token-expires-at-ms"],
    storage_credentials: true,
    root: "s3://lake-bucket/polaris/analytics",
    auth: Auth::OAuth2 { token_path: "/api/catalog/v1/oauth/tokens", scope: "PRINCIPAL_ROLE:ALL" },
    signer: None,
};

#[tokio::test]
async fn polaris_served_path_denies_filters_and_strips_broader_credentials() {
    served_path(POLARIS).await;
}

#[tokio::test]
async fn polaris_token_comes_from_its_own_endpoint_with_its_scope_once() {
    let f = served_path(POLARIS).await;
    assert_eq!(f.catalog.tokens_fetched(), 1, "one token served every request");
    let fetch = f.catalog.server.requests().into_iter().find(|r| r.target == "/api/catalog/v1/oauth/tokens").unwrap();
    let form = String::from_utf8_lossy(&fetch.body).into_owned();
    assert!(form.contains("scope=PRINCIPAL_ROLE%3AALL"), "{form}");
    assert_eq!(fetch.header("content-type"), Some("application/x-www-form-urlencoded"));
}
