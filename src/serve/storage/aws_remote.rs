//! The AWS default chain's last two providers, which serve credentials over HTTP: the container
//! provider (ECS task roles, EKS Pod Identity) and the EC2 instance metadata service (IMDSv2).
//! What they serve is kept until shortly before it expires.

use aws_credential_types::Credentials;
use bytes::Bytes;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Fetched again this long before they expire (the SDKs refresh 5 minutes ahead, too).
const MARGIN: Duration = Duration::from_secs(300);
/// Off AWS, nothing answers at the link-local addresses: give up quickly.
const TIMEOUT: Duration = Duration::from_secs(2);
const MAX_ANSWER: usize = 64 * 1024;
const ECS_HOST: &str = "169.254.170.2";
const IMDS: &str = "http://169.254.169.254";

/// The two providers, with what they last served.
#[derive(Debug, Default)]
pub struct Remote {
    cached: tokio::sync::Mutex<Cached>,
}

#[derive(Debug, Default)]
struct Cached {
    credentials: Option<Credentials>,
    /// The instance metadata service did not answer: not asked again before then, so that a
    /// machine off EC2 does not wait for it on every lookup.
    no_instance_until: Option<std::time::Instant>,
}

/// How long an instance metadata service that did not answer is not asked again.
const NO_INSTANCE_FOR: Duration = Duration::from_secs(60);

