use super::*;
use crate::core::policy::authorize::Scope;
use serde_json::json;

fn endpoints(public: bool) -> Endpoints {
    Endpoints {
        credentials: if public {
            "https://gate/v1/p/namespaces/db/tables/t/credentials"
        } else {
            "v1/p/namespaces/db/tables/t/credentials"
        }
        .to_owned(),
        sign: "v1/p/namespaces/db/tables/t/sign".to_owned(),
        signer_uri: public.then(|| "https://gate".to_owned()),
    }
}

fn minted() -> Minted {
    Minted {
        access_key_id: "ASIAMINTED".into(),
        secret_access_key: "minted-secret".into(),
        session_token: "minted-token".into(),
        expiration_ms: 1_700_000_000_000,
    }
}

fn map(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

fn config_map(value: Value) -> ConfigMap<'static> {
    ConfigMap::from_value(&value).unwrap()
}

/// Every way an upstream could spell a credential that icegate does not know by name.
fn upstream_config() -> ConfigMap<'static> {
    config_map(json!({
        "s3.access-key-id": "AKIA", "s3.secret-access-key": "s", "s3.session-token": "st",
        "S3.Secret-Access-Key": "mixed-case", "s3.secret-key": "invented", "client.access-key-id": "c",
        "gcs.oauth2.token": "g", "adls.sas-token.acct": "a", "my.custom.secret": "x", "token": "upstream-token",
        "client.region": "eu-west-1", "s3.endpoint": "http://minio", "s3.path-style-access": "true",
        "write.format.default": "parquet", "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "client.refresh-credentials-endpoint": "v1/upstream/credentials",
    }))
}

#[test]
fn removing_credentials_keeps_only_known_non_secret_keys() {
    let e = endpoints(false);
    let rules = Rules {
        action: Action::Strip,
        extra_allowed: &["my.extra".into()],
        endpoints: &e,
        minted: None,
        read_headers: &[],
    };
    let mut config = upstream_config();
    config.set("my.extra", "kept");
    rules.config(&mut config);
    assert_eq!(
        config.to_value(),
        json!({"client.region": "eu-west-1", "s3.endpoint": "http://minio", "s3.path-style-access": "true",
               "write.format.default": "parquet", "io-impl": "org.apache.iceberg.aws.s3.S3FileIO", "my.extra": "kept"})
    );
}

#[test]
fn kept_credentials_lose_the_token_and_refresh_through_icegate() {
    let e = endpoints(true);
    let rules = Rules { action: Action::Keep, extra_allowed: &[], endpoints: &e, minted: None, read_headers: &[] };
    let mut config = upstream_config();
    rules.config(&mut config);
    let config = config.to_value();
    assert!(config.get("token").is_none());
    assert_eq!(config["s3.secret-access-key"], "s");
    assert_eq!(config["client.refresh-credentials-endpoint"], "https://gate/v1/p/namespaces/db/tables/t/credentials");
}

#[test]
fn downscoping_replaces_every_upstream_credential_with_the_minted_ones() {
    let e = endpoints(false);
    let m = minted();
    let rules = Rules {
        action: Action::Downscope(Scope::Read),
        extra_allowed: &[],
        endpoints: &e,
        minted: Some(&m),
        read_headers: &[],
    };
    let mut config = upstream_config();
    rules.config(&mut config);
    let config = config.to_value();
    assert_eq!(config["s3.access-key-id"], "ASIAMINTED");
    assert_eq!(config["s3.session-token-expires-at-ms"], "1700000000000");
    assert_eq!(config["client.refresh-credentials-endpoint"], "v1/p/namespaces/db/tables/t/credentials");
    for gone in ["S3.Secret-Access-Key", "s3.secret-key", "client.access-key-id", "gcs.oauth2.token", "token"] {
        assert!(config.get(gone).is_none(), "{gone}");
    }
    let locations = vec!["s3://b/wh/t".to_owned(), "file:///x".to_owned(), "s3a://b/data".to_owned()];
    let entries = rules.storage_credentials(vec![entry("s3://b/", "AKIA")], &locations);
    assert_eq!(entries.iter().map(|e| e.prefix.as_ref()).collect::<Vec<_>>(), ["s3://b/wh/t", "s3a://b/data"]);
    assert!(entries.iter().all(|e| e.config.string("s3.access-key-id").as_deref() == Some("ASIAMINTED")));
    let none = Rules { minted: None, ..rules };
    assert!(none.storage_credentials(vec![entry("s3://b/wh/t", "AKIA")], &locations).is_empty());
}

fn entry(prefix: &str, key: &str) -> StorageCredential<'static> {
    StorageCredential {
        prefix: Cow::Owned(prefix.to_owned()),
        config: config_map(json!({"s3.access-key-id": key, "token": "t"})),
    }
}

