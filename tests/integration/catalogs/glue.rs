//! AWS Glue's Iceberg REST endpoint (`https://glue.<region>.amazonaws.com/iceberg`): the profile
//! was written from the AWS Glue developer guide ("Connecting to the Data Catalog using AWS Glue
//! Iceberg REST endpoint": `warehouse` is the account id, requests are SigV4-signed for the
//! signing name `glue`; Lake Formation vends credentials on `X-Iceberg-Access-Delegation`) and
//! the prefix `catalogs/<account-id>` that issue 29 records Glue answering in getConfig. Glue
//! has no S3 signer. The vended keys are Iceberg's S3FileIO ones; Glue's exact key set was not
//! observed.

use super::served::served_path;
use super::{Auth, Profile};
use serde_json::{Value, json};

fn config(_own: &str) -> Value {
    json!({"defaults": {}, "overrides": {"prefix": "catalogs/123456789012"}})
}

fn table_config(_own: &str, delegation: Option<&str>) -> Value {
    match delegation {
        Some("vended-credentials") => json!({
            "client.region": "eu-west-1", "s3.access-key-id": "ASIAGLUE",
            "s3.secret-access-key": "glue-secret", "s3.session-token": "glue-session",
        }),
        _ => json!({"client.region": "eu-west-1"}),
    }
}

pub const GLUE: Profile = Profile {
    catalog: "glue",
    declared: Some("catalogs/123456789012"),
    base: "/iceberg",
    warehouse: "123456789012",
    path_prefix: "catalogs/123456789012",
    config,
    table_config,
    secret_keys: &["s3.access-key-id", "s3.secret-access-key", "s3.session-token"],
    storage_credentials: false,
    root: "s3://lake-bucket/glue",
    auth: Auth::SigV4 { service: "glue", region: "eu-west-1" },
    signer: None,
};

#[tokio::test]
async fn glue_served_path_with_its_two_segment_prefix_and_sigv4() {
    let f = served_path(GLUE).await;
    // Glue's prefix sent whole, `%2F`-encoded, is the same catalog
    let a = f.get("dave", "/v1/catalogs%2F123456789012/namespaces/sales/tables/salaries", &[]).await;
    a.assert_error(403, "ForbiddenException");
    // every request the catalog accepted verified as signed for `glue`
    let requests = f.catalog.catalog_requests();
    assert!(requests.len() >= 5, "{requests:#?}");
    assert!(requests.iter().all(|r| r.header("x-amz-security-token") == Some("session-tok")));
}
