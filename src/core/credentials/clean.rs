//! The rules of docs/design.md §8 on the two places a response carries credentials: a `config`
//! map and the `storage-credentials` list. Pure: the caller supplies the table's locations,
//! icegate's endpoints for the table, and any minted credentials.

use super::Action;
use super::Minted;
use super::config_map::{ConfigMap, StringMap};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// `config` keys that carry no secret, kept when credentials are removed (docs/design.md §8).
const NON_SECRET_KEYS: &[&str] = &[
    "client.region",
    // the name of the client's signer implementation (PyIceberg's `S3V4RestSigner`)
    "s3.signer",
    "s3.endpoint",
    "s3.path-style-access",
    "s3.cross-region-access-enabled",
    "s3.remote-signing-enabled",
    "io-impl",
    "scan-planning-mode",
];
/// Remote-signing keys: kept in every mode, since icegate rewrites them to its own
/// table-scoped signer, which authorizes each request.
const S3_SIGNER_KEYS: [&str; 2] = ["s3.signer.uri", "s3.signer.endpoint"];
const SIGNER_KEYS: [&str; 2] = ["signer.uri", "signer.endpoint"];
const REFRESH_KEYS: [&str; 3] = [
    "client.refresh-credentials-endpoint",
    "gcs.oauth2.refresh-credentials-endpoint",
    "adls.refresh-credentials-endpoint",
];
/// The refresh endpoint of S3 credentials, the only kind `s3-downscope` mints.
const S3_REFRESH_KEY: &str = "client.refresh-credentials-endpoint";

/// One `storage-credentials` entry (Iceberg's `StorageCredential`), read in place from the
/// upstream's answer. Other members are dropped.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
pub struct StorageCredential<'a> {
    #[serde(borrow)]
    pub prefix: Cow<'a, str>,
    /// `null` is read as absent, as everywhere a list or map may be (docs/design.md §8).
    #[serde(default, borrow, deserialize_with = "null_as_empty")]
    pub config: ConfigMap<'a>,
}

fn null_as_empty<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<ConfigMap<'a>, D::Error> {
    Option::<ConfigMap<'a>>::deserialize(d).map(Option::unwrap_or_default)
}

/// The spec's `RemoteSigningConfig`; members it does not define pass as they came.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct RemoteSigningConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Map<String, Value>>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// Where icegate's own endpoints for the table are, as written into responses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoints {
    /// The table's loadCredentials endpoint (absolute with a public URL, else relative).
    pub credentials: String,
    /// The table's signRequest endpoint, relative to `signer_uri`.
    pub sign: String,
    /// icegate's public base URL; `None`: clients fall back to their catalog URI.
    pub signer_uri: Option<String>,
}

/// How one response's credentials are rewritten.
#[derive(Clone, Copy, Debug)]
pub struct Rules<'a> {
    pub action: Action,
    /// `credentials.allowed_config_keys`.
    pub extra_allowed: &'a [String],
    pub endpoints: &'a Endpoints,
    /// Credentials minted for `Action::Downscope`, when the table has an S3 location.
    pub minted: Option<&'a Minted>,
    /// The headers icegate reads ([`read_headers`]), which no `header.*` key may set.
    pub read_headers: &'a [String],
}