#[test]
fn storage_credentials_outside_the_table_are_removed_for_every_caller() {
    let e = endpoints(false);
    let rules = Rules { action: Action::Keep, extra_allowed: &[], endpoints: &e, minted: None, read_headers: &[] };
    let locations = table_locations(Some("s3://b/wh/db/t".into()), Some(&map(json!({"write.data.path": "s3://d/x"}))));
    let kept = rules.storage_credentials(
        vec![
            entry("s3://b/", "bucket-root"),
            entry("s3://b/wh/db/t", "table"),
            entry("s3a://b/wh/db/t/data", "data"),
            entry("s3://b/wh/db/t2", "sibling"),
            entry("s3://d/x/", "data-path"),
            entry("", "empty"),
        ],
        &locations,
    );
    let keys: Vec<String> = kept.iter().map(|e| e.config.string("s3.access-key-id").unwrap().into_owned()).collect();
    assert_eq!(keys, ["table", "data", "data-path"]);
    assert!(kept.iter().all(|e| !e.config.has("token")));
    let strip = Rules { action: Action::Strip, ..rules };
    assert!(strip.storage_credentials(vec![entry("s3://b/wh/db/t", "table")], &locations).is_empty());
    assert!(rules.storage_credentials(vec![entry("s3://b/wh/db/t", "table")], &[]).is_empty());
}

#[test]
fn signer_keys_point_at_the_tables_sign_endpoint_of_icegate() {
    for public in [false, true] {
        let e = endpoints(public);
        let rules = Rules { action: Action::Strip, extra_allowed: &[], endpoints: &e, minted: None, read_headers: &[] };
        let mut config = config_map(json!({"s3.remote-signing-enabled": "true", "s3.signer.uri": "http://upstream",
                                    "s3.signer.endpoint": "v1/aws/s3/sign", "signer.uri": "http://upstream"}));
        rules.config(&mut config);
        let config = config.to_value();
        assert_eq!(config["s3.signer.endpoint"], "v1/p/namespaces/db/tables/t/sign");
        assert_eq!(config["signer.endpoint"], "v1/p/namespaces/db/tables/t/sign");
        assert_eq!(config.get("s3.signer.uri").and_then(Value::as_str), public.then_some("https://gate"));
        assert_eq!(config.get("signer.uri").and_then(Value::as_str), public.then_some("https://gate"));
        // Remote signing with no signer keys would send clients to the legacy endpoint.
        let mut bare = config_map(json!({"s3.remote-signing-enabled": "true"}));
        rules.config(&mut bare);
        let bare = bare.to_value();
        assert_eq!(bare["s3.signer.endpoint"], "v1/p/namespaces/db/tables/t/sign");
        // Iceberg 1.12 reads only the newer spelling
        assert_eq!(bare["signer.endpoint"], "v1/p/namespaces/db/tables/t/sign");
        // the offer is whole: PyIceberg signs only when `s3.signer` names its REST signer
        assert_eq!(
            (&bare["s3.remote-signing-enabled"], &bare["s3.signer"]),
            (&json!("true"), &json!("S3V4RestSigner"))
        );
    }
}

#[test]
fn finding_the_signer_offer_is_whole_for_every_client_and_never_made_without_a_signer() {
    let e = endpoints(false);
    for action in [Action::Keep, Action::Strip] {
        let rules = Rules { action, extra_allowed: &[], endpoints: &e, minted: None, read_headers: &[] };
        let offered = |config: Value| {
            let mut config = config_map(config);
            rules.config(&mut config);
            config.to_value()
        };
        // Lakekeeper 0.7.3 without vended credentials: remote signing, no `s3.signer`
        let lakekeeper = offered(json!({"client.region": "r", "s3.remote-signing-enabled": "true"}));
        assert_eq!(
            lakekeeper,
            json!({"client.region": "r", "s3.remote-signing-enabled": "true", "s3.signer": "S3V4RestSigner",
                   "s3.signer.endpoint": "v1/p/namespaces/db/tables/t/sign",
                   "signer.endpoint": "v1/p/namespaces/db/tables/t/sign"}),
            "{action:?}"
        );
        // a signer key alone, another implementation named: icegate's REST signer instead
        let keys = offered(json!({"s3.signer.endpoint": "v1/aws/s3/sign", "s3.signer": "Other"}));
        assert_eq!(
            (&keys["s3.remote-signing-enabled"], &keys["s3.signer"]),
            (&json!("true"), &json!("S3V4RestSigner"))
        );
        // the upstream turned signing off: it stays off, the keys still name icegate
        let off = offered(json!({"s3.remote-signing-enabled": "false", "s3.signer.uri": "http://upstream"}));
        assert_eq!(off["s3.remote-signing-enabled"], "false");
        assert!(off.get("s3.signer").is_none(), "{off}");
        assert_eq!(off["s3.signer.endpoint"], "v1/p/namespaces/db/tables/t/sign");
        // no signer at all: nothing offered
        let none = offered(json!({"client.region": "r", "s3.endpoint": "http://s3.local"}));
        assert_eq!(none, json!({"client.region": "r", "s3.endpoint": "http://s3.local"}), "{action:?}");
    }
}

