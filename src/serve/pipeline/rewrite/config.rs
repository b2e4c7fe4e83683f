//! getConfig answers cleaned as docs/design.md §4 says: nothing that would send a client around
//! icegate, let it authenticate as icegate or set a header icegate reads; credentials never.

use super::body::RewriteError;
use crate::core::credentials::clean::{names_read_header, read_headers};
use crate::core::credentials::config_map::{ConfigMap, StringMap};
use crate::core::iceberg::list::ListError;
use bytes::Bytes;
use serde_json::value::RawValue;

/// `config` keys that are credentials (docs/design.md §4 getConfig row); prefixes end with `.`.
const CREDENTIAL_KEYS: [&str; 9] = [
    "s3.access-key-id",
    "s3.secret-access-key",
    "s3.session-token",
    "client.access-key-id",
    "client.secret-access-key",
    "client.session-token",
    "gcs.oauth2.token",
    "adls.sas-token.",
    "adls.auth.shared-key.",
];

/// Words that mark a key as secret whatever the upstream calls it (`s3.secret-key`,
/// `credential`, `oauth2.token-exchange`...): removing a harmless key costs little, leaking a
/// secret one costs much.
const SECRET_WORDS: [&str; 6] = ["secret", "token", "password", "credential", "sas-", "-key"];

/// The signer keys: clients must sign through icegate (docs/design.md §8).
const SIGNER_KEYS: [&str; 4] = ["s3.signer.uri", "s3.signer.endpoint", "signer.uri", "signer.endpoint"];

/// Whether a getConfig `defaults`/`overrides` key is removed: `uri`, any other key named as an
/// address (`*.uri`, `*-uri`: Nessie's `nessie.iceberg-base-uri`, which its Spark extensions
/// make the catalog's `uri` on a branch change, and `nessie.core-base-uri`) and the signer keys
/// would send clients around icegate, `token` would let them authenticate as icegate,
/// `namespace-separator` would make them use a separator icegate refuses; credentials never
/// leave, nor does a key named like one. `header.*` keys are the catalog's instructions to
/// clients and pass, except those naming a header icegate reads (`read_headers`, lower case):
/// clients send them on every request, so the upstream could otherwise set a caller's active
/// roles (docs/design.md §4).
fn removed_config_key(key: &str, extras: &[String], read_headers: &[String]) -> bool {
    let lower = key.to_ascii_lowercase();
    if lower.starts_with("header.") {
        return names_read_header(key, read_headers);
    }
    matches!(key, "uri" | "token" | "namespace-separator")
        || lower.ends_with(".uri")
        || lower.ends_with("-uri")
        || SIGNER_KEYS.contains(&key)
        || CREDENTIAL_KEYS.iter().any(|c| if c.ends_with('.') { key.starts_with(c) } else { key == *c })
        || extras.iter().any(|e| e == key)
        || SECRET_WORDS.iter().any(|w| lower.contains(w))
}

/// An endpoint the catalog advertises, kept only when icegate classifies it.
fn classified_endpoint(endpoint: &str) -> bool {
    let Some((method, path)) = endpoint.split_once(' ') else { return false };
    let concrete = path
        .replace("{prefix}", "p")
        .replace("{namespace}", "n")
        .replace("{table}", "t")
        .replace("{view}", "v")
        .replace("{function}", "f")
        .replace("{plan-id}", "i");
    matches!(
        crate::core::iceberg::routes::classify(
            method,
            &concrete,
            &crate::core::iceberg::routes::RouteOptions::default()
        ),
        Ok(crate::core::iceberg::routes::Classified::Route(_))
    )
}