impl Rules<'_> {
    /// Whether `key` survives the removal of credentials.
    pub fn allowed(&self, key: &str) -> bool {
        NON_SECRET_KEYS.contains(&key)
            || key.starts_with("write.")
            || S3_SIGNER_KEYS.contains(&key)
            || SIGNER_KEYS.contains(&key)
            || (matches!(self.action, Action::Downscope(_)) && key == S3_REFRESH_KEY)
            || self.extra_allowed.iter().any(|k| k == key)
    }

    /// A table response's `config`.
    pub fn config(&self, config: &mut ConfigMap<'_>) {
        self.scrub(config);
        if self.action != Action::Keep {
            config.retain_keys(|key| self.allowed(key));
        }
        if self.action == Action::Sign {
            offer_signing(config);
        }
        self.rewrite_endpoints(config);
        if let Some(minted) = self.minted {
            minted.insert_into(config);
        }
    }

    /// A response's `storage-credentials`; `locations` are the table's (docs/design.md §8).
    pub fn storage_credentials<'a>(
        &self,
        entries: Vec<StorageCredential<'a>>,
        locations: &[String],
    ) -> Vec<StorageCredential<'a>> {
        match self.action {
            Action::Strip | Action::Sign => Vec::new(),
            Action::Downscope(_) => {
                let Some(minted) = self.minted else { return Vec::new() };
                s3_locations(locations)
                    .map(|prefix| {
                        let mut config = ConfigMap::new();
                        minted.insert_into(&mut config);
                        StorageCredential { prefix: Cow::Owned(prefix.to_owned()), config }
                    })
                    .collect()
            }
            Action::Keep => entries
                .into_iter()
                .filter(|entry| locations.iter().any(|location| is_under(&entry.prefix, location)))
                .map(|mut entry| {
                    self.scrub(&mut entry.config);
                    self.rewrite_endpoints(&mut entry.config);
                    entry
                })
                .collect(),
        }
    }

    /// What no caller gets in any mode: a client must keep authenticating as itself, never with
    /// a `token` icegate passed on, nor with headers the upstream chose for its requests to icegate.
    fn scrub(&self, config: &mut impl StringMap) {
        config.remove("token");
        config.retain_keys(|key| !names_read_header(key, self.read_headers));
    }

    fn rewrite_endpoints(&self, config: &mut impl StringMap) {
        for key in REFRESH_KEYS {
            if config.has(key) {
                config.set(key, &self.endpoints.credentials);
            }
        }
        let remote_signing = config.string("s3.remote-signing-enabled").map(|v| v.trim().to_ascii_lowercase());
        let uses_signer = [S3_SIGNER_KEYS, SIGNER_KEYS].iter().flatten().any(|k| config.has(k));
        if uses_signer || remote_signing.as_deref() == Some("true") {
            // the offer is complete for every client, whatever the upstream spelled of it,
            // unless the upstream turned signing off (it vends credentials instead)
            if remote_signing.as_deref() != Some("false") {
                offer_signing(config);
            }
            self.write_signer(config);
        }
    }

    /// icegate's signer for the table, in every spelling: PyIceberg and Iceberg before 1.11
    /// read `s3.signer.*`, Iceberg 1.12 only `signer.*`.
    fn write_signer(&self, map: &mut impl StringMap) {
        for [uri, endpoint] in [S3_SIGNER_KEYS, SIGNER_KEYS] {
            map.set(endpoint, &self.endpoints.sign);
            match &self.endpoints.signer_uri {
                Some(base) => map.set(uri, base),
                None => map.remove(uri),
            }
        }
    }

    /// The spec's top-level `remote-signing-config` (Iceberg 1.11+). Clients send its `headers`
    /// with every request to icegate's signer, so none may set a header icegate reads; its
    /// `properties` come back in every sign request and are relayed to the upstream's signer,
    /// and name icegate's signer for the clients that look for it there.
    /// With icegate as the signer (`Action::Sign`) the upstream's object was addressed to a
    /// signer that is not used: its headers and properties go, and only icegate's signer stays.
    pub fn remote_signing_config(&self, config: &mut RemoteSigningConfig) {
        if self.action == Action::Sign {
            *config = RemoteSigningConfig::default();
        }
        if let Some(headers) = &mut config.headers {
            headers.retain(|name, _| !self.read_headers.iter().any(|h| same_header(name, h)));
        }
        let properties = config.properties.get_or_insert_with(Map::new);
        self.scrub(properties);
        self.write_signer(properties);
    }
}

/// icegate's signer offered (docs/design.md §8), as every client needs it to sign with no setting
/// of its own: Iceberg's Java `S3FileIO` reads `s3.remote-signing-enabled`, PyIceberg's fsspec
/// FileIO `s3.signer`, the name of its REST signer (an upstream's own value would name
/// another, and Lakekeeper sends none when no credentials were asked for).
fn offer_signing(config: &mut impl StringMap) {
    config.set("s3.remote-signing-enabled", "true");
    config.set("s3.signer", "S3V4RestSigner");
}