impl Remote {
    /// The container provider's credentials when its variables are set, else the instance's
    /// (unless `AWS_EC2_METADATA_DISABLED=true`); `None` when neither serves any.
    /// `var` reads the chain's variables (empty ones as unset).
    pub async fn credentials(&self, var: impl Fn(&str) -> Option<String>) -> Result<Option<Credentials>, String> {
        let env = &var;
        // held across the fetch: concurrent callers wait for one instead of each making one
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.credentials.as_ref().filter(|c| fresh(c)) {
            return Ok(Some(c.clone()));
        }
        let now = std::time::Instant::now();
        let fetched = match container_uri(env)? {
            Some(uri) => Some(container(env, &uri).await?),
            None if env("AWS_EC2_METADATA_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) => None,
            None if cached.no_instance_until.is_some_and(|until| now < until) => None,
            None => {
                let found = instance(env).await;
                cached.no_instance_until = found.is_none().then(|| now + NO_INSTANCE_FOR);
                found
            }
        };
        cached.credentials.clone_from(&fetched);
        Ok(fetched)
    }
}

fn fresh(c: &Credentials) -> bool {
    c.expiry().is_none_or(|e| e.duration_since(SystemTime::now()).is_ok_and(|left| left > MARGIN))
}

fn remote_error(message: impl Into<String>) -> String {
    message.into()
}

/// `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` on ECS's address, else
/// `AWS_CONTAINER_CREDENTIALS_FULL_URI`, which must be https or name a loopback or the ECS or EKS
/// agent's address (as the SDKs require: the credentials must not cross a network in clear).
fn container_uri(env: &impl Fn(&str) -> Option<String>) -> Result<Option<http::Uri>, String> {
    let text = match (env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"), env("AWS_CONTAINER_CREDENTIALS_FULL_URI")) {
        (Some(relative), _) => format!("http://{ECS_HOST}{relative}"),
        (None, Some(full)) => full,
        (None, None) => return Ok(None),
    };
    let uri: http::Uri =
        text.parse().map_err(|_| remote_error(format!("container credentials url `{text}` is not a url")))?;
    let host = uri.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
    let allowed = match uri.scheme_str() {
        Some("https") => true,
        Some("http") => {
            host == ECS_HOST
                || host == "169.254.170.23"
                || host == "fd00:ec2::23"
                || host == "localhost"
                || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
        }
        _ => false,
    };
    if !allowed {
        return Err(remote_error(format!(
            "container credentials url `{text}` must be https, or http to a loopback or the ECS or EKS agent's address"
        )));
    }
    Ok(Some(uri))
}

async fn container(env: &impl Fn(&str) -> Option<String>, uri: &http::Uri) -> Result<Credentials, String> {
    let token = match env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") {
        Some(file) => {
            Some(std::fs::read_to_string(&file).map_err(|e| format!("cannot read `{file}`: {e}"))?.trim().to_owned())
        }
        None => env("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
    };
    let mut request = http::Request::get(uri.clone());
    if let Some(token) = token {
        request = request.header(http::header::AUTHORIZATION, token);
    }
    let request = request.body(Bytes::new()).map_err(|e| remote_error(e.to_string()))?;
    let (status, body) = exchange(request).await.map_err(|e| remote_error(format!("container credentials: {e}")))?;
    if status != http::StatusCode::OK {
        return Err(remote_error(format!("container credentials: the agent answered {}", status.as_u16())));
    }
    parse(&body, "icegate-container").map_err(|e| remote_error(format!("container credentials: {e}")))
}

/// IMDSv2: a session token, the instance profile's role, its credentials. `None` when the
/// service does not answer (not on EC2) or the instance has no role.
async fn instance(env: &impl Fn(&str) -> Option<String>) -> Option<Credentials> {
    let base = env("AWS_EC2_METADATA_SERVICE_ENDPOINT").unwrap_or_else(|| IMDS.to_owned());
    let base = base.trim_end_matches('/');
    let put = http::Request::put(format!("{base}/latest/api/token"))
        .header("x-aws-ec2-metadata-token-ttl-seconds", "21600")
        .body(Bytes::new())
        .ok()?;
    let (status, token) = exchange(put).await.ok()?;
    let token = String::from_utf8(token.to_vec()).ok().filter(|_| status == http::StatusCode::OK)?;
    let get = |path: String| {
        http::Request::get(format!("{base}/latest/meta-data/iam/security-credentials/{path}"))
            .header("x-aws-ec2-metadata-token", token.as_str())
            .body(Bytes::new())
            .ok()
    };
    let (status, roles) = exchange(get(String::new())?).await.ok()?;
    let role = String::from_utf8_lossy(&roles).lines().next().map(str::trim).unwrap_or_default().to_owned();
    if status != http::StatusCode::OK || role.is_empty() {
        return None;
    }
    let (status, body) = exchange(get(role)?).await.ok()?;
    match parse(&body, "icegate-instance") {
        Ok(c) if status == http::StatusCode::OK => Some(c),
        Ok(_) | Err(_) => {
            tracing::warn!(
                status = status.as_u16(),
                "the instance metadata service has a role but served no credentials"
            );
            None
        }
    }
}

/// One call on the side calls' client (which reaches these link-local addresses directly
/// whatever the proxy; a loopback or `https` agent goes the way `NO_PROXY` says).
async fn exchange(request: http::Request<Bytes>) -> Result<(http::StatusCode, Bytes), String> {
    let client = crate::net::outbound::shared().map_err(|e| e.to_string())?;
    let request = reqwest::Request::try_from(request).map_err(|e| e.without_url().to_string())?;
    let call = async {
        let response = client.send(request).await.map_err(|e| e.to_string())?;
        let status = response.status();
        let body = crate::net::outbound::read(response, MAX_ANSWER).await?;
        Ok((status, body))
    };
    tokio::time::timeout(TIMEOUT, call).await.map_err(|_| "no answer in time".to_owned())?
}

/// The JSON both providers serve: `AccessKeyId`, `SecretAccessKey`, `Token`, `Expiration`.
fn parse(body: &[u8], provider: &'static str) -> Result<Credentials, String> {
    let json: serde_json::Value = serde_json::from_slice(body).map_err(|_| "the answer is not JSON".to_owned())?;
    let field = |name: &str| json.get(name).and_then(serde_json::Value::as_str).filter(|s| !s.is_empty());
    let id = field("AccessKeyId").ok_or("the answer has no `AccessKeyId`")?;
    let secret = field("SecretAccessKey").ok_or("the answer has no `SecretAccessKey`")?;
    let expiry = match field("Expiration") {
        None => None,
        Some(text) => Some(
            aws_smithy_types::DateTime::from_str(text, aws_smithy_types::date_time::Format::DateTimeWithOffset)
                .ok()
                .and_then(|t| t.to_millis().ok())
                .and_then(|ms| u64::try_from(ms).ok())
                .map(|ms| UNIX_EPOCH + Duration::from_millis(ms))
                .ok_or("the answer's `Expiration` is not a date")?,
        ),
    };
    Ok(Credentials::new(id, secret, field("Token").map(str::to_owned), expiry, provider))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_urls_are_https_or_a_local_agents() {
        let uri = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
            container_uri(&move |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
        };
        let relative = uri(&[("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/x")]).unwrap().unwrap();
        assert_eq!(relative.to_string(), "http://169.254.170.2/v2/credentials/x");
        for ok in [
            "http://127.0.0.1:9/c",
            "http://169.254.170.23/v1/credentials",
            "http://[fd00:ec2::23]/c",
            "https://agent.example/c",
        ] {
            assert!(uri(&[("AWS_CONTAINER_CREDENTIALS_FULL_URI", ok)]).unwrap().is_some(), "{ok}");
        }
        let err = uri(&[("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://10.0.0.5/c")]).unwrap_err();
        assert!(err.contains("must be https"), "{err}");
        assert!(uri(&[]).unwrap().is_none());
    }

    #[test]
    fn answers_parse_with_their_expiry() {
        let body = br#"{"Code":"Success","AccessKeyId":"AKID","SecretAccessKey":"s","Token":"t","Expiration":"2030-01-01T00:00:00Z"}"#;
        let c = parse(body, "p").unwrap();
        assert_eq!((c.access_key_id(), c.session_token()), ("AKID", Some("t")));
        assert_eq!(c.expiry(), Some(UNIX_EPOCH + Duration::from_secs(1_893_456_000)));
        assert!(parse(br#"{"AccessKeyId":"AKID"}"#, "p").unwrap_err().contains("SecretAccessKey"));
    }
}
