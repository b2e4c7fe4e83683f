//! icegate's own AWS credentials, looked up in the AWS SDKs' order: the environment, then a
//! shared credentials or config profile, then web identity (Kubernetes service accounts), then
//! the container provider and the instance's role ([`super::aws_remote`]).

use crate::core::credentials::Minted;
use aws_credential_types::Credentials;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use thiserror::Error;

/// Web identity credentials are fetched again this long before they expire.
const WEB_IDENTITY_MARGIN: Duration = Duration::from_secs(300);

#[derive(Debug, Error)]
pub enum ChainError {
    #[error("`{set}` is set but `{missing}` is not")]
    Incomplete { set: &'static str, missing: &'static str },
    #[error("cannot read `{path}`: {message}")]
    Read { path: PathBuf, message: String },
    #[error("profile `{profile}` has `aws_access_key_id` but no `aws_secret_access_key`")]
    Profile { profile: String },
    #[error("web identity: cannot assume `{role_arn}`: {message}")]
    WebIdentity { role_arn: String, message: String },
    #[error("{0}")]
    Remote(String),
    #[error("no AWS credentials found; tried {0}")]
    NotFound(String),
}

type Lookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// The one STS call the chain makes: `AssumeRoleWithWebIdentity`, unsigned, with `params`;
/// the error is STS's message. STS's client implements it (`storage::sts`), which itself signs
/// with the chain's credentials: the chain names only this, so the two do not import each other.
pub trait WebIdentitySts {
    fn assume_role_with_web_identity(
        &self,
        params: &[(&str, &str)],
    ) -> impl std::future::Future<Output = Result<Minted, String>> + Send;
}

/// Where the chain reads its variables: the process environment, or given values in tests
/// (which run in parallel and must not share the process's).
#[derive(Clone)]
pub struct Env(Arc<Lookup>);

impl Env {
    pub fn process() -> Self {
        Self(Arc::new(|name| std::env::var(name).ok()))
    }

    pub fn from_pairs<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        let vars: BTreeMap<String, String> = pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        Self(Arc::new(move |name| vars.get(name).cloned()))
    }

    /// Empty counts as unset, as in the SDKs.
    fn get(&self, name: &str) -> Option<String> {
        (self.0)(name).filter(|v| !v.is_empty())
    }
}

impl fmt::Debug for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Env(..)")
    }
}

/// The chain; it keeps web identity credentials until shortly before they expire.
#[derive(Debug)]
pub struct Chain {
    env: Env,
    web_identity: tokio::sync::Mutex<Option<Credentials>>,
    remote: super::aws_remote::Remote,
}

impl Chain {
    pub fn new(env: Env) -> Self {
        Self { env, web_identity: tokio::sync::Mutex::new(None), remote: super::aws_remote::Remote::default() }
    }

    pub fn from_process_env() -> Self {
        Self::new(Env::process())
    }

    /// The first credentials the chain finds; web identity calls `sts`, unsigned.
    pub async fn credentials(&self, sts: &impl WebIdentitySts) -> Result<Credentials, ChainError> {
        if let Some(c) = self.environment()? {
            return Ok(c);
        }
        let profile = self.env.get("AWS_PROFILE").unwrap_or_else(|| "default".to_owned());
        if let Some(c) = self.profile(&profile)? {
            return Ok(c);
        }
        if let Some(c) = self.web_identity(sts).await? {
            return Ok(c);
        }
        if let Some(c) = self.remote.credentials(|name| self.env.get(name)).await.map_err(ChainError::Remote)? {
            return Ok(c);
        }
        Err(ChainError::NotFound(format!(
            "the environment (`AWS_ACCESS_KEY_ID`), profile `{profile}` in the shared credentials and config \
             files, web identity (`AWS_WEB_IDENTITY_TOKEN_FILE` with `AWS_ROLE_ARN`), the container provider \
             (`AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or `_FULL_URI`) and the instance metadata service"
        )))
    }

    fn environment(&self) -> Result<Option<Credentials>, ChainError> {
        let Some(id) = self.env.get("AWS_ACCESS_KEY_ID") else { return Ok(None) };
        let secret = self
            .env
            .get("AWS_SECRET_ACCESS_KEY")
            .ok_or(ChainError::Incomplete { set: "AWS_ACCESS_KEY_ID", missing: "AWS_SECRET_ACCESS_KEY" })?;
        Ok(Some(Credentials::new(id, secret, self.env.get("AWS_SESSION_TOKEN"), None, "icegate-environment")))
    }

    fn profile(&self, name: &str) -> Result<Option<Credentials>, ChainError> {
        let home = self.env.get("HOME").map(PathBuf::from);
        let file =
            |var: &str, default: &str| self.env.get(var).map(PathBuf::from).or(home.as_ref().map(|h| h.join(default)));
        // The config file's keys first, so the credentials file's win, as in the SDKs.
        let mut keys = BTreeMap::new();
        if let Some(text) = file("AWS_CONFIG_FILE", ".aws/config").map(|p| read_optional(&p)).transpose()?.flatten() {
            let mut sections = parse_ini(&text);
            // The config file names profiles `[profile NAME]`, but the default one also `[default]`.
            if name == "default" {
                keys.extend(sections.remove("default").unwrap_or_default());
            }
            keys.extend(sections.remove(&format!("profile {name}")).unwrap_or_default());
        }
        let credentials = file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
        if let Some(text) = credentials.map(|p| read_optional(&p)).transpose()?.flatten() {
            keys.extend(parse_ini(&text).remove(name).unwrap_or_default());
        }
        let Some(id) = keys.remove("aws_access_key_id") else { return Ok(None) };
        let secret = keys.remove("aws_secret_access_key").ok_or(ChainError::Profile { profile: name.to_owned() })?;
        Ok(Some(Credentials::new(id, secret, keys.remove("aws_session_token"), None, "icegate-profile")))
    }