impl Minted {
    fn insert_into(&self, config: &mut impl StringMap) {
        config.set("s3.access-key-id", &self.access_key_id);
        config.set("s3.secret-access-key", &self.secret_access_key);
        config.set("s3.session-token", &self.session_token);
        config.set("s3.session-token-expires-at-ms", &self.expiration_ms.to_string());
    }
}

/// The headers icegate reads, lower case: `Authorization`, `X-Gravitino-Active-Roles` and the
/// `header` identity provider's two (`user_header`, `groups_header`).
pub fn read_headers(user_header: &str, groups_header: &str) -> Vec<String> {
    ["authorization", "x-gravitino-active-roles", user_header, groups_header]
        .iter()
        .map(|h| h.to_ascii_lowercase())
        .collect()
}

/// Whether `key` is a `header.*` config key naming one of `read_headers`: clients turn such keys
/// into request headers, also on their requests to icegate (PyIceberg's signer does with a
/// table's `config`), so the upstream could otherwise set a caller's identity or active roles.
pub fn names_read_header(key: &str, read_headers: &[String]) -> bool {
    key.get(..7).is_some_and(|p| p.eq_ignore_ascii_case("header."))
        && key.get(7..).is_some_and(|name| read_headers.iter().any(|h| name.trim().eq_ignore_ascii_case(h)))
}

/// Whether the header `name` is `read` (lower case), as a server that folds `_` into `-` would
/// also read it.
fn same_header(name: &str, read: &str) -> bool {
    let name = name.trim();
    name.eq_ignore_ascii_case(read) || (name.contains('_') && name.replace('_', "-").eq_ignore_ascii_case(read))
}

/// A table's locations: `location` and the location properties (docs/design.md §8), in that order,
/// without repeats.
pub fn table_locations(location: Option<String>, properties: Option<&Map<String, Value>>) -> Vec<String> {
    const PROPERTIES: [&str; 4] =
        ["write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path"];
    let mut out: Vec<String> = location.into_iter().filter(|l| !l.is_empty()).collect();
    for key in PROPERTIES {
        if let Some(value) = properties.and_then(|p| p.get(key)).and_then(Value::as_str)
            && !value.is_empty()
            && !out.iter().any(|l| l == value)
        {
            out.push(value.to_owned());
        }
    }
    out
}

/// `s3://` (and the Hadoop spellings `s3a://`, `s3n://`) locations.
pub fn s3_locations(locations: &[String]) -> impl Iterator<Item = &str> {
    locations.iter().map(String::as_str).filter(|l| ["s3://", "s3a://", "s3n://"].iter().any(|s| l.starts_with(s)))
}

/// Whether `path` is `location` or inside it, on a path boundary; the Hadoop S3 schemes are
/// the same store as `s3://`.
pub fn is_under(path: &str, location: &str) -> bool {
    let path = normalize(path);
    let location = normalize(location);
    let location = location.trim_end_matches('/');
    if location.is_empty() || !location.contains("://") {
        return false;
    }
    let path = path.as_str();
    path == location || path.strip_prefix(location).is_some_and(|rest| rest.starts_with('/'))
}

/// Whether `path` lies strictly inside `location`: a listing prefix `wh/t` also matches the keys
/// of `wh/t2/`, so only `wh/t/` and deeper are inside `wh/t`.
pub fn is_inside(path: &str, location: &str) -> bool {
    let path = normalize(path);
    let location = normalize(location);
    let location = location.trim_end_matches('/');
    !location.is_empty()
        && location.contains("://")
        && path.strip_prefix(location).is_some_and(|rest| rest.starts_with('/'))
}

fn normalize(uri: &str) -> String {
    for scheme in ["s3a://", "s3n://"] {
        if let Some(rest) = uri.strip_prefix(scheme) {
            return format!("s3://{rest}");
        }
    }
    uri.to_owned()
}

#[cfg(test)]
mod tests;
