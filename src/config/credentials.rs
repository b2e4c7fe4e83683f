//! `[credentials]`: what happens to vended storage credentials, and how sign requests are read
//! and forwarded (docs/design.md §8).

use super::error::ConfigError;
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
pub struct Credentials {
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

/// `[upstreams.credentials]`: the `[credentials]` settings an upstream sets for itself; each
/// key left out is the `[credentials]` one (docs/config.md).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CredentialOverrides {
    /// `credentials.mode` for this upstream's tables.
    pub mode: Option<Mode>,
    /// `credentials.signing.signer` for this upstream's tables.
    pub signer: Option<Signer>,
    /// `credentials.signing.signer_origins` for this upstream (its own origin is always one).
    pub signer_origins: Option<Vec<String>>,
}

/// `[credentials.signing]` (docs/design.md §8).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Signing {
    /// Who signs authorized sign requests: the catalog's signer, or icegate itself.
    pub signer: Signer,
    /// S3-compatible endpoints besides AWS's that a sign request's `uri` may name, for tables
    /// whose `config` names no `s3.endpoint` (a table's own endpoint is tried first).
    pub endpoints: Vec<SigningEndpoint>,
    /// Origins (`https://host[:port]`) besides the upstream's own where icegate forwards a sign
    /// request to the signer the upstream advertises for a table.
    pub signer_origins: Vec<String>,
    /// Sign `x-amz-storage-class` (a writer could otherwise choose an archive class that makes
    /// the table's files unreadable until restored).
    pub allow_storage_class: bool,
    /// Sign `x-amz-tagging` (tags can steer lifecycle rules and tag-based access).
    pub allow_tagging: bool,
    /// Sign `x-amz-server-side-encryption-customer-*`: a key only the writer knows makes the
    /// data unreadable to everyone else, so it is off unless a deployment relies on SSE-C.
    pub allow_sse_c: bool,
    /// The only `x-amz-server-side-encryption-aws-kms-key-id` signed, when set.
    pub kms_key_id: Option<String>,
}

impl Default for Signing {
    fn default() -> Self {
        Self {
            signer: Signer::Upstream,
            endpoints: Vec::new(),
            signer_origins: Vec::new(),
            allow_storage_class: true,
            allow_tagging: true,
            allow_sse_c: false,
            kms_key_id: None,
        }
    }
}

/// `credentials.signing.signer` (docs/design.md §8 "Signing without a catalog signer").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Signer {
    /// Authorized sign requests go to the catalog's signer.
    #[default]
    Upstream,
    /// icegate signs authorized sign requests itself with its own AWS credentials (the default
    /// chain), for catalogs that have no signer.
    Local,
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

impl Default for Credentials {
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

impl Credentials {
    /// The settings that cannot work, refused at start-up (the signing endpoints and origins
    /// are checked where they are parsed, `serve::storage::vending::validate`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |key, message: &str| ConfigError::Invalid { key, message: message.to_owned() };
        if self.mode == Mode::S3Downscope && self.sts.role_arn.is_none() {
            return Err(invalid("credentials.sts.role_arn", "required when `credentials.mode` is `s3-downscope`"));
        }
        if !(900..=43_200).contains(&self.sts.duration_seconds) {
            return Err(invalid("credentials.sts.duration_seconds", "STS accepts 900 to 43200 seconds"));
        }
        if u64::from(self.sts.duration_seconds) <= self.sts.refresh_before_seconds {
            return Err(invalid("credentials.sts.refresh_before_seconds", "must be less than `duration_seconds`"));
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

    /// A setting that is accepted but does nothing: with icegate as the signer every answer
    /// carries no storage credentials whatever `mode` says (docs/design.md §8), so a mode that
    /// names credentials handed out would mislead whoever reads the config.
    pub fn warning(&self) -> Option<String> {
        let mode = match self.mode {
            Mode::Passthrough => "passthrough",
            Mode::S3Downscope => "s3-downscope",
            Mode::StripBroader | Mode::Strip => return None,
        };
        (self.signing.signer == Signer::Local).then(|| {
            format!(
                "`credentials.mode` is `{mode}`, which has no effect with `credentials.signing.signer = \"local\"`: \
                 answers carry no storage credentials and icegate signs each authorized request itself \
                 (as the role of `credentials.sts.role_arn` when it is set); remove `mode` or set it to `strip`"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credentials_mode_that_icegate_as_signer_ignores_is_warned_about() {
        let local = |mode| {
            let mut c = Credentials { mode, ..Credentials::default() };
            c.signing.signer = Signer::Local;
            c
        };
        for mode in [Mode::Passthrough, Mode::S3Downscope] {
            let warning = local(mode).warning().unwrap_or_default();
            assert!(warning.contains("has no effect"), "{mode:?}: {warning}");
            assert_eq!(
                Credentials { mode, ..Credentials::default() }.warning(),
                None,
                "the catalog signs: {mode:?} works"
            );
        }
        for mode in [Mode::StripBroader, Mode::Strip] {
            assert_eq!(local(mode).warning(), None, "{mode:?} says what happens");
        }
    }

    #[test]
    fn settings_that_cannot_work_are_refused_at_start_up() {
        assert!(Credentials::default().validate().is_ok());
        let downscope = Credentials { mode: Mode::S3Downscope, ..Credentials::default() };
        assert!(downscope.validate().is_err(), "s3-downscope needs a role");
        let mut with_role = downscope.clone();
        with_role.sts.role_arn = Some("arn:aws:iam::1:role/r".into());
        assert!(with_role.validate().is_ok());
        with_role.sts.duration_seconds = 300;
        assert!(with_role.validate().is_err(), "below STS's minimum");
        for url in ["ftp://x", "icegate.example", "https://x/?q=1"] {
            let c = Credentials { public_url: Some(url.into()), ..Credentials::default() };
            assert!(c.validate().is_err(), "{url}");
        }
        let parsed: Credentials = toml::from_str("mode = \"s3-downscope\"\n[sts]\nrole_arn = \"r\"").unwrap();
        assert_eq!((parsed.mode, parsed.sts.role_arn.as_deref()), (Mode::S3Downscope, Some("r")));
        assert!(toml::from_str::<Credentials>("mode = \"strip_broader\"").is_err());
        let signing: Credentials = toml::from_str(
            "[signing]\nendpoints = [{ url = \"http://minio:9000\", path_style = true }, { url = \"https://gw/s3\" }]\nsigner_origins = [\"https://signer.example\"]",
        )
        .unwrap();
        assert_eq!(signing.signing.endpoints.iter().map(|e| e.path_style).collect::<Vec<_>>(), [true, false]);
        let on = Credentials::default().signing;
        assert_eq!(
            (on.allow_storage_class, on.allow_tagging, on.allow_sse_c, on.kms_key_id),
            (true, true, false, None)
        );
        let off: Credentials = toml::from_str(
            "[signing]\nallow_storage_class = false\nallow_tagging = false\nallow_sse_c = true\nkms_key_id = \"k\"",
        )
        .unwrap();
        let off = off.signing;
        assert_eq!(
            (off.allow_storage_class, off.allow_tagging, off.allow_sse_c, off.kms_key_id.as_deref()),
            (false, false, true, Some("k"))
        );
    }
}
