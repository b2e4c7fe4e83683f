//! STS AssumeRole of `credentials.sts.role_arn`, signed with icegate's own credentials
//! ([`Role`]), and `s3-downscope`'s minting with it: a session policy for the caller's scope on
//! the table's locations, results cached per caller, scope and table until shortly before they
//! expire. The local signer assumes the same role, without a policy (`serve::storage::local_signer`).

use super::aws_chain::{Chain, ChainError, WebIdentitySts};
use crate::core::clock::Clock;
pub use crate::core::credentials::Minted;
use crate::core::credentials::session_policy::{self, PolicyError};
use crate::core::policy::authorize::Scope;
use crate::net::outbound::{Outbound, OutboundError};
use crate::serve::cache::lock;
use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use bytes::Bytes;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};
use thiserror::Error;

const TOTAL_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_RESPONSE_BYTES: usize = 64 * 1024;
/// Past this many cached keys, expired entries are dropped before a new one is added.
const MAX_CACHED: usize = 10_000;

#[derive(Debug, Error)]
pub enum StsError {
    #[error("invalid sts setup: {0}")]
    Config(String),
    #[error(transparent)]
    Tls(#[from] crate::net::TlsError),
    #[error(transparent)]
    Outbound(#[from] OutboundError),
    #[error("icegate's aws credentials: {0}")]
    Chain(#[from] ChainError),
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error("cannot sign the sts request: {0}")]
    Sign(String),
    #[error("sts is unreachable: {0}")]
    Unreachable(String),
    /// `through`: the proxy it went through, as `Outbound::through` says it (empty: none).
    #[error("sts did not answer within {} ms{through}", TOTAL_TIMEOUT.as_millis())]
    Timeout { through: String },
    #[error("sts refused the request: `{code}`: {message}")]
    Refused { code: String, message: String },
    #[error("unexpected sts response (status {status}): {message}")]
    Response { status: u16, message: String },
}

/// Who asks, for which table and scope.
#[derive(Debug)]
pub struct MintRequest<'a> {
    pub user: &'a str,
    pub active_roles: &'a [String],
    /// `catalog.schema.table`.
    pub table: &'a str,
    pub scope: Scope,
    pub locations: &'a [String],
}

/// An STS endpoint and a connection pool to it.
#[derive(Clone, Debug)]
pub struct StsClient {
    client: Outbound,
    endpoint: http::Uri,
    region: String,
    /// The signing time and the credentials' freshness are read from it (a test's manual
    /// clock, else the real one).
    clock: Clock,
}

impl StsClient {
    /// `endpoint` unset: the region's public endpoint; `http://` is allowed for local stand-ins.
    pub fn new(endpoint: Option<&str>, region: &str) -> Result<Self, StsError> {
        let suffix = if region.starts_with("cn-") { "amazonaws.com.cn" } else { "amazonaws.com" };
        let text = endpoint.map_or_else(|| format!("https://sts.{region}.{suffix}/"), str::to_owned);
        let endpoint: http::Uri = text.parse().map_err(|e| StsError::Config(format!("endpoint `{text}`: {e}")))?;
        // The signer requires a host, and the scheme decides whether TLS is used.
        if endpoint.host().is_none() || !matches!(endpoint.scheme_str(), Some("http" | "https")) {
            return Err(StsError::Config(format!("endpoint `{text}` is not an http or https url")));
        }
        let client = crate::net::outbound::shared()?;
        Ok(Self { client, endpoint, region: region.to_owned(), clock: Clock::real() })
    }

    pub fn endpoint(&self) -> &http::Uri {
        &self.endpoint
    }

    /// Now, in Unix milliseconds, on the clock its signatures are dated by.
    pub fn now_ms(&self) -> i64 {
        let now = self.clock.system_now();
        now.duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }

