//! `[[upstreams]]`: several catalogs behind one icegate (docs/design.md §7 "One gate, many
//! catalogs"), each entry an `[upstream]` with a `name`, the policy catalogs it serves, the
//! getConfig `warehouse` values it answers, whether it is the default, and its own credentials
//! settings. The single `[upstream]` is the simple form: one upstream, named `default`, serving
//! every catalog. The two forms together are refused, as is any entry that cannot work.

use super::credentials::{CredentialOverrides, Credentials};
#[cfg(test)]
use super::credentials::{Mode, Signer};
use super::error::ConfigError;
use super::upstream::{Upstream, parse_upstream};
use std::collections::HashMap;

/// The name of the single `[upstream]` unless it sets `name`.
pub const DEFAULT_NAME: &str = "default";

/// One upstream as the serving layer builds it: from `[upstream]` or an `[[upstreams]]` entry.
#[derive(Clone, Debug)]
pub struct Entry<'a> {
    pub name: String,
    pub upstream: &'a Upstream,
    /// `None`: every catalog (the single `[upstream]`).
    pub catalogs: Option<&'a [String]>,
    pub default: bool,
    /// `[credentials]` with this upstream's overrides.
    pub credentials: Credentials,
}

/// Every upstream: the `[[upstreams]]` entries, or the single `[upstream]` (`Config::upstream_entries`).
pub(super) fn entries<'a>(
    upstream: &'a Upstream,
    upstreams: &'a [Upstream],
    credentials: &Credentials,
) -> Vec<Entry<'a>> {
    if upstreams.is_empty() {
        let name = upstream.name.clone().unwrap_or_else(|| DEFAULT_NAME.to_owned());
        return vec![Entry { name, upstream, catalogs: None, default: true, credentials: credentials.clone() }];
    }
    upstreams
        .iter()
        .map(|u| Entry {
            name: u.name.clone().unwrap_or_default(),
            upstream: u,
            catalogs: Some(&u.catalogs),
            default: u.default,
            credentials: with_overrides(credentials, u.credentials.as_ref()),
        })
        .collect()
}

fn with_overrides(global: &Credentials, overrides: Option<&CredentialOverrides>) -> Credentials {
    let mut c = global.clone();
    if let Some(o) = overrides {
        if let Some(mode) = o.mode {
            c.mode = mode;
        }
        if let Some(signer) = o.signer {
            c.signing.signer = signer;
        }
        if let Some(origins) = &o.signer_origins {
            c.signing.signer_origins.clone_from(origins);
        }
    }
    c
}

/// The keys only an `[[upstreams]]` entry has, refused in the single `[upstream]` (its
/// `warehouses` route nothing, but say where a catalog's signer is asked: docs/signing.md).
fn single_form(upstream: &Upstream) -> Result<(), ConfigError> {
    let only_many = |key: &'static str| ConfigError::Invalid {
        key,
        message: "is a key of `[[upstreams]]` entries; the single `[upstream]` serves every catalog".into(),
    };
    if !upstream.catalogs.is_empty() {
        return Err(only_many("upstream.catalogs"));
    }
    if upstream.default {
        return Err(only_many("upstream.default"));
    }
    if upstream.credentials.is_some() {
        return Err(only_many("upstream.credentials"));
    }
    Ok(())
}

/// An upstream's name is a metric label value, a JSON key and a log field.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// An error of the single-upstream checks, said of the `[[upstreams]]` entry `name`.
fn of_entry(name: &str, e: ConfigError) -> ConfigError {
    let plural = |text: &str| text.replace("upstream.", "upstreams.");
    match e {
        ConfigError::Invalid { key, message } => {
            ConfigError::InvalidUpstream { name: name.to_owned(), key: plural(key), message: plural(&message) }
        }
        ConfigError::BadUpstream(url) => ConfigError::InvalidUpstream {
            name: name.to_owned(),
            key: "upstreams.url".into(),
            message: format!("`{url}` is not `http://host:port[/base]` or `https://...`"),
        },
        other => other,
    }
}

/// The checks of one upstream's own settings, the same in both forms.
pub(super) fn validate_one(upstream: &Upstream, credentials: &Credentials) -> Result<(), ConfigError> {
    super::upstream::validate(upstream)?;
    if let Some(proxy) = &upstream.proxy {
        proxy.validate("upstream.proxy")?;
    }
    if let Some(probe) = &upstream.readiness_probe
        && (!probe.starts_with('/') || probe.parse::<http::uri::PathAndQuery>().is_err())
    {
        return Err(ConfigError::Invalid {
            key: "upstream.readiness_probe",
            message: format!("`{probe}` is not a path (and query) starting with `/`"),
        });
    }
    credentials.validate()
}

