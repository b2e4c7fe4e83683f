//! What icegate learns of a table's storage from the upstream's loadTable response (docs/design.md
//! §8): its locations, the S3 endpoint its `config` names, and the signer the upstream advertises
//! for it; and where an authorized sign request for the table therefore goes.

use super::config_map::StringMap;
use super::s3url::{Endpoint, Origin};
use serde_json::{Map, Value};
use thiserror::Error;

/// The default signer path of Iceberg's and PyIceberg's clients, relative to the signer URI.
const DEFAULT_SIGNER_ENDPOINT: &str = "v1/aws/s3/sign";

#[derive(Debug, Error, PartialEq, Eq)]
pub enum SignerError {
    #[error("the upstream advertises a signer address for the table that icegate cannot read")]
    Unreadable,
    #[error(
        "the upstream advertises a signer for the table outside its own origin and the origins in `credentials.signing.signer_origins`"
    )]
    Foreign,
}

/// A table's storage as its loadTable response describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableStorage {
    /// `location` and the location properties (docs/design.md §8).
    pub locations: Vec<String>,
    /// The table's `s3.endpoint` with its `s3.path-style-access`.
    pub endpoint: Option<Endpoint>,
    /// The signer the upstream advertised in the table's `config`.
    pub signer: Option<Signer>,
}

/// An advertised signer: `s3.signer.uri` and `s3.signer.endpoint` (or the newer `signer.uri`
/// and `signer.endpoint`), either of which may be absent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signer {
    pub uri: Option<String>,
    pub endpoint: Option<String>,
}

impl TableStorage {
    pub fn new(locations: Vec<String>, config: Option<&impl StringMap>) -> Self {
        let get = |key: &str| config.and_then(|c| c.string(key));
        let path_style = get("s3.path-style-access").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let endpoint = get("s3.endpoint").and_then(|url| Endpoint::parse(url.trim(), path_style));
        Self { locations, endpoint, signer: Signer::named_in(config) }
    }
}