    /// POSTs the query-protocol `params`, SigV4-signed when `signer` is given, and reads the
    /// credentials of the `…Result` in the answer.
    pub async fn call(&self, params: &[(&str, &str)], signer: Option<&Credentials>) -> Result<Minted, StsError> {
        let body = form_urlencoded::Serializer::new(String::new()).extend_pairs(params).finish();
        let host = self.endpoint.authority().map(ToString::to_string).unwrap_or_default();
        let mut request = http::Request::post(self.endpoint.clone())
            .header(http::header::HOST, host)
            .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded; charset=utf-8")
            .body(Bytes::from(body.clone()))
            .map_err(|e| StsError::Sign(e.to_string()))?;
        if let Some(credentials) = signer {
            self.sign(&mut request, body.as_bytes(), credentials)?;
        }
        let request = reqwest::Request::try_from(request)
            .map_err(|e| StsError::Sign(crate::core::text::error_chain(&e.without_url())))?;
        let through = self.client.through(request.url());
        let exchange = async {
            let response = self.client.send(request).await.map_err(|e| StsError::Unreachable(e.to_string()))?;
            let status = response.status().as_u16();
            let body = crate::net::outbound::read(response, MAX_RESPONSE_BYTES)
                .await
                .map_err(|e| StsError::Unreachable(format!("{e}{through}")))?;
            Ok::<_, StsError>((status, body))
        };
        let (status, body) = tokio::time::timeout(TOTAL_TIMEOUT, exchange)
            .await
            .map_err(|_| StsError::Timeout { through: through.clone() })??;
        parse_response(status, &body)
    }

    fn sign(&self, request: &mut http::Request<Bytes>, body: &[u8], credentials: &Credentials) -> Result<(), StsError> {
        let identity = Identity::from(credentials.clone());
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(&self.region)
            .name("sts")
            .time(self.clock.system_now())
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| StsError::Sign(e.to_string()))?
            .into();
        let headers = request.headers().iter().filter_map(|(k, v)| Some((k.as_str(), v.to_str().ok()?)));
        let signable = SignableRequest::new("POST", self.endpoint.to_string(), headers, SignableBody::Bytes(body))
            .map_err(|e| StsError::Sign(e.to_string()))?;
        let (instructions, _) = sign(signable, &params).map_err(|e| StsError::Sign(e.to_string()))?.into_parts();
        instructions.apply_to_request_http1x(request);
        Ok(())
    }
}

impl WebIdentitySts for StsClient {
    async fn assume_role_with_web_identity(&self, params: &[(&str, &str)]) -> Result<Minted, String> {
        self.call(params, None).await.map_err(|e| e.to_string())
    }
}

fn child<'a, 'i>(node: roxmltree::Node<'a, 'i>, name: &str) -> Option<roxmltree::Node<'a, 'i>> {
    node.children().find(|n| n.is_element() && n.tag_name().name() == name)
}

fn text<'a>(node: roxmltree::Node<'a, '_>, name: &str) -> Option<&'a str> {
    child(node, name).and_then(|n| n.text()).map(str::trim)
}

/// `…Response/…Result/Credentials` of a success, `ErrorResponse/Error` of a refusal.
fn parse_response(status: u16, body: &[u8]) -> Result<Minted, StsError> {
    let unexpected = |message: &str| StsError::Response { status, message: message.to_owned() };
    let body = std::str::from_utf8(body).map_err(|_| unexpected("the body is not utf-8"))?;
    let doc = roxmltree::Document::parse(body).map_err(|e| unexpected(&format!("the body is not xml: {e}")))?;
    let root = doc.root_element();
    if !(200..300).contains(&status) {
        let error = child(root, "Error").ok_or_else(|| unexpected("an error without `Error`"))?;
        let part = |name: &str| text(error, name).filter(|t| !t.is_empty()).unwrap_or("unknown").to_owned();
        return Err(StsError::Refused { code: part("Code"), message: part("Message") });
    }
    let credentials = root
        .children()
        .find(|n| n.is_element() && n.tag_name().name().ends_with("Result"))
        .and_then(|result| child(result, "Credentials"))
        .ok_or_else(|| unexpected("no `Credentials` in the result"))?;
    let field =
        |name: &str| text(credentials, name).map(str::to_owned).ok_or_else(|| unexpected(&format!("no `{name}`")));
    let expiration = field("Expiration")?;
    let expiration_ms =
        aws_smithy_types::DateTime::from_str(&expiration, aws_smithy_types::date_time::Format::DateTimeWithOffset)
            .ok()
            .and_then(|t| t.to_millis().ok())
            .ok_or_else(|| unexpected(&format!("`Expiration` is not a date: `{expiration}`")))?;
    Ok(Minted {
        access_key_id: field("AccessKeyId")?,
        secret_access_key: field("SecretAccessKey")?,
        session_token: field("SessionToken")?,
        expiration_ms,
    })
}

