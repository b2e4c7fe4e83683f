//! Storage credentials and remote signing (DESIGN.md §8): what a caller may take away from a
//! credential-bearing response, decided from the mode and the caller's credential scope.

pub mod clean;
pub mod envelope;
pub mod response;
pub mod s3url;
pub mod session_policy;
pub mod sign;
pub mod storage;

use crate::core::policy::authorize::{CredentialScope, Scope};
use serde::Deserialize;

/// `credentials.mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Hand out what the upstream vends (right when the upstream honours the active roles).
    Passthrough,
    /// Remove the upstream's credentials when they are broader than the caller's scope.
    #[default]
    StripBroader,
    /// Never hand out vended credentials.
    Strip,
    /// Replace S3 credentials with ones minted by STS for the caller's scope and the table.
    S3Downscope,
}

/// `[credentials]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub mode: Mode,
    /// `config` keys kept when credentials are removed, besides the built-in non-secret ones.
    pub allowed_config_keys: Vec<String>,
    /// Keys removed from getConfig's `defaults` and `overrides`, besides the built-in ones.
    pub secret_config_keys: Vec<String>,
    /// icegate's public base URL (`https://icegate.example`), for signer and refresh endpoints
    /// written into responses; unset, they are written relative to the catalog URI.
    pub public_url: Option<String>,
    /// How long a table's locations, loaded for a sign or credentials check, are reused.
    pub location_cache_seconds: u64,
    /// `s3-downscope`'s STS settings.
    pub sts: Sts,
    /// How sign requests are read and where they may go.
    pub signing: Signing,
}

/// `[credentials.signing]` (DESIGN.md §8).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Signing {
    /// S3-compatible endpoints besides AWS's that a sign request's `uri` may name, for tables
    /// whose `config` names no `s3.endpoint` (a table's own endpoint is tried first).
    pub endpoints: Vec<SigningEndpoint>,
    /// Origins (`https://host[:port]`) besides the upstream's own where icegate forwards a sign
    /// request to the signer the upstream advertises for a table.
    pub signer_origins: Vec<String>,
}

/// One `credentials.signing.endpoints` entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SigningEndpoint {
    /// `http://minio:9000`, with the path in front of buckets if any.
    pub url: String,
    /// `true`: only `url/bucket/key`; `false`: `bucket.host/key` too (S3FileIO's default).
    #[serde(default)]
    pub path_style: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            mode: Mode::StripBroader,
            allowed_config_keys: Vec::new(),
            secret_config_keys: Vec::new(),
            public_url: None,
            location_cache_seconds: 30,
            sts: Sts::default(),
            signing: Signing::default(),
        }
    }
}

impl Config {
    pub fn validate(&self) -> Result<(), crate::config::ConfigError> {
        let invalid = |key, message: &str| crate::config::ConfigError::Invalid { key, message: message.to_owned() };
        if self.mode == Mode::S3Downscope && self.sts.role_arn.is_none() {
            return Err(invalid("credentials.sts.role_arn", "required when `credentials.mode` is `s3-downscope`"));
        }
        if !(900..=43_200).contains(&self.sts.duration_seconds) {
            return Err(invalid("credentials.sts.duration_seconds", "STS accepts 900 to 43200 seconds"));
        }
        if u64::from(self.sts.duration_seconds) <= self.sts.refresh_before_seconds {
            return Err(invalid("credentials.sts.refresh_before_seconds", "must be less than `duration_seconds`"));
        }
        if self.signing.endpoints.iter().any(|e| s3url::Endpoint::parse(&e.url, e.path_style).is_none()) {
            return Err(invalid("credentials.signing.endpoints", "each `url` must be `http[s]://host[:port][/base]`"));
        }
        if self.signing.signer_origins.iter().any(|o| s3url::Origin::parse(o).is_none()) {
            return Err(invalid("credentials.signing.signer_origins", "each must be `http[s]://host[:port]`"));
        }
        if let Some(url) = &self.public_url {
            let ok = url.parse::<http::Uri>().is_ok_and(|u| {
                matches!(u.scheme_str(), Some("http" | "https")) && u.authority().is_some() && u.query().is_none()
            });
            if !ok {
                return Err(invalid("credentials.public_url", "expected `https://host[:port][/base]`"));
            }
        }
        Ok(())
    }
}

/// `[credentials.sts]`: how icegate mints downscoped S3 credentials.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Sts {
    /// The role icegate assumes (required in `s3-downscope` mode).
    pub role_arn: Option<String>,
    pub region: String,
    /// Unset: `https://sts.{region}.amazonaws.com`.
    pub endpoint: Option<String>,
    pub duration_seconds: u32,
    pub external_id: Option<String>,
    /// Minted credentials are reused until this long before they expire.
    pub refresh_before_seconds: u64,
}

