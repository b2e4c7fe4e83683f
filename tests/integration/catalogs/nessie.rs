//! Project Nessie's Iceberg REST service: the profile was written from projectnessie/nessie's
//! `IcebergConfigurer` (getConfig puts `prefix` in the defaults, URL-encoded as
//! `main%7Cwarehouse`, i.e. `{ref}|{warehouse}`, and adds `nessie.*` overrides with its own base
//! URIs), `ExternalBaseUri.icebergS3SignerPath` (a table's config names its signer:
//! `s3.signer.uri = <base>/iceberg/` and `s3.signer.endpoint =
//! v1/<prefix>/s3-sign/<table>?<signed parameters>`, which Nessie verifies before signing) and
//! `IcebergApiV1S3SignResource`. Nessie vends S3 credentials when asked and signs otherwise;
//! without authentication enabled it takes any caller.

use super::served::served_path;
use super::{Auth, Profile};
use serde_json::{Value, json};

fn config(own: &str) -> Value {
    json!({
        "defaults": {"prefix": "main%7Cwarehouse", "warehouse": "s3://lake-bucket/nessie",
                     "rest-page-size": "200", "rest-metrics-reporting-enabled": "false"},
        "overrides": {"nessie.is-nessie-catalog": "true", "nessie.prefix-pattern": "{ref}|{warehouse}",
                      "nessie.default-branch.name": "main", "uri": format!("{own}/iceberg/"),
                      "nessie.core-base-uri": format!("{own}/api/"), "nessie.catalog-base-uri": format!("{own}/catalog/v1/"),
                      "nessie.iceberg-base-uri": format!("{own}/iceberg/")},
    })
}

fn table_config(own: &str, delegation: Option<&str>) -> Value {
    match delegation {
        Some("vended-credentials") => json!({
            "client.region": "us-east-1", "s3.access-key-id": "ASIANESSIE", "s3.secret-access-key": "nessie-secret",
            "s3.session-token": "nessie-session", "s3.session-token-expires-at-ms": "1893456000000",
        }),
        _ => json!({
            "client.region": "us-east-1", "s3.remote-signing-enabled": "true",
            "s3.signer.uri": format!("{own}/iceberg/"),
            "s3.signer.endpoint": "v1/main%7Cwarehouse/s3-sign/sales.orders?b=s3%3A%2F%2Flake-bucket%2Fnessie&w=s3%3A%2F%2Flake-bucket%2Fnessie%2Fsales%2Forders&e=1893456000&k=key-1&s=c2lnbmF0dXJl",
        }),
    }
}

pub const NESSIE: Profile = Profile {
    catalog: "nessie",
    declared: Some("main|warehouse"),
    base: "/iceberg",
    warehouse: "warehouse",
    path_prefix: "main%7Cwarehouse",
    config,
    table_config,
    secret_keys: &["s3.access-key-id", "s3.secret-access-key", "s3.session-token", "s3.session-token-expires-at-ms"],
    storage_credentials: false,
    root: "s3://lake-bucket/nessie",
    auth: Auth::Passthrough,
    signer: Some("/iceberg/v1/main%7Cwarehouse/s3-sign/sales.orders?"),
};

#[tokio::test]
async fn nessie_served_path_with_its_encoded_prefix_and_its_table_signer() {
    let f = served_path(NESSIE).await;
    // the signer's signed parameters reach Nessie as it wrote them
    let sign = f.catalog.catalog_requests().into_iter().find(|r| r.method == "POST").unwrap();
    assert!(sign.target.ends_with("&e=1893456000&k=key-1&s=c2lnbmF0dXJl"), "{}", sign.target);
}

#[tokio::test]
async fn finding_nessie_base_uris_in_get_config_would_send_clients_around_icegate() {
    let f = super::served::Fixture::start(NESSIE).await;
    let a = f.get("dave", "/v1/config?warehouse=warehouse", &[]).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let overrides = &a.json()["overrides"];
    for key in ["nessie.core-base-uri", "nessie.catalog-base-uri", "nessie.iceberg-base-uri", "uri"] {
        assert!(overrides.get(key).is_none(), "{key}: {}", a.text());
    }
    assert_eq!(overrides["nessie.default-branch.name"], "main");
    assert_eq!(a.json()["defaults"]["prefix"], "main%7Cwarehouse");
}