/// `icegate-<user>` in the characters and length STS allows for a session name.
fn session_name(user: &str) -> String {
    let clean = |c: char| if c.is_ascii_alphanumeric() || "_+=,.@-".contains(c) { c } else { '-' };
    format!("icegate-{user}").chars().map(clean).take(64).collect()
}

/// A session tag value in the characters and length STS allows.
fn tag_value(value: &str) -> String {
    let allowed = |c: char| {
        c.is_alphabetic() || c.is_numeric() || (c.is_whitespace() && !c.is_control()) || "_.:/=+-@".contains(c)
    };
    value.chars().map(|c| if allowed(c) { c } else { '_' }).take(256).collect()
}

/// The role icegate assumes, as `[credentials.sts]` configures it.
#[derive(Debug)]
pub struct Role {
    role_arn: String,
    duration_seconds: u32,
    external_id: Option<String>,
    refresh_before_ms: i64,
}

impl Role {
    pub fn new(config: &crate::config::credentials::Sts, role_arn: String) -> Self {
        Self {
            role_arn,
            duration_seconds: config.duration_seconds,
            external_id: config.external_id.clone(),
            refresh_before_ms: i64::try_from(config.refresh_before_seconds.saturating_mul(1000)).unwrap_or(i64::MAX),
        }
    }

    pub fn arn(&self) -> &str {
        &self.role_arn
    }

