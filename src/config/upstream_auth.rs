//! `[upstream.oauth2]` and `[upstream.sigv4]`: the service credentials icegate presents to an
//! upstream of its own (docs/design.md §6), and the checks that make a bad one fail at start-up.

use super::error::ConfigError;
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
