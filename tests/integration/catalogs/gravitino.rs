//! Apache Gravitino's Iceberg REST service: the profile was written from apache/gravitino's
//! `IcebergConfigOperations` (getConfig's `warehouse` names the Gravitino catalog and comes back
//! as `defaults.prefix`; the defaults carry the catalog's client configuration) and its
//! credential vending (S3 session credentials in the table's config). Gravitino's default
//! authentication is `simple` (HTTP Basic, the user before the `:`), which icegate passes
//! through; it has no S3 signer.

use super::served::served_path;
use super::{Auth, Profile};
use serde_json::{Value, json};

fn config(_own: &str) -> Value {
    json!({"defaults": {"prefix": "prod", "io-impl": "org.apache.iceberg.aws.s3.S3FileIO", "s3.endpoint": "https://s3.us-east-1.amazonaws.com"},
           "overrides": {}, "endpoints": ["GET /v1/{prefix}/namespaces"]})
}

fn table_config(_own: &str, delegation: Option<&str>) -> Value {
    match delegation {
        Some("vended-credentials") => json!({
            "client.region": "us-east-1", "s3.access-key-id": "ASIAGRAVITINO", "s3.secret-access-key": "gravitino-secret",
            "s3.session-token": "gravitino-session", "s3.session-token-expires-at-ms": "1893456000000",
        }),
        _ => json!({"client.region": "us-east-1"}),
    }
}

pub const GRAVITINO: Profile = Profile {
    catalog: "prod",
    declared: None,
    base: "/iceberg",
    warehouse: "prod",
    path_prefix: "prod",
    config,
    table_config,
    secret_keys: &["s3.access-key-id", "s3.secret-access-key", "s3.session-token", "s3.session-token-expires-at-ms"],
    storage_credentials: false,
    root: "s3://lake-bucket/gravitino",
    auth: Auth::Passthrough,
    signer: None,
};

#[tokio::test]
async fn gravitino_served_path_with_its_prefix_in_the_defaults() {
    let f = served_path(GRAVITINO).await;
    // the narrowed set went upstream too, so a Gravitino that honours it narrows as well
    let with_roles =
        f.catalog.catalog_requests().into_iter().filter(|r| r.header("x-gravitino-active-roles").is_some()).count();
    assert_eq!(with_roles, 1);
}