    /// AssumeRole as `session` through `sts`, signed with `base`; `extra` adds parameters (a
    /// session policy, session tags).
    pub async fn assume(
        &self,
        sts: &StsClient,
        base: &Credentials,
        session: &str,
        extra: &[(String, String)],
    ) -> Result<Minted, StsError> {
        let duration = self.duration_seconds.to_string();
        let mut params: Vec<(&str, &str)> = vec![
            ("Action", "AssumeRole"),
            ("Version", "2011-06-15"),
            ("RoleArn", &self.role_arn),
            ("RoleSessionName", session),
            ("DurationSeconds", &duration),
        ];
        if let Some(id) = &self.external_id {
            params.push(("ExternalId", id));
        }
        params.extend(extra.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        sts.call(&params, Some(base)).await
    }

    /// Whether `minted` is still used at `now_ms`: it is renewed `refresh_before_seconds`
    /// before it expires.
    pub fn fresh(&self, minted: &Minted, now_ms: i64) -> bool {
        now_ms.saturating_add(self.refresh_before_ms) < minted.expiration_ms
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    user: String,
    active_roles: Vec<String>,
    write: bool,
    table: String,
    locations: Vec<String>,
}

/// One key's credentials; its lock is held while they are minted, so concurrent callers for the
/// same key wait for one STS call.
type Slot = Arc<tokio::sync::Mutex<Option<Arc<Minted>>>>;

/// Mints and caches downscoped S3 credentials.
pub struct Downscoper {
    sts: StsClient,
    chain: Chain,
    role: Role,
    cache: Mutex<HashMap<Key, Slot>>,
}

impl fmt::Debug for Downscoper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Downscoper")
            .field("endpoint", &self.sts.endpoint)
            .field("region", &self.sts.region)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl Downscoper {
    /// With icegate's credentials from the process environment.
    pub fn new(config: &crate::config::credentials::Sts) -> Result<Self, StsError> {
        Self::with_chain(config, Chain::from_process_env())
    }

    pub fn with_chain(config: &crate::config::credentials::Sts, chain: Chain) -> Result<Self, StsError> {
        let role_arn =
            config.role_arn.clone().filter(|r| !r.is_empty()).ok_or_else(|| {
                StsError::Config("`credentials.sts.role_arn` is required in `s3-downscope` mode".into())
            })?;
        Ok(Self {
            sts: StsClient::new(config.endpoint.as_deref(), &config.region)?,
            chain,
            role: Role::new(config, role_arn),
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// Cached credentials for the request's key while they are fresh, else new ones from STS.
    pub async fn mint(&self, request: &MintRequest<'_>) -> Result<Arc<Minted>, StsError> {
        let key = Key {
            user: request.user.to_owned(),
            active_roles: request.active_roles.to_vec(),
            write: request.scope == Scope::Write,
            table: request.table.to_owned(),
            locations: request.locations.to_vec(),
        };
        let slot = self.slot(key);
        let mut held = slot.lock().await;
        if let Some(minted) = held.as_ref().filter(|m| self.fresh(m)) {
            return Ok(minted.clone());
        }
        let minted = Arc::new(self.assume_role(request).await?);
        tracing::debug!(
            user = request.user,
            table = request.table,
            scope = request.scope.as_str(),
            expiration_ms = minted.expiration_ms,
            "minted downscoped s3 credentials"
        );
        *held = Some(minted.clone());
        Ok(minted)
    }

    fn fresh(&self, minted: &Minted) -> bool {
        self.role.fresh(minted, self.sts.now_ms())
    }

    fn slot(&self, key: Key) -> Slot {
        let mut cache = lock(&self.cache);
        if cache.len() >= MAX_CACHED && !cache.contains_key(&key) {
            // A slot being minted into is locked: it stays, the rest only while fresh.
            cache.retain(|_, slot| slot.try_lock().map_or(true, |m| m.as_ref().is_some_and(|m| self.fresh(m))));
            if cache.len() >= MAX_CACHED {
                cache.retain(|_, slot| slot.try_lock().is_err());
            }
        }
        cache.entry(key).or_default().clone()
    }

    async fn assume_role(&self, request: &MintRequest<'_>) -> Result<Minted, StsError> {
        let policy = session_policy::encode(&session_policy::session_policy(request.scope, request.locations))?;
        let base = self.chain.credentials(&self.sts).await?;
        // Tag values cannot hold commas; a space separates the roles.
        let tags = [
            ("icegate:user", tag_value(request.user)),
            ("icegate:active-roles", tag_value(&request.active_roles.join(" "))),
            ("icegate:table", tag_value(request.table)),
        ];
        let mut extra = vec![("Policy".to_owned(), policy)];
        for (i, (key, value)) in tags.into_iter().enumerate() {
            extra.push((format!("Tags.member.{}.Key", i + 1), key.to_owned()));
            extra.push((format!("Tags.member.{}.Value", i + 1), value));
        }
        self.role.assume(&self.sts, &base, &session_name(request.user), &extra).await
    }
}

impl Downscoper {
    /// This downscoper, reading `clock` for the signing time and the credentials' freshness.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.sts.clock = clock;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_and_tag_values_keep_to_what_sts_accepts() {
        assert_eq!(session_name("alice@example.com"), "icegate-alice@example.com");
        assert_eq!(session_name("a b/c:d"), "icegate-a-b-c-d");
        assert_eq!(session_name(&"x".repeat(100)).len(), 64);
        assert_eq!(tag_value("cat.db.t"), "cat.db.t");
        assert_eq!(tag_value("José a,b;c"), "José a_b_c");
        assert_eq!(tag_value(&"é".repeat(300)).chars().count(), 256);
    }

    #[test]
    fn responses_parse_into_credentials_or_the_refusal() {
        let ok = r#"<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>
            <Credentials><AccessKeyId>ASIA1</AccessKeyId><SecretAccessKey>s</SecretAccessKey>
            <SessionToken>t</SessionToken><Expiration>2030-01-01T00:00:00.500Z</Expiration></Credentials>
            </AssumeRoleResult></AssumeRoleResponse>"#;
        let m = parse_response(200, ok.as_bytes()).unwrap();
        assert_eq!((m.access_key_id.as_str(), m.expiration_ms), ("ASIA1", 1_893_456_000_500));
        assert!(!format!("{m:?}").contains("SecretAccessKey") && !format!("{m:?}").contains("\"s\""));
        let refused = r#"<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>
            <Message>not allowed</Message></Error></ErrorResponse>"#;
        let e = parse_response(403, refused.as_bytes()).unwrap_err();
        assert_eq!(e.to_string(), "sts refused the request: `AccessDenied`: not allowed");
        assert!(matches!(parse_response(500, b"oops"), Err(StsError::Response { status: 500, .. })));
        assert!(matches!(parse_response(200, b"<A><B/></A>"), Err(StsError::Response { .. })));
    }
}
