//! `policy_source` and `[gravitino]`: a Gravitino metalake as the policy source instead of a
//! file (docs/design.md §9 "A Gravitino metalake as the policy source"), and its checks.

use super::error::ConfigError;
use super::upstream_auth::{OAuth2, validate_oauth2};
use serde::Deserialize;
use std::path::PathBuf;

/// Where the live policy comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicySource {
    /// The top-level `policy` key (or `--policy`).
    #[default]
    File,
    /// A metalake read from a Gravitino server (`[gravitino]`).
    Gravitino,
}

/// How icegate authenticates to Gravitino.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GravitinoAuth {
    /// Gravitino's default authenticator: `Authorization: Basic base64(user:)`.
    #[default]
    Simple,
    /// `Authorization: Bearer` with the token read from `token_file` at every poll.
    Bearer,
    /// An OAuth2 client-credentials token (`[gravitino.oauth2]`).
    OAuth2,
}

/// `[gravitino]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Gravitino {
    /// The server, e.g. `https://gravitino:8090`; icegate calls `{url}/api/metalakes/{metalake}/...`.
    pub url: String,
    /// The metalake read; it becomes the snapshot's `metalake`.
    pub metalake: String,
    pub auth: GravitinoAuth,
    /// The user of `auth = "simple"`.
    pub user: Option<String>,
    /// The token file of `auth = "bearer"`.
    pub token_file: Option<PathBuf>,
    /// The client of `auth = "oauth2"`.
    pub oauth2: Option<OAuth2>,
    /// The name Gravitino knows the service account by, which every read must show as a user of
    /// the metalake (an under-privileged account sees an empty metalake, not an error).
    /// Default: `user` with `auth = "simple"`; required otherwise.
    pub service_user: Option<String>,
    /// Seconds between reads.
    pub poll_seconds: u64,
    /// A CA (PEM) trusted for an `https://` server, besides the system's roots.
    pub ca_file: Option<PathBuf>,
    /// A YAML file with `version: 1` and `default_catalog` and/or `catalogs` (REST prefixes,
    /// which Gravitino does not hold), nothing else; read at every poll.
    pub catalogs_file: Option<PathBuf>,
    /// Owner reads in flight at once.
    pub concurrency: usize,
    /// Time allowed for each call to Gravitino.
    pub timeout_ms: u64,
    /// Accept a read with no roles after one with some (refused by default: a service account
    /// that lost its grants sees no roles rather than an error).
    pub allow_no_roles: bool,
}

impl Default for Gravitino {
    fn default() -> Self {
        Self {
            url: String::new(),
            metalake: String::new(),
            auth: GravitinoAuth::Simple,
            user: None,
            token_file: None,
            oauth2: None,
            service_user: None,
            poll_seconds: 30,
            ca_file: None,
            catalogs_file: None,
            concurrency: 16,
            timeout_ms: 10_000,
            allow_no_roles: false,
        }
    }
}

impl Gravitino {
    /// The service account's user name, which a plausible read shows.
    pub fn service_user(&self) -> Option<&str> {
        self.service_user.as_deref().or(match self.auth {
            GravitinoAuth::Simple => self.user.as_deref(),
            _ => None,
        })
    }