/// A getConfig response cleaned as docs/design.md §4 says, with `config`'s
/// `credentials.secret_config_keys` and the headers its identity providers read. A `prefix` it
/// gives clients must name a catalog by the rule a request's path is read by (`names_catalog`,
/// docs/design.md §2), else clients would be sent where every request is refused: 502.
pub fn clean_config(
    bytes: &[u8],
    config: &crate::config::Config,
    names_catalog: impl Fn(&str) -> bool,
) -> Result<Bytes, RewriteError> {
    let invalid = |why: &str| RewriteError::List(ListError::Shape(format!("config response: {why}")));
    // Read in place as a loadTable's `config` is: the upstream's order and spelling stay, and
    // a key named twice is refused, since clients differ on which of its values they read.
    let mut top: ConfigMap<'_> = serde_json::from_slice(bytes).map_err(|e| invalid(&e.to_string()))?;
    let read_headers = read_headers(&config.identity.header.user_header, &config.identity.header.groups_header);
    for key in ["defaults", "overrides"] {
        let Some(raw) = top.raw(key).filter(|raw| raw.starts_with('{')) else { continue };
        let mut map: ConfigMap<'_> = serde_json::from_str(raw).map_err(|e| invalid(&e.to_string()))?;
        map.retain_keys(|k| !removed_config_key(k, &config.credentials.secret_config_keys, &read_headers));
        match (map.string("prefix"), map.raw("prefix")) {
            (_, None) => {}
            // clients read an empty prefix as none
            (Some(p), _) if p.is_empty() || names_catalog(&p) => {}
            (Some(p), _) => return Err(RewriteError::UnmappedPrefix { key, value: p.into_owned() }),
            (None, Some(other)) => return Err(RewriteError::UnmappedPrefix { key, value: other.to_owned() }),
        }
        let cleaned = serde_json::value::to_raw_value(&map).map_err(|e| invalid(&e.to_string()))?;
        top.set_raw(key, cleaned);
    }
    if let Some(raw) = top.raw("endpoints").filter(|raw| raw.starts_with('[')) {
        let endpoints: Vec<&RawValue> = serde_json::from_str(raw).map_err(|e| invalid(&e.to_string()))?;
        let kept: Vec<&RawValue> = endpoints
            .iter()
            .copied()
            .filter(|e| serde_json::from_str::<String>(e.get()).is_ok_and(|e| classified_endpoint(&e)))
            .collect();
        if kept.len() < endpoints.len() {
            let cleaned = serde_json::value::to_raw_value(&kept).map_err(|e| invalid(&e.to_string()))?;
            top.set_raw("endpoints", cleaned);
        }
    }
    serde_json::to_vec(&top).map(Bytes::from).map_err(|e| invalid(&e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_loses_what_would_bypass_icegate() {
        let body = br#"{"defaults":{"uri":"http://catalog","warehouse":"w","s3.secret-access-key":"x","adls.sas-token.acct":"y","header.X":"1","S3.Secret-Key":"z","credential":"id:secret","my.extra":"e","client.region":"r","rest-page-size":"10","s3.signer.uri":"http://catalog","signer.endpoint":"v1/sign"},"overrides":{"token":"t","namespace-separator":"%2E","prefix":"p","header.X-Api-Token":"h","s3.signer.endpoint":"v1/aws/s3/sign","signer.uri":"http://catalog"},"endpoints":["GET /v1/{prefix}/namespaces","POST /v1/{prefix}/magic"]}"#;
        let mut config = crate::config::Config::default();
        config.credentials.secret_config_keys = vec!["my.extra".to_owned()];
        let cleaned = clean_config(body, &config, |p| p == "p").unwrap();
        let v: serde_json::Value = serde_json::from_slice(&cleaned).unwrap();
        assert_eq!(
            v["defaults"],
            serde_json::json!({"warehouse":"w","header.X":"1","client.region":"r","rest-page-size":"10"})
        );
        assert_eq!(v["overrides"], serde_json::json!({"prefix":"p","header.X-Api-Token":"h"}));
        assert_eq!(v["endpoints"], serde_json::json!(["GET /v1/{prefix}/namespaces"]));
        assert!(clean_config(b"nope", &config, |_| true).is_err());
    }

    #[test]
    fn finding_config_loses_every_key_naming_an_address_clients_would_follow() {
        let body = br#"{"defaults":{"nessie.core-base-uri":"http://nessie/api/","OAuth2-Server-URI":"http://nessie/token","s3.endpoint":"http://minio:9000"},"overrides":{"nessie.iceberg-base-uri":"http://nessie/iceberg/","nessie.catalog-base-uri":"http://nessie/catalog/v1/","nessie.default-branch.name":"main","uri-style":"kept"}}"#;
        let cleaned = clean_config(body, &crate::config::Config::default(), |_| true).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&cleaned).unwrap();
        assert_eq!(v["defaults"], serde_json::json!({"s3.endpoint":"http://minio:9000"}));
        assert_eq!(v["overrides"], serde_json::json!({"nessie.default-branch.name":"main","uri-style":"kept"}));
    }

    #[test]
    fn config_loses_header_keys_naming_headers_icegate_reads() {
        let body = br#"{"defaults":{"header.Authorization":"Basic x","header.X-Gravitino-Active-Roles":"admin","header.x-forwarded-user":"root","header.X-Custom":"kept"},"overrides":{"HEADER.x-gravitino-active-roles":"admin","header.X-Team":"g","header.X-Trace":"kept"}}"#;
        let mut config = crate::config::Config::default();
        config.identity.header.groups_header = "X-Team".to_owned();
        let v: serde_json::Value = serde_json::from_slice(&clean_config(body, &config, |_| true).unwrap()).unwrap();
        assert_eq!(v["defaults"], serde_json::json!({"header.X-Custom":"kept"}));
        assert_eq!(v["overrides"], serde_json::json!({"header.X-Trace":"kept"}));
    }

    #[test]
    fn config_keeps_the_upstreams_order_and_spelling_but_for_what_it_removes() {
        let config = crate::config::Config::default();
        let body = br#"{"overrides":{"warehouse":"w","uri":"http://catalog","a.b":"\u0041"},"defaults":{"z":1,"token":"t","a":[1, 2]},"endpoints":["POST /v1/{prefix}/magic","GET \/v1/{prefix}/namespaces"],"x":{"k" : 1}}"#;
        let cleaned = clean_config(body, &config, |_| true).unwrap();
        assert_eq!(
            std::str::from_utf8(&cleaned).unwrap(),
            r#"{"overrides":{"warehouse":"w","a.b":"\u0041"},"defaults":{"z":1,"a":[1, 2]},"endpoints":["GET \/v1/{prefix}/namespaces"],"x":{"k" : 1}}"#
        );
        // nothing removed: the answer as it came, but for the blanks between members
        let clean = br#"{"defaults":{"warehouse":"w"},"overrides":{},"endpoints":["GET /v1/{prefix}/namespaces"]}"#;
        assert_eq!(clean_config(clean, &config, |_| true).unwrap(), &clean[..]);
    }

    #[test]
    fn a_config_answer_naming_a_key_twice_is_refused() {
        let config = crate::config::Config::default();
        for twice in [
            r#"{"overrides":{"prefix":"ok"},"overrides":{"prefix":"other"}}"#,
            r#"{"overrides":{"prefix":"ok","prefix":"other"}}"#,
            r#"{"defaults":{"warehouse":"a","w\u0061rehouse":"b"}}"#,
        ] {
            let e = clean_config(twice.as_bytes(), &config, |p| p == "ok").unwrap_err();
            assert_eq!(crate::error::Refusal::from(&e).status(), 502, "{twice}");
        }
    }

    /// The cleaning as it was before it kept the upstream's order (over a `serde_json` value):
    /// the reference the property below compares against.
    fn cleaned_as_before(text: &str, config: &crate::config::Config) -> serde_json::Value {
        let mut value: serde_json::Value = serde_json::from_str(text).unwrap();
        let headers = read_headers(&config.identity.header.user_header, &config.identity.header.groups_header);
        for key in ["defaults", "overrides"] {
            if let Some(map) = value.get_mut(key).and_then(serde_json::Value::as_object_mut) {
                map.retain(|k, _| !removed_config_key(k, &config.credentials.secret_config_keys, &headers));
            }
        }
        if let Some(endpoints) = value.get_mut("endpoints").and_then(serde_json::Value::as_array_mut) {
            endpoints.retain(|e| e.as_str().is_some_and(classified_endpoint));
        }
        value
    }

    const KEYS: [&str; 10] = [
        "uri",
        "warehouse",
        "token",
        "s3.endpoint",
        "header.Authorization",
        "header.X-Custom",
        "my.secret",
        "Nessie.Core-Base-URI",
        "rest-page-size",
        r"w\u0061rehouse-2",
    ];
    const VALUES: [&str; 5] = [r#""v""#, "1", "null", r#"{"k": [1, "\u0041"]}"#, r#""""#];

    proptest::proptest! {
        #[test]
        fn cleaning_in_place_removes_what_the_value_cleaning_did_and_keeps_the_order(
            picks in proptest::collection::vec(
                (proptest::sample::select(KEYS.to_vec()), proptest::sample::select(VALUES.to_vec())),
                0..12,
            ),
            endpoints in proptest::collection::vec(
                proptest::sample::select(vec!["GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/magic", "nonsense"]),
                0..4,
            ),
        ) {
            // each key once, in the order picked, values as written
            let mut entries: Vec<(&str, &str)> = Vec::new();
            for (k, v) in picks {
                if !entries.iter().any(|(key, _)| *key == k) {
                    entries.push((k, v));
                }
            }
            let defaults = entries.iter().map(|(k, v)| format!(r#""{k}": {v}"#)).collect::<Vec<_>>().join(", ");
            let endpoints = serde_json::to_string(&endpoints).unwrap();
            let text = format!(r#"{{"defaults": {{{defaults}}}, "endpoints": {endpoints}, "x": 1}}"#);
            let config = crate::config::Config::default();
            let cleaned = clean_config(text.as_bytes(), &config, |_| true).unwrap();
            let got: serde_json::Value = serde_json::from_slice(&cleaned).unwrap();
            proptest::prop_assert_eq!(&got, &cleaned_as_before(&text, &config), "{}", text);
            // what stays is in the upstream's order, its values as spelt (serde_json's map
            // sorts, so the text is read); a key with an escape is written decoded
            let kept: Vec<String> = entries
                .iter()
                .map(|(k, v)| (serde_json::from_str::<String>(&format!(r#""{k}""#)).unwrap(), v))
                .filter(|(k, _)| got["defaults"].get(k).is_some())
                .map(|(k, v)| format!("{}:{v}", serde_json::Value::String(k)))
                .collect();
            let out = std::str::from_utf8(&cleaned).unwrap();
            let expected_start = format!(r#"{{"defaults":{{{}}},"endpoints":"#, kept.join(","));
            proptest::prop_assert!(out.starts_with(&expected_start), "{} from {}", out, text);
        }
    }

    #[test]
    fn a_config_prefix_must_name_a_catalog() {
        let config = crate::config::Config::default();
        let glue = |p: &str| p == "catalogs/123456789012";
        for kept in [
            r#"{"overrides":{"prefix":"catalogs/123456789012"}}"#,
            r#"{"defaults":{"prefix":"catalogs/123456789012"},"overrides":{}}"#,
            r#"{"overrides":{"prefix":""}}"#,
            r#"{"overrides":{}}"#,
        ] {
            let cleaned = clean_config(kept.as_bytes(), &config, glue).unwrap();
            assert_eq!(
                serde_json::from_slice::<serde_json::Value>(&cleaned).unwrap(),
                serde_json::from_str::<serde_json::Value>(kept).unwrap()
            );
        }
        for refused in [
            r#"{"overrides":{"prefix":"catalogs/999"}}"#,
            r#"{"defaults":{"prefix":"other"}}"#,
            r#"{"overrides":{"prefix":7}}"#,
        ] {
            let e = clean_config(refused.as_bytes(), &config, glue).unwrap_err();
            assert!(matches!(e, RewriteError::UnmappedPrefix { .. }), "{refused}: {e}");
            assert_eq!(crate::error::Refusal::from(&e).status(), 502);
        }
    }
}