/// The checks of `[upstream]` or `[[upstreams]]`; `both` says the file has the two.
pub(super) fn validate(
    (upstream, upstreams, credentials): (&Upstream, &[Upstream], &Credentials),
    both: bool,
) -> Result<(), ConfigError> {
    if both {
        return Err(ConfigError::Invalid {
            key: "upstreams",
            message: "set either `[upstream]` (one upstream serving every catalog) or `[[upstreams]]`, not both".into(),
        });
    }
    if upstreams.is_empty() {
        parse_upstream(upstream.url.as_deref().ok_or(ConfigError::NoUpstream)?)?;
        single_form(upstream)?;
        return validate_one(upstream, credentials);
    }
    if upstream.url.is_some() {
        return Err(ConfigError::Invalid {
            key: "upstreams",
            message:
                "`--upstream` names the one upstream of the simple form; with `[[upstreams]]` set each `url` there"
                    .into(),
        });
    }
    let mut names = HashMap::new();
    let mut catalogs: HashMap<&str, &str> = HashMap::new();
    let mut warehouses: HashMap<&str, &str> = HashMap::new();
    let mut default = None;
    let entries = entries(upstream, upstreams, credentials);
    for (i, entry) in entries.iter().enumerate() {
        let u = entry.upstream;
        let name = entry.name.as_str();
        if !valid_name(name) {
            return Err(ConfigError::Invalid {
                key: "upstreams.name",
                message: format!(
                    "entry {} needs a `name` of letters, digits, `-`, `_` or `.` (at most 64), got `{name}`",
                    i + 1
                ),
            });
        }
        if names.insert(name, i).is_some() {
            return Err(ConfigError::Invalid { key: "upstreams.name", message: format!("`{name}` is named twice") });
        }
        let in_entry = |key: &str, message: String| ConfigError::InvalidUpstream {
            name: name.to_owned(),
            key: key.to_owned(),
            message,
        };
        let url = u.url.as_deref().ok_or_else(|| in_entry("upstreams.url", "is required".into()))?;
        parse_upstream(url).map_err(|e| of_entry(name, e))?;
        validate_one(u, &entry.credentials).map_err(|e| of_entry(name, e))?;
        if u.catalogs.is_empty() {
            return Err(in_entry("upstreams.catalogs", "name at least one policy catalog the upstream serves".into()));
        }
        for catalog in &u.catalogs {
            if let Some(other) = catalogs.insert(catalog, name) {
                return Err(in_entry(
                    "upstreams.catalogs",
                    format!("catalog `{catalog}` is served by upstream `{other}` too; a catalog has one upstream"),
                ));
            }
        }
        for warehouse in &u.warehouses {
            if let Some(other) = warehouses.insert(warehouse, name) {
                return Err(in_entry(
                    "upstreams.warehouses",
                    format!("warehouse `{warehouse}` is answered by upstream `{other}` too"),
                ));
            }
        }
        if u.default
            && let Some(other) = default.replace(name)
        {
            return Err(in_entry("upstreams.default", format!("upstream `{other}` is the default already")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{Config, Overrides};
    use super::*;

    /// Loads `text` from a file of its own: tests run in parallel, and a directory named after
    /// the text's length was shared by two texts of one length (`glue` renamed `rest`), so one
    /// test could read the other's file half-written.
    fn load(text: &str) -> Result<Config, ConfigError> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("icegate-upstreams-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(&file, text).unwrap();
        let loaded = Config::load(Some(&file), Overrides { policy: Some("p.yaml".into()), ..Overrides::default() });
        let _ = std::fs::remove_dir_all(&dir);
        loaded
    }

    const TWO: &str = r#"
[[upstreams]]
name = "rest"
url = "http://127.0.0.1:8181"
catalogs = ["prod"]
warehouses = ["lake"]
default = true

[[upstreams]]
name = "glue"
url = "https://glue.eu-west-1.amazonaws.com/iceberg"
auth = "sigv4"
catalogs = ["analytics", "raw"]
warehouses = ["123456789012"]
response_timeout_ms = 5000
[upstreams.sigv4]
service = "glue"
region = "eu-west-1"
[upstreams.credentials]
mode = "strip"
signer = "local"
"#;

    #[test]
    fn two_upstreams_each_with_its_catalogs_auth_and_credentials() {
        let c = load(TWO).unwrap();
        let entries = c.upstream_entries();
        assert_eq!(entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["rest", "glue"]);
        assert_eq!(entries[0].catalogs, Some(&["prod".to_owned()][..]));
        assert!(entries[0].default && !entries[1].default);
        assert_eq!(entries[1].upstream.response_timeout_ms, 5000);
        assert_eq!(entries[0].upstream.response_timeout_ms, 30_000, "each entry has the defaults");
        assert_eq!((entries[0].credentials.mode, entries[1].credentials.mode), (Mode::StripBroader, Mode::Strip));
        assert_eq!(entries[1].credentials.signing.signer, Signer::Local);
        assert!(c.many_upstreams());
        let proxied = load(&TWO.replace("response_timeout_ms = 5000", "proxy = \"http://u:s3cret@p:3128\"")).unwrap();
        assert_eq!(proxied.upstreams[1].proxy, Some(crate::config::ProxyUrl("http://u:s3cret@p:3128".into())));
        assert!(proxied.upstreams[0].proxy.is_none() && !format!("{proxied:?}").contains("s3cret"));
    }

    #[test]
    fn the_single_upstream_is_named_default_and_serves_every_catalog() {
        let c = load("[upstream]\nurl = \"http://x:1\"\nwarehouses = [\"demo\"]\n").unwrap();
        assert_eq!(c.upstream.warehouses, ["demo"]);
        let entries = c.upstream_entries();
        assert_eq!(entries.len(), 1);
        assert_eq!((entries[0].name.as_str(), entries[0].catalogs, entries[0].default), ("default", None, true));
        assert!(!c.many_upstreams());
    }

    #[test]
    fn config_errors_name_the_key_and_the_upstream() {
        let cases = [
            (format!("[upstream]\nurl = \"http://x:1\"\n{TWO}"), "set either `[upstream]`"),
            ("[upstream]\nurl = \"http://x:1\"\ncatalogs = [\"prod\"]\n".to_owned(), "invalid `upstream.catalogs`"),
            (TWO.replace("name = \"glue\"", "name = \"rest\""), "`rest` is named twice"),
            (TWO.replace("name = \"glue\"\n", ""), "entry 2 needs a `name`"),
            (TWO.replace("name = \"glue\"", "name = \"a b\""), "got `a b`"),
            (TWO.replace("\"analytics\", \"raw\"", "\"prod\""), "catalog `prod` is served by upstream `rest` too"),
            (TWO.replace("[\"123456789012\"]", "[\"lake\"]"), "warehouse `lake` is answered by upstream `rest` too"),
            (
                TWO.replace("catalogs = [\"analytics\", \"raw\"]\n", ""),
                "invalid `upstreams.catalogs` of upstream `glue`",
            ),
            (
                TWO.replace("warehouses = [\"123456789012\"]", "default = true"),
                "upstream `rest` is the default already",
            ),
            (
                TWO.replace("url = \"https://glue.eu-west-1.amazonaws.com/iceberg\"\n", ""),
                "invalid `upstreams.url` of upstream `glue`: is required",
            ),
            (TWO.replace("https://glue.eu", "ftp://glue.eu"), "invalid `upstreams.url` of upstream `glue`"),
            (TWO.replace("region = \"eu-west-1\"\n", ""), "invalid `upstreams.sigv4` of upstream `glue`"),
            (
                TWO.replace("mode = \"strip\"", "mode = \"s3-downscope\""),
                "invalid `credentials.sts.role_arn` of upstream `glue`",
            ),
            (TWO.replace("signer = \"local\"", "signers = \"local\""), "unknown field `signers`"),
            (
                TWO.replace("response_timeout_ms = 5000", "proxy = \"https://u:s3cret@p:3128\""),
                "invalid `upstreams.proxy` of upstream `glue`: `https://p:3128` is not",
            ),
        ];
        for (text, expected) in cases {
            let message = load(&text).unwrap_err().to_string();
            assert!(message.contains(expected), "expected {expected:?} in {message:?}");
        }
        let mut flagged = load(TWO).unwrap();
        flagged.upstream.url = Some("http://x:1".into());
        assert!(
            validate((&flagged.upstream, &flagged.upstreams, &flagged.credentials), false)
                .unwrap_err()
                .to_string()
                .contains("`--upstream` names the one upstream")
        );
    }
}