    /// The checks of `[gravitino]` (the catalogs file's content is checked by the caller, which
    /// can parse it).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |key: &'static str, message: String| ConfigError::Invalid { key, message };
        let url = self.url.parse::<http::Uri>().ok();
        let ok_url = url.as_ref().is_some_and(|u| {
            matches!(u.scheme_str(), Some("http" | "https"))
                && u.host().is_some_and(|h| !h.is_empty())
                && u.query().is_none()
                && !u.authority().is_some_and(|a| a.as_str().contains('@'))
        });
        if !ok_url {
            return Err(invalid(
                "gravitino.url",
                format!("`{}` is not an http or https url without credentials or query", self.url),
            ));
        }
        if self.metalake.is_empty() || self.metalake.contains(['/', '.']) {
            return Err(invalid("gravitino.metalake", format!("`{}` is not a metalake name", self.metalake)));
        }
        match self.auth {
            GravitinoAuth::Simple if self.user.as_deref().is_none_or(str::is_empty) => {
                return Err(invalid("gravitino.user", "required when `gravitino.auth` is `simple`".into()));
            }
            GravitinoAuth::Bearer => {
                let Some(file) = &self.token_file else {
                    return Err(invalid("gravitino.token_file", "required when `gravitino.auth` is `bearer`".into()));
                };
                match std::fs::read_to_string(file) {
                    Ok(t) if !t.trim().is_empty() => {}
                    Ok(_) => return Err(invalid("gravitino.token_file", format!("`{}` is empty", file.display()))),
                    Err(e) => {
                        return Err(invalid("gravitino.token_file", format!("cannot read `{}`: {e}", file.display())));
                    }
                }
            }
            GravitinoAuth::OAuth2 => {
                let oauth2 = self
                    .oauth2
                    .as_ref()
                    .ok_or_else(|| invalid("gravitino.oauth2", "required when `gravitino.auth` is `oauth2`".into()))?;
                validate_oauth2(oauth2, "gravitino.oauth2")?;
            }
            GravitinoAuth::Simple => {}
        }
        let stray = |key: &'static str, set: bool, auth: &str| {
            if set { Err(invalid(key, format!("only used with `gravitino.auth = \"{auth}\"`"))) } else { Ok(()) }
        };
        stray("gravitino.user", self.user.is_some() && self.auth != GravitinoAuth::Simple, "simple")?;
        stray("gravitino.token_file", self.token_file.is_some() && self.auth != GravitinoAuth::Bearer, "bearer")?;
        stray("gravitino.oauth2", self.oauth2.is_some() && self.auth != GravitinoAuth::OAuth2, "oauth2")?;
        if self.service_user().is_none_or(str::is_empty) {
            return Err(invalid(
                "gravitino.service_user",
                "required unless `gravitino.auth` is `simple`: the user every read must show, so that an \
                 under-privileged account is not read as an empty policy"
                    .into(),
            ));
        }
        if self.poll_seconds == 0 {
            return Err(invalid("gravitino.poll_seconds", "must be at least 1".into()));
        }
        if self.concurrency == 0 {
            return Err(invalid("gravitino.concurrency", "must be at least 1".into()));
        }
        if self.timeout_ms == 0 {
            return Err(invalid("gravitino.timeout_ms", "must be at least 1".into()));
        }
        if let Some(ca) = &self.ca_file
            && !ca.is_file()
        {
            return Err(invalid("gravitino.ca_file", format!("`{}` is not a readable file", ca.display())));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Gravitino {
        Gravitino {
            url: "http://127.0.0.1:8090".into(),
            metalake: "lake".into(),
            user: Some("icegate".into()),
            ..Gravitino::default()
        }
    }

    fn message(g: &Gravitino) -> String {
        g.validate().unwrap_err().to_string()
    }

    #[test]
    fn a_good_section_passes_and_defaults_are_the_contract_s() {
        assert!(base().validate().is_ok());
        let d = Gravitino::default();
        assert_eq!((d.poll_seconds, d.auth), (30, GravitinoAuth::Simple));
        assert_eq!(base().service_user(), Some("icegate"));
    }

    #[test]
    fn a_bad_section_says_which_key_and_why() {
        let m = message(&Gravitino { url: "ftp://x".into(), ..base() });
        assert!(m.contains("`gravitino.url`") && m.contains("`ftp://x`"), "{m}");
        let m = message(&Gravitino { url: "http://u:p@x:1".into(), ..base() });
        assert!(m.contains("`gravitino.url`"), "{m}");
        let m = message(&Gravitino { metalake: String::new(), ..base() });
        assert!(m.contains("`gravitino.metalake`"), "{m}");
        let m = message(&Gravitino { user: None, ..base() });
        assert!(m.contains("`gravitino.user`: required when `gravitino.auth` is `simple`"), "{m}");
        let m = message(&Gravitino { auth: GravitinoAuth::Bearer, user: None, ..base() });
        assert!(m.contains("`gravitino.token_file`: required"), "{m}");
        let m = message(&Gravitino {
            auth: GravitinoAuth::Bearer,
            user: None,
            token_file: Some("/nonexistent/icegate-token".into()),
            ..base()
        });
        assert!(m.contains("cannot read `/nonexistent/icegate-token`"), "{m}");
        let m = message(&Gravitino { auth: GravitinoAuth::OAuth2, user: None, ..base() });
        assert!(m.contains("`gravitino.oauth2`: required"), "{m}");
        let m = message(&Gravitino { auth: GravitinoAuth::OAuth2, ..base() });
        assert!(m.contains("only used with `gravitino.auth = \"simple\"`") || m.contains("`gravitino.oauth2`"), "{m}");
        let m = message(&Gravitino { poll_seconds: 0, ..base() });
        assert!(m.contains("`gravitino.poll_seconds`: must be at least 1"), "{m}");
        let m = message(&Gravitino { concurrency: 0, ..base() });
        assert!(m.contains("`gravitino.concurrency`"), "{m}");
    }

    #[test]
    fn a_bearer_token_needs_the_service_user_named() {
        let dir = std::env::temp_dir().join(format!("icegate-gravitino-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let token = dir.join("token");
        std::fs::write(&token, "abc\n").unwrap();
        let g = Gravitino { auth: GravitinoAuth::Bearer, user: None, token_file: Some(token), ..base() };
        assert!(message(&g).contains("`gravitino.service_user`"));
        assert!(Gravitino { service_user: Some("svc".into()), ..g }.validate().is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(toml::from_str::<Gravitino>("url = \"http://x:1\"\nmetalak = \"m\"").is_err());
        assert!(toml::from_str::<Gravitino>("auth = \"kerberos\"").is_err());
        let g: Gravitino =
            toml::from_str("url = \"http://x:1\"\nmetalake = \"m\"\nauth = \"oauth2\"\n[oauth2]\nclient_id = \"c\"")
                .unwrap();
        assert_eq!(g.oauth2.map(|o| o.client_id), Some("c".to_owned()));
    }
}