#[test]
fn remote_signing_config_keeps_its_properties_and_loses_headers_icegate_reads() {
    let e = endpoints(true);
    let read = ["authorization".to_owned(), "x-gravitino-active-roles".to_owned()];
    let rules = Rules { action: Action::Keep, extra_allowed: &[], endpoints: &e, minted: None, read_headers: &read };
    let mut signing: RemoteSigningConfig = serde_json::from_value(json!({
        "headers": {"AUTHORIZATION": ["x"], "X_Gravitino_Active_Roles": ["admin"], "X-Trace": ["kept"]},
        "properties": {"a": "b", "header.Authorization": "x", "signer.uri": "http://upstream"},
        "future": 1,
    }))
    .unwrap();
    rules.remote_signing_config(&mut signing);
    let out = serde_json::to_value(&signing).unwrap();
    let ours = "v1/p/namespaces/db/tables/t/sign";
    assert_eq!(
        out,
        json!({"headers": {"X-Trace": ["kept"]}, "future": 1,
               "properties": {"a": "b", "signer.uri": "https://gate", "signer.endpoint": ours,
                              "s3.signer.uri": "https://gate", "s3.signer.endpoint": ours}})
    );
}

#[test]
fn locations_are_on_path_boundaries() {
    assert!(is_under("s3://b/t", "s3://b/t/"));
    assert!(is_under("s3://b/t/x", "s3a://b/t"));
    assert!(!is_under("s3://b/t2", "s3://b/t"));
    assert!(!is_under("s3://b/", "s3://b/t"));
    assert!(!is_under("anything", ""));
    assert!(!is_under("relative/t", "relative"));
    assert_eq!(
        table_locations(
            Some("s3://b/t".into()),
            Some(&map(json!({"write.metadata.path": "s3://b/t", "write.data.path": ""})))
        ),
        ["s3://b/t"]
    );
}

#[test]
fn icegate_as_the_signer_removes_credentials_and_offers_its_signer_in_every_spelling() {
    for public in [false, true] {
        let e = endpoints(public);
        let rules = Rules { action: Action::Sign, extra_allowed: &[], endpoints: &e, minted: None, read_headers: &[] };
        let mut config = upstream_config();
        // an upstream's own signer, and a signer implementation PyIceberg does not have
        config.set("s3.signer.uri", "http://catalog.internal/");
        config.set("signer.endpoint", "v1/upstream/sign");
        config.set("s3.signer", "UpstreamSigner");
        rules.config(&mut config);
        let sign = "v1/p/namespaces/db/tables/t/sign";
        let mut expected = json!({
            "client.region": "eu-west-1", "s3.endpoint": "http://minio", "s3.path-style-access": "true",
            "write.format.default": "parquet", "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
            "s3.remote-signing-enabled": "true", "s3.signer": "S3V4RestSigner",
            "s3.signer.endpoint": sign, "signer.endpoint": sign,
        });
        if public {
            expected["s3.signer.uri"] = json!("https://gate");
            expected["signer.uri"] = json!("https://gate");
        }
        assert_eq!(config.to_value(), expected, "public url: {public}");
        let entries =
            vec![StorageCredential { prefix: "s3://b/t".into(), config: config_map(json!({"s3.access-key-id": "A"})) }];
        assert_eq!(rules.storage_credentials(entries, &["s3://b/t".to_owned()]), []);
    }
}

#[test]
fn icegate_as_the_signer_replaces_the_upstreams_remote_signing_config() {
    let e = endpoints(true);
    let rules = Rules { action: Action::Sign, extra_allowed: &[], endpoints: &e, minted: None, read_headers: &[] };
    let mut signing: RemoteSigningConfig = serde_json::from_value(json!({
        "properties": {"signer.uri": "http://catalog.internal/", "warehouse": "w"},
        "headers": {"X-Upstream-Signer-Key": ["k"]},
        "other": 1,
    }))
    .unwrap();
    rules.remote_signing_config(&mut signing);
    let sign = "v1/p/namespaces/db/tables/t/sign";
    assert_eq!(
        serde_json::to_value(&signing).unwrap(),
        json!({"properties": {"s3.signer.uri": "https://gate", "s3.signer.endpoint": sign,
                              "signer.uri": "https://gate", "signer.endpoint": sign}})
    );
}
