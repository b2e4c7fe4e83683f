//! Lakekeeper: the profile was written from lakekeeper/lakekeeper's `get_config` (the
//! `warehouse` query is required; `overrides.prefix` is the warehouse's id from the prefix
//! template `{warehouse_id}`; `overrides.uri` is its own `/catalog`) and its S3 storage profile
//! (`generate_catalog_config` advertises `s3.signer.uri = <base>/catalog/v1/<warehouse-id>` in
//! getConfig's overrides, clients sign at the default endpoint `v1/aws/s3/sign` under it; the
//! table's config says `s3.remote-signing-enabled`, or carries STS credentials when vended
//! credentials are asked for). That is Lakekeeper before 0.9 (icegate was run once, by hand, in
//! front of 0.7.3); later versions also name the signer in the table's config.

use super::served::served_path;
use super::{Auth, Profile};
use serde_json::{Value, json};

const WAREHOUSE_ID: &str = "0195c3a1-8f2e-7d41-9a6b-3c5d7e9f1a2b";

fn config(own: &str) -> Value {
    json!({
        "defaults": {"s3.delete-enabled": "false"},
        "overrides": {"prefix": WAREHOUSE_ID, "uri": format!("{own}/catalog"),
                      "s3.signer.uri": format!("{own}/catalog/v1/{WAREHOUSE_ID}")},
    })
}

fn table_config(_own: &str, delegation: Option<&str>) -> Value {
    match delegation {
        Some("vended-credentials") => json!({
            "s3.region": "us-east-1", "client.region": "us-east-1", "s3.access-key-id": "ASIALAKEKEEPER",
            "s3.secret-access-key": "lakekeeper-secret", "s3.session-token": "lakekeeper-session",
        }),
        _ => json!({"s3.region": "us-east-1", "client.region": "us-east-1", "s3.remote-signing-enabled": "true"}),
    }
}

pub const LAKEKEEPER: Profile = Profile {
    catalog: "lake",
    declared: Some(WAREHOUSE_ID),
    base: "/catalog",
    warehouse: "demo",
    path_prefix: WAREHOUSE_ID,
    config,
    table_config,
    secret_keys: &["s3.access-key-id", "s3.secret-access-key", "s3.session-token"],
    storage_credentials: false,
    root: "s3://lake-bucket/lakekeeper",
    auth: Auth::Passthrough,
    signer: Some("/catalog/v1/0195c3a1-8f2e-7d41-9a6b-3c5d7e9f1a2b/v1/aws/s3/sign"),
};

#[tokio::test]
async fn lakekeeper_served_path_signs_at_the_signer_its_get_config_advertised() {
    let f = served_path(LAKEKEEPER).await;
    let sign = f.catalog.catalog_requests().into_iter().find(|r| r.method == "POST").unwrap();
    assert_eq!(sign.target, format!("/catalog/v1/{WAREHOUSE_ID}/v1/aws/s3/sign"));
    let body: Value = serde_json::from_slice(&sign.body).unwrap();
    assert_eq!(body["method"], "GET", "the client's sign request, relayed: {body}");
}
