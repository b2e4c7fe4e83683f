//! `[upstream.oauth2]` and `[upstream.sigv4]`: the service credentials icegate presents to an
//! upstream of its own (docs/design.md §6), and the checks that make a bad one fail at start-up.

use super::error::ConfigError;
use super::upstream::{Upstream, UpstreamAuth};
use serde::Deserialize;
use std::path::PathBuf;

/// How the client authenticates at the token endpoint (RFC 6749 §2.3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientAuth {
    /// `client_id` and `client_secret` in the form, as Iceberg's own clients send them and every
    /// catalog's `/v1/oauth/tokens` reads them.
    #[default]
    Post,
    /// `Authorization: Basic` of the URL-encoded id and secret.
    Basic,
}

/// An OAuth2 client-credentials grant.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OAuth2 {
    /// The catalog's own `/v1/oauth/tokens` or an identity provider's token endpoint.
    pub token_endpoint: String,
    pub client_id: String,
    /// A file holding the client secret (a mounted Secret), read again at each token request.
    pub client_secret_file: Option<PathBuf>,
    /// An environment variable holding the client secret.
    pub client_secret_env: Option<String>,
    pub scope: Option<String>,
    pub audience: Option<String>,
    /// RFC 8707 `resource`.
    pub resource: Option<String>,
    pub client_auth: ClientAuth,
    /// A CA (PEM) trusted for an `https://` token endpoint, besides the system's roots.
    pub ca_file: Option<PathBuf>,
}

/// AWS SigV4 signing of every forwarded request.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SigV4 {
    /// The signing name: `glue` (the AWS Glue Iceberg REST endpoint) or `s3tables`.
    pub service: String,
    pub region: String,
    /// The STS endpoint web identity credentials are fetched from (default: the region's).
    pub sts_endpoint: Option<String>,
}

impl OAuth2 {
    /// The client secret, from the file or the environment variable.
    pub fn read_secret(&self) -> Result<String, String> {
        match (&self.client_secret_file, &self.client_secret_env) {
            (Some(file), None) => match std::fs::read_to_string(file) {
                Ok(text) if !text.trim().is_empty() => Ok(text.trim().to_owned()),
                Ok(_) => Err(format!("`{}` is empty", file.display())),
                Err(e) => Err(format!("cannot read `{}`: {e}", file.display())),
            },
            (None, Some(var)) => match std::env::var(var) {
                Ok(v) if !v.is_empty() => Ok(v),
                _ => Err(format!("environment variable `{var}` is not set")),
            },
            _ => Err("set one of `client_secret_file` and `client_secret_env`".into()),
        }
    }
}

/// The checks of `upstream.auth` and its section.
pub fn validate(upstream: &Upstream) -> Result<(), ConfigError> {
    match upstream.auth {
        UpstreamAuth::Passthrough => Ok(()),
        UpstreamAuth::Service if upstream.service_authorization.is_none() => Err(ConfigError::Invalid {
            key: "upstream.service_authorization",
            message: "required when `upstream.auth` is `service`".into(),
        }),
        UpstreamAuth::Service => Ok(()),
        UpstreamAuth::OAuth2 => {
            let oauth2 = upstream.oauth2.as_ref().ok_or_else(|| ConfigError::Invalid {
                key: "upstream.oauth2",
                message: "required when `upstream.auth` is `oauth2`".into(),
            })?;
            validate_oauth2(oauth2, "upstream.oauth2")
        }
        UpstreamAuth::SigV4 => {
            let invalid = |message: String| ConfigError::Invalid { key: "upstream.sigv4", message };
            let sigv4 =
                upstream.sigv4.as_ref().ok_or_else(|| invalid("required when `upstream.auth` is `sigv4`".into()))?;
            if sigv4.service.is_empty() || sigv4.region.is_empty() {
                return Err(invalid("`service` (e.g. `glue`, `s3tables`) and `region` are required".into()));
            }
            Ok(())
        }
    }
}

/// The checks of one OAuth2 client-credentials section (`[upstream.oauth2]`,
/// `[gravitino.oauth2]`), reported under `key`.
pub fn validate_oauth2(oauth2: &OAuth2, key: &'static str) -> Result<(), ConfigError> {
    let invalid = |message: String| ConfigError::Invalid { key, message };
    let endpoint = oauth2.token_endpoint.parse::<http::Uri>().ok();
    if endpoint
        .as_ref()
        .is_none_or(|u| !matches!(u.scheme_str(), Some("http" | "https")) || u.host().is_none_or(str::is_empty))
    {
        return Err(invalid(format!("`token_endpoint` `{}` is not an http or https url", oauth2.token_endpoint)));
    }
    // the endpoint is named in logs and errors: a password in it would be too
    if endpoint.as_ref().and_then(http::Uri::authority).is_some_and(|a| a.as_str().contains('@')) {
        return Err(invalid("`token_endpoint` must not carry credentials (`user:password@`)".into()));
    }
    if oauth2.client_id.is_empty() {
        return Err(invalid("`client_id` is required".into()));
    }
    oauth2.read_secret().map(drop).map_err(|m| invalid(format!("the client secret: {m}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(auth: UpstreamAuth, oauth2: Option<OAuth2>) -> Upstream {
        Upstream { auth, oauth2, ..Upstream::default() }
    }

    #[test]
    fn a_bad_oauth2_section_says_what_is_wrong() {
        let message = |u: &Upstream| validate(u).unwrap_err().to_string();
        assert!(message(&with(UpstreamAuth::OAuth2, None)).contains("required when `upstream.auth` is `oauth2`"));
        let base = OAuth2 {
            token_endpoint: "ftp://idp/token".into(),
            client_id: "icegate".into(),
            client_secret_env: Some("ICEGATE_TEST_SURELY_UNSET_VARIABLE".into()),
            ..OAuth2::default()
        };
        let m = message(&with(UpstreamAuth::OAuth2, Some(base.clone())));
        assert!(m.contains("`ftp://idp/token` is not an http or https url"), "{m}");
        let unset = OAuth2 { token_endpoint: "https://idp/token".into(), ..base.clone() };
        let m = message(&with(UpstreamAuth::OAuth2, Some(unset.clone())));
        assert!(m.contains("environment variable `ICEGATE_TEST_SURELY_UNSET_VARIABLE` is not set"), "{m}");
        let unreadable = OAuth2 {
            client_secret_env: None,
            client_secret_file: Some("/nonexistent/icegate-secret".into()),
            ..unset.clone()
        };
        let m = message(&with(UpstreamAuth::OAuth2, Some(unreadable)));
        assert!(m.contains("cannot read `/nonexistent/icegate-secret`"), "{m}");
        let both = OAuth2 { client_secret_file: Some("/x".into()), ..unset };
        let m = message(&with(UpstreamAuth::OAuth2, Some(both)));
        assert!(m.contains("set one of `client_secret_file` and `client_secret_env`"), "{m}");
    }

    #[test]
    fn sigv4_needs_its_service_and_region() {
        let u = Upstream {
            auth: UpstreamAuth::SigV4,
            sigv4: Some(SigV4 { service: "glue".into(), ..SigV4::default() }),
            ..Upstream::default()
        };
        assert!(validate(&u).unwrap_err().to_string().contains("`region` are required"));
        let u = Upstream {
            sigv4: Some(SigV4 { service: "glue".into(), region: "eu-west-1".into(), sts_endpoint: None }),
            ..u
        };
        assert!(validate(&u).is_ok());
    }
}