/// The prefix a getConfig answer gives its catalog and the signer it advertises, read as
/// clients merge its `defaults` and `overrides` (the overrides win); `None` when the answer is
/// not a config response.
pub fn advertised_in_config(body: &[u8]) -> Option<(Option<String>, Option<Signer>)> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let mut merged = Map::new();
    for part in ["defaults", "overrides"] {
        if let Some(map) = value.get(part).and_then(Value::as_object) {
            merged.extend(map.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    let prefix = merged.get("prefix").and_then(Value::as_str).map(str::to_owned);
    Some((prefix, Signer::named_in(Some(&merged))))
}

impl Signer {
    /// The signer a `config` map names: `s3.signer.uri` and `s3.signer.endpoint`, else the newer
    /// `signer.uri` and `signer.endpoint`.
    pub fn named_in(config: Option<&impl StringMap>) -> Option<Self> {
        let get = |key: &str| config.and_then(|c| c.string(key)).map(|v| v.trim().to_owned());
        [("s3.signer.uri", "s3.signer.endpoint"), ("signer.uri", "signer.endpoint")]
            .into_iter()
            .map(|(uri, endpoint)| Signer { uri: get(uri), endpoint: get(endpoint) })
            .find(|s| s.uri.is_some() || s.endpoint.is_some())
    }

    /// Where the upstream's clients would send a sign request: the endpoint resolved against the
    /// signer URI (the catalog URI `catalog` when absent), as Iceberg's and PyIceberg's clients
    /// join them. Only an origin in `allowed` (the upstream's own and the configured ones) is
    /// accepted: icegate forwards the caller's credentials there.
    pub fn destination(&self, catalog: &str, allowed: &[Origin]) -> Result<http::Uri, SignerError> {
        let endpoint = self.endpoint.as_deref().unwrap_or(DEFAULT_SIGNER_ENDPOINT);
        let url = if endpoint.starts_with("http://") || endpoint.starts_with("https://") {
            endpoint.to_owned()
        } else {
            let base = self.uri.as_deref().unwrap_or(catalog);
            format!("{}/{}", base.trim_end_matches('/'), endpoint.trim_start_matches('/'))
        };
        let uri: http::Uri = url.parse().map_err(|_| SignerError::Unreadable)?;
        let origin = Origin::of(&uri).ok_or(SignerError::Unreadable)?;
        if !allowed.contains(&origin) {
            return Err(SignerError::Foreign);
        }
        Ok(uri)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn storage(config: Value) -> TableStorage {
        TableStorage::new(vec!["s3://lake/t".into()], config.as_object())
    }

    #[test]
    fn the_endpoint_and_signer_come_from_the_tables_config() {
        let s = storage(json!({"s3.endpoint": "http://minio:9000", "s3.path-style-access": "TRUE",
                               "s3.signer.uri": "http://catalog:8181/catalog/", "s3.signer.endpoint": "v1/w/v1/aws/s3/sign",
                               "signer.uri": "http://ignored"}));
        assert_eq!(s.endpoint, Endpoint::parse("http://minio:9000", true));
        assert_eq!(
            s.signer,
            Some(Signer {
                uri: Some("http://catalog:8181/catalog/".into()),
                endpoint: Some("v1/w/v1/aws/s3/sign".into())
            })
        );
        let newer = storage(json!({"signer.endpoint": "v1/sign/t"}));
        assert_eq!(newer.signer, Some(Signer { uri: None, endpoint: Some("v1/sign/t".into()) }));
        assert_eq!(
            storage(json!({"s3.endpoint": "not a url", "s3.remote-signing-enabled": "true"})),
            storage(json!({}))
        );
        assert_eq!(TableStorage::new(Vec::new(), None::<&Map<String, Value>>), TableStorage::default());
    }

    #[test]
    fn get_config_advertises_a_signer_as_clients_merge_it() {
        let lakekeeper_07 = br#"{"defaults": {"s3.signer.uri": "http://old"}, "overrides": {"prefix": "wh-1", "s3.signer.uri": "http://lk:8181/catalog/"}}"#;
        assert_eq!(
            advertised_in_config(lakekeeper_07),
            Some((Some("wh-1".into()), Some(Signer { uri: Some("http://lk:8181/catalog/".into()), endpoint: None })))
        );
        assert_eq!(advertised_in_config(br#"{"defaults": {}, "overrides": {}}"#), Some((None, None)));
        assert_eq!(advertised_in_config(b"nope"), None);
    }

    #[test]
    fn a_signer_is_joined_as_clients_join_it_and_only_on_allowed_origins() {
        let upstream = Origin::parse("http://catalog:8181").unwrap();
        let allowed = [upstream, Origin::parse("https://signer.example").unwrap()];
        let signer = |uri: Option<&str>, endpoint: Option<&str>| Signer {
            uri: uri.map(str::to_owned),
            endpoint: endpoint.map(str::to_owned),
        };
        let catalog = "http://catalog:8181/iceberg";
        for (s, expected) in [
            (
                signer(Some("http://catalog:8181/catalog/"), Some("v1/w/v1/aws/s3/sign")),
                "http://catalog:8181/catalog/v1/w/v1/aws/s3/sign",
            ),
            (signer(None, Some("/v1/sign")), "http://catalog:8181/iceberg/v1/sign"),
            (signer(Some("http://CATALOG:8181"), None), "http://CATALOG:8181/v1/aws/s3/sign"),
            (signer(None, Some("https://signer.example/sign")), "https://signer.example/sign"),
        ] {
            assert_eq!(s.destination(catalog, &allowed).map(|u| u.to_string()), Ok(expected.to_owned()));
        }
        for s in [
            signer(Some("http://catalog:8182"), None),
            signer(Some("https://catalog:8181"), None),
            signer(Some("http://elsewhere"), Some("v1/sign")),
            signer(None, Some("http://elsewhere/v1/sign")),
        ] {
            assert_eq!(s.destination(catalog, &allowed), Err(SignerError::Foreign), "{s:?}");
        }
        assert_eq!(
            signer(Some("http://u@catalog:8181"), None).destination(catalog, &allowed),
            Err(SignerError::Unreadable)
        );
        assert_eq!(signer(Some("not a url"), None).destination(catalog, &allowed), Err(SignerError::Unreadable));
    }
}
