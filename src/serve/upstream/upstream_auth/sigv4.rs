//! `upstream.auth = "sigv4"`: every request to one upstream (AWS Glue's Iceberg REST endpoint,
//! S3 Tables) signed with AWS SigV4 by the `aws-sigv4` crate, the payload's SHA-256 included,
//! with icegate's credentials from the AWS default chain, looked up again as they expire.

use super::error::{AuthError, Status};
use crate::config::SigV4;
use crate::core::clock::Clock;
use crate::ops::metrics::UpstreamAuthMetrics;
use crate::serve::storage::aws_chain::Chain;
use crate::serve::storage::sts::StsClient;
use aws_credential_types::Credentials;
use aws_sigv4::http_request::{PayloadChecksumKind, SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use http::{HeaderName, HeaderValue};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime};

/// Credentials with an expiry are looked up again this long before it.
const EXPIRY_MARGIN: Duration = Duration::from_secs(300);
/// Credentials without one (the environment, a profile) are read again this often, so that a
/// rotated profile file is picked up.
const REREAD_EVERY: Duration = Duration::from_secs(300);
/// After a failed lookup, requests get the same error for this long.
const FAILURE_BACKOFF: Duration = Duration::from_secs(1);

/// What a caller may have sent that the signature sets: never signed or sent as the caller's.
const SIGNATURE_HEADERS: [&str; 4] = ["authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"];

struct Held {
    credentials: Credentials,
    read_at: Instant,
}

/// The SigV4 signer of one upstream.
pub struct Signer {
    service: String,
    region: String,
    chain: RwLock<Arc<Chain>>,
    sts: Option<StsClient>,
    clock: Clock,
    held: RwLock<Option<Held>>,
    failed: RwLock<Option<(Instant, String)>>,
    fetching: tokio::sync::Mutex<()>,
    pub metrics: UpstreamAuthMetrics,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer").field("service", &self.service).field("region", &self.region).finish_non_exhaustive()
    }
}

impl Signer {
    pub fn new(config: &SigV4, clock: Clock, metrics: UpstreamAuthMetrics) -> Self {
        Self {
            service: config.service.clone(),
            region: config.region.clone(),
            chain: RwLock::new(Arc::new(Chain::from_process_env())),
            sts: StsClient::new(config.sts_endpoint.as_deref(), &config.region).ok(),
            clock,
            held: RwLock::new(None),
            failed: RwLock::new(None),
            fetching: tokio::sync::Mutex::new(()),
            metrics,
        }
    }