    async fn web_identity(&self, sts: &impl WebIdentitySts) -> Result<Option<Credentials>, ChainError> {
        let (token_file, role_arn) = match (self.env.get("AWS_WEB_IDENTITY_TOKEN_FILE"), self.env.get("AWS_ROLE_ARN")) {
            (None, None) => return Ok(None),
            (Some(_), None) => {
                return Err(ChainError::Incomplete { set: "AWS_WEB_IDENTITY_TOKEN_FILE", missing: "AWS_ROLE_ARN" });
            }
            (None, Some(_)) => {
                return Err(ChainError::Incomplete { set: "AWS_ROLE_ARN", missing: "AWS_WEB_IDENTITY_TOKEN_FILE" });
            }
            (Some(f), Some(r)) => (PathBuf::from(f), r),
        };
        // Held across the call so concurrent callers wait for one fetch instead of each making one.
        let mut cached = self.web_identity.lock().await;
        if let Some(c) = cached.as_ref().filter(|c| fresh(c)) {
            return Ok(Some(c.clone()));
        }
        // Read every time: the kubelet rotates the projected token.
        let token = std::fs::read_to_string(&token_file)
            .map_err(|e| ChainError::Read { path: token_file.clone(), message: e.to_string() })?;
        let session = self.env.get("AWS_ROLE_SESSION_NAME").unwrap_or_else(|| "icegate".to_owned());
        let params = [
            ("Action", "AssumeRoleWithWebIdentity"),
            ("Version", "2011-06-15"),
            ("RoleArn", role_arn.as_str()),
            ("RoleSessionName", session.as_str()),
            ("WebIdentityToken", token.trim()),
        ];
        let minted = sts
            .assume_role_with_web_identity(&params)
            .await
            .map_err(|message| ChainError::WebIdentity { role_arn: role_arn.clone(), message })?;
        let expiry = UNIX_EPOCH + Duration::from_millis(u64::try_from(minted.expiration_ms).unwrap_or(0));
        let credentials = Credentials::new(
            minted.access_key_id.clone(),
            minted.secret_access_key.clone(),
            Some(minted.session_token.clone()),
            Some(expiry),
            "icegate-web-identity",
        );
        tracing::debug!(role_arn, "assumed role with web identity");
        *cached = Some(credentials.clone());
        Ok(Some(credentials))
    }
}

fn fresh(c: &Credentials) -> bool {
    c.expiry().is_none_or(|e| e.duration_since(SystemTime::now()).is_ok_and(|left| left > WEB_IDENTITY_MARGIN))
}

/// A file that may be absent (the SDKs skip a missing profile file).
fn read_optional(path: &std::path::Path) -> Result<Option<String>, ChainError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ChainError::Read { path: path.to_owned(), message: e.to_string() }),
    }
}

/// Sections of an AWS profile file, keys lower-cased; indented lines (sub-properties such as
/// `s3 =` blocks) and comments are skipped, and a repeated section adds to the first.
fn parse_ini(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut sections: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let name = header.split(']').next().unwrap_or_default();
            let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
            sections.entry(name.clone()).or_default();
            current = Some(name);
        } else if let (Some(section), Some((key, value))) = (&current, line.split_once('=')) {
            let keys = sections.entry(section.clone()).or_default();
            keys.insert(key.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    sections
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_files_parse_like_the_sdks() {
        let text = "# comment\n[default]\naws_access_key_id = AKID\n AWS_Secret = skipped\n; note\n\
                    [profile  dev ]\nAWS_SECRET_ACCESS_KEY=s=e=cret\ns3 =\n  max_concurrent_requests = 2\n";
        let s = parse_ini(text);
        assert_eq!(s["default"].get("aws_access_key_id").map(String::as_str), Some("AKID"));
        assert_eq!(s["default"].len(), 1);
        assert_eq!(s["profile dev"].get("aws_secret_access_key").map(String::as_str), Some("s=e=cret"));
        assert_eq!(s["profile dev"].get("s3").map(String::as_str), Some(""));
        assert!(!s["profile dev"].contains_key("max_concurrent_requests"));
    }

    #[test]
    fn environment_wins_and_empty_values_count_as_unset() {
        let chain = Chain::new(Env::from_pairs([("AWS_ACCESS_KEY_ID", "AKID"), ("AWS_SECRET_ACCESS_KEY", "s")]));
        let c = chain.environment().unwrap().unwrap();
        assert_eq!((c.access_key_id(), c.session_token()), ("AKID", None));
        let chain = Chain::new(Env::from_pairs([("AWS_ACCESS_KEY_ID", "AKID"), ("AWS_SECRET_ACCESS_KEY", "")]));
        assert!(matches!(chain.environment(), Err(ChainError::Incomplete { .. })));
        assert!(Chain::new(Env::from_pairs([("AWS_ACCESS_KEY_ID", "")])).environment().unwrap().is_none());
    }
}