impl Default for Sts {
    fn default() -> Self {
        Self {
            role_arn: None,
            region: "us-east-1".to_owned(),
            endpoint: None,
            duration_seconds: 3600,
            external_id: None,
            refresh_before_seconds: 300,
        }
    }
}

/// What happens to the credentials of one response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The upstream's credentials pass (still filtered: `token`, foreign prefixes).
    Keep,
    /// Every credential is removed; only allow-listed `config` keys survive.
    Strip,
    /// The upstream's are removed and S3 credentials minted for this scope are added.
    Downscope(Scope),
}

impl Action {
    /// `scope` is the request's credential scope; `service` says the upstream authenticates
    /// icegate, not the caller, so what it vends is taken as WRITE (DESIGN.md §8).
    pub fn decide(mode: Mode, scope: CredentialScope, service: bool) -> Self {
        let broader = scope.narrowed < scope.unnarrowed || (service && scope.narrowed == Scope::Read);
        match mode {
            Mode::Passthrough => Self::Keep,
            Mode::StripBroader if broader => Self::Strip,
            Mode::StripBroader => Self::Keep,
            Mode::Strip => Self::Strip,
            Mode::S3Downscope => Self::Downscope(scope.narrowed),
        }
    }

    /// The upstream is not asked to vend what icegate would remove anyway.
    pub fn strips_delegation(self) -> bool {
        !matches!(self, Self::Keep)
    }

    /// The audit's `credential` value.
    pub fn audit(self) -> &'static str {
        match self {
            Self::Keep => "kept",
            Self::Strip => "stripped",
            Self::Downscope(_) => "downscoped",
        }
    }
}

/// Temporary credentials STS returned.
pub struct Minted {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: String,
    /// Unix milliseconds.
    pub expiration_ms: i64,
}

impl std::fmt::Debug for Minted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Minted")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"** redacted **")
            .field("session_token", &"** redacted **")
            .field("expiration_ms", &self.expiration_ms)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(narrowed: Scope, unnarrowed: Scope) -> CredentialScope {
        CredentialScope { narrowed, unnarrowed }
    }

    #[test]
    fn settings_that_cannot_work_are_refused_at_start_up() {
        assert!(Config::default().validate().is_ok());
        let downscope = Config { mode: Mode::S3Downscope, ..Config::default() };
        assert!(downscope.validate().is_err(), "s3-downscope needs a role");
        let mut with_role = downscope.clone();
        with_role.sts.role_arn = Some("arn:aws:iam::1:role/r".into());
        assert!(with_role.validate().is_ok());
        with_role.sts.duration_seconds = 300;
        assert!(with_role.validate().is_err(), "below STS's minimum");
        for url in ["ftp://x", "icegate.example", "https://x/?q=1"] {
            let c = Config { public_url: Some(url.into()), ..Config::default() };
            assert!(c.validate().is_err(), "{url}");
        }
        let parsed: Config = toml::from_str("mode = \"s3-downscope\"\n[sts]\nrole_arn = \"r\"").unwrap();
        assert_eq!((parsed.mode, parsed.sts.role_arn.as_deref()), (Mode::S3Downscope, Some("r")));
        assert!(toml::from_str::<Config>("mode = \"strip_broader\"").is_err());
        let signing: Config = toml::from_str(
            "[signing]\nendpoints = [{ url = \"http://minio:9000\", path_style = true }, { url = \"https://gw/s3\" }]\nsigner_origins = [\"https://signer.example\"]",
        )
        .unwrap();
        assert!(signing.validate().is_ok());
        assert_eq!(signing.signing.endpoints.iter().map(|e| e.path_style).collect::<Vec<_>>(), [true, false]);
        for bad in
            ["[signing]\nendpoints = [{ url = \"minio:9000\" }]", "[signing]\nsigner_origins = [\"https://s/path\"]"]
        {
            assert!(toml::from_str::<Config>(bad).unwrap().validate().is_err(), "{bad}");
        }
    }

    #[test]
    fn strip_broader_removes_only_what_narrowing_or_service_auth_made_broader() {
        use Scope::{Read, Write};
        let m = Mode::StripBroader;
        assert_eq!(Action::decide(m, scope(Write, Write), false), Action::Keep);
        assert_eq!(Action::decide(m, scope(Read, Read), false), Action::Keep);
        assert_eq!(Action::decide(m, scope(Read, Write), false), Action::Strip);
        assert_eq!(Action::decide(m, scope(Read, Read), true), Action::Strip);
        assert_eq!(Action::decide(m, scope(Write, Write), true), Action::Keep);
        assert_eq!(Action::decide(Mode::Strip, scope(Write, Write), false), Action::Strip);
        assert_eq!(Action::decide(Mode::Passthrough, scope(Read, Write), true), Action::Keep);
        assert_eq!(Action::decide(Mode::S3Downscope, scope(Read, Write), false), Action::Downscope(Read));
    }
}
