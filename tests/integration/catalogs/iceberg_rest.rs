//! Apache Iceberg's REST catalog server code (`RESTCatalogServlet`/`CatalogHandlers`, which the
//! dev catalog in deploy/dev-catalog runs and tests/e2e drives with real engines): no base path,
//! no prefix (the policy's `default_catalog`), `defaults.warehouse` in getConfig, credentials
//! vended only by the dev catalog's `--vend` fixture. This profile is the fake's copy of that
//! shape, for the same served-path checks as the other catalogs.

use super::served::served_path;
use super::{Auth, Profile};
use serde_json::{Value, json};

fn config(_own: &str) -> Value {
    json!({"defaults": {"warehouse": "s3://lake-bucket/rest"}, "overrides": {}})
}

fn table_config(_own: &str, delegation: Option<&str>) -> Value {
    match delegation {
        Some("vended-credentials") => json!({"s3.access-key-id": "AKIAREST", "s3.secret-access-key": "rest-secret"}),
        _ => json!({}),
    }
}

pub const ICEBERG_REST: Profile = Profile {
    catalog: "prod",
    declared: None,
    base: "",
    warehouse: "lake",
    path_prefix: "",
    config,
    table_config,
    secret_keys: &["s3.access-key-id", "s3.secret-access-key"],
    storage_credentials: true,
    root: "s3://lake-bucket/rest",
    auth: Auth::Passthrough,
    signer: None,
};

#[tokio::test]
async fn iceberg_rest_served_path_without_a_prefix() {
    served_path(ICEBERG_REST).await;
}