    /// Reads credentials from `chain` from now on (tests give variables rather than the
    /// process's, which parallel tests share).
    pub fn use_chain(&self, chain: Chain) {
        *self.chain.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(chain);
        *self.held.write().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Signs `parts` for sending `body`: the caller's signature headers are removed, `Host`,
    /// `X-Amz-Date`, `X-Amz-Content-Sha256` (the body's SHA-256), `X-Amz-Security-Token` and
    /// `Authorization` set.
    pub async fn sign(&self, parts: &mut http::request::Parts, body: &[u8]) -> Result<(), AuthError> {
        let credentials = self.credentials().await?;
        for name in SIGNATURE_HEADERS {
            parts.headers.remove(name);
        }
        if let Some(authority) = parts.uri.authority()
            && let Ok(host) = HeaderValue::from_str(authority.as_str())
        {
            parts.headers.insert(http::header::HOST, host);
        }
        sign_parts(parts, body, &credentials, (&self.service, &self.region), self.clock.system_now())
    }

    fn fresh(&self, held: &Held) -> bool {
        match held.credentials.expiry() {
            Some(expiry) => expiry.duration_since(self.clock.system_now()).is_ok_and(|left| left > EXPIRY_MARGIN),
            None => self.clock.since(held.read_at) < REREAD_EVERY,
        }
    }

    fn cached(&self) -> Option<Credentials> {
        let held = self.held.read().unwrap_or_else(PoisonError::into_inner);
        held.as_ref().filter(|h| self.fresh(h)).map(|h| h.credentials.clone())
    }

    /// Credentials not due for a new lookup: the held ones, else the chain's now (one lookup
    /// however many requests wait).
    async fn credentials(&self) -> Result<Credentials, AuthError> {
        if let Some(c) = self.cached() {
            return Ok(c);
        }
        let _fetching = self.fetching.lock().await;
        if let Some(c) = self.cached() {
            return Ok(c);
        }
        let failed = self.failed.read().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some((at, message)) = failed
            && self.clock.since(at) < FAILURE_BACKOFF
        {
            return Err(AuthError::Credentials(message));
        }
        let chain = Arc::clone(&self.chain.read().unwrap_or_else(PoisonError::into_inner));
        let sts = match &self.sts {
            Some(sts) => sts.clone(),
            None => StsClient::new(None, &self.region).map_err(|e| AuthError::Credentials(e.to_string()))?,
        };
        match chain.credentials(&sts).await {
            Ok(credentials) => {
                tracing::debug!(
                    expires = credentials.expiry().is_some(),
                    "read AWS credentials for signing upstream requests"
                );
                self.metrics.refreshed(true);
                self.metrics.held(credentials.expiry());
                *self.failed.write().unwrap_or_else(PoisonError::into_inner) = None;
                *self.held.write().unwrap_or_else(PoisonError::into_inner) =
                    Some(Held { credentials: credentials.clone(), read_at: self.clock.now() });
                Ok(credentials)
            }
            Err(e) => {
                let message = e.to_string();
                tracing::warn!(error = %message, "cannot read AWS credentials for signing upstream requests");
                self.metrics.refreshed(false);
                self.metrics.dropped();
                *self.failed.write().unwrap_or_else(PoisonError::into_inner) =
                    Some((self.clock.now(), message.clone()));
                Err(AuthError::Credentials(message))
            }
        }
    }

    /// What `/readyz` says of the credentials.
    pub fn status(&self) -> Status {
        let held = self.held.read().unwrap_or_else(PoisonError::into_inner);
        let now = self.clock.system_now();
        let valid = held.as_ref().filter(|h| h.credentials.expiry().is_none_or(|e| e > now));
        Status {
            mode: "sigv4",
            held: valid.is_some(),
            expires_in: valid
                .and_then(|h| h.credentials.expiry())
                .map(|e| e.duration_since(now).unwrap_or_default().as_secs()),
            last_error: self.failed.read().unwrap_or_else(PoisonError::into_inner).as_ref().map(|(_, m)| m.clone()),
        }
    }
}

/// Signs `parts` and `body` with `credentials` for `(service, region)` at `time`: the canonical
/// request double-encodes the path and normalizes it, as AWS services other than S3 expect (and
/// botocore's `SigV4Auth` computes), and binds the body's SHA-256, also sent as
/// `X-Amz-Content-Sha256`.
pub fn sign_parts(
    parts: &mut http::request::Parts,
    body: &[u8],
    credentials: &Credentials,
    (service, region): (&str, &str),
    time: SystemTime,
) -> Result<(), AuthError> {
    let fail = |e: &dyn std::fmt::Display| AuthError::Sign(e.to_string());
    let mut settings = SigningSettings::default();
    settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    let identity = Identity::from(credentials.clone());
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
        .time(time)
        .settings(settings)
        .build()
        .map_err(|e| fail(&e))?
        .into();
    // a header whose value is not text cannot be signed; it is sent unsigned
    let headers: Vec<(&str, &str)> =
        parts.headers.iter().filter_map(|(n, v)| v.to_str().ok().map(|v| (n.as_str(), v))).collect();
    let uri = parts.uri.to_string();
    let signable = SignableRequest::new(parts.method.as_str(), &uri, headers.into_iter(), SignableBody::Bytes(body))
        .map_err(|e| fail(&e))?;
    let (instructions, _) = sign(signable, &params).map_err(|e| fail(&e))?.into_parts();
    for (name, value) in instructions.headers() {
        let name = HeaderName::try_from(name).map_err(|e| fail(&e))?;
        let mut value = HeaderValue::try_from(value).map_err(|e| fail(&e))?;
        if name == http::header::AUTHORIZATION || name.as_str() == "x-amz-security-token" {
            value.set_sensitive(true);
        }
        parts.headers.insert(name, value);
    }
    Ok(())
}
