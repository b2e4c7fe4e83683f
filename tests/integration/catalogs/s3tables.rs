//! Amazon S3 Tables' Iceberg REST endpoint (`https://s3tables.<region>.amazonaws.com/iceberg`):
//! the profile was written from the S3 user guide ("Accessing tables using the Amazon S3 Tables
//! Iceberg REST endpoint": the table bucket's ARN is the `warehouse`, requests are SigV4-signed
//! for `s3tables`) and the prefix form issue 29 and docs/design.md §2 record: the bucket's ARN,
//! which clients send percent-encoded in one segment. The endpoint vends no credentials (its
//! clients use their own IAM access to the table bucket) and has no signer.

use super::served::served_path;
use super::{Auth, Profile};
use serde_json::{Value, json};

const ARN_SENT: &str = "arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fanalytics";

fn config(_own: &str) -> Value {
    json!({"defaults": {}, "overrides": {"prefix": ARN_SENT}})
}

fn table_config(_own: &str, _delegation: Option<&str>) -> Value {
    json!({"client.region": "us-east-1"})
}

pub const S3_TABLES: Profile = Profile {
    catalog: "analytics",
    declared: Some("arn:aws:s3tables:us-east-1:111122223333:bucket/analytics"),
    base: "/iceberg",
    warehouse: ARN_SENT,
    path_prefix: ARN_SENT,
    config,
    table_config,
    secret_keys: &[],
    storage_credentials: false,
    root: "s3://9c1e2b44-3f7a-4d6e-b1c8-k3x9tables--table-s3",
    auth: Auth::SigV4 { service: "s3tables", region: "us-east-1" },
    signer: None,
};

#[tokio::test]
async fn s3tables_served_path_with_its_arn_prefix_and_sigv4() {
    let f = served_path(S3_TABLES).await;
    // the ARN reached the catalog as the client sent it: one segment, `%2F` and all
    let paths: Vec<String> = f.catalog.catalog_requests().into_iter().map(|r| r.target).collect();
    assert!(paths.contains(&format!("/iceberg/v1/{ARN_SENT}/namespaces/sales/tables")), "{paths:#?}");
    // another bucket's ARN is not a declared catalog: its `%2F` is refused before anything is sent
    let before = paths.len();
    let other = ARN_SENT.replace("analytics", "other");
    f.get("alice", &format!("/v1/{other}/namespaces"), &[]).await.assert_error(400, "BadRequestException");
    assert_eq!(f.catalog.catalog_requests().len(), before);
}
