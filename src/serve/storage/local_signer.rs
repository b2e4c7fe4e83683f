//! icegate as the signer (`credentials.signing.signer = "local"`, docs/design.md §8 "Signing without
//! a catalog signer"): an authorized sign request is signed here with SigV4 and icegate's own AWS
//! credentials (the default chain's, or those of `credentials.sts.role_arn`, assumed and renewed
//! before they expire), and never forwarded upstream.

use crate::core::credentials::Minted;
use crate::core::credentials::sign::bind::CONTENT_SHA256;
use crate::core::credentials::sign::headers::HOP_BY_HOP;
use crate::core::iceberg::body::SignRequest;
use crate::serve::storage::aws_chain::{Chain, ChainError};
use crate::serve::storage::sts::{Role, StsClient, StsError};
use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SigningSettings, UriPathNormalizationMode,
    sign,
};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use serde_json::{Map, Value};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use thiserror::Error;

/// The session name of the role's sessions, as CloudTrail shows them.
const SESSION: &str = "icegate-signer";

#[derive(Debug, Error)]
pub enum LocalSignError {
    #[error("icegate has no AWS credentials to sign with: {0}")]
    Credentials(#[from] ChainError),
    #[error("icegate cannot assume its signing role: {0}")]
    Role(#[from] StsError),
    #[error("cannot sign the request: {0}")]
    Sign(String),
    #[error("the local signer is not configured")]
    NotConfigured,
    #[error("cannot build the sign answer: {0}")]
    Build(String),
}

/// The request to sign, as authorized, and the payload hash its signature binds.
#[derive(Clone, Debug)]
pub struct Local {
    pub request: SignRequest,
    /// A batch delete's checked body's hex SHA-256; else `UNSIGNED-PAYLOAD` is signed.
    pub body_sha256: Option<String>,
}

/// icegate's credentials for signing: the AWS default chain's, as `s3-downscope` reads them, or
/// with `credentials.sts.role_arn` the role's, assumed with them.
pub struct LocalSigner {
    chain: RwLock<Arc<Chain>>,
    /// Web identity credentials and the role's are fetched through it.
    sts: Option<StsClient>,
    role: Option<Role>,
    /// The role's credentials while fresh; its lock is held while they are renewed, so
    /// concurrent sign requests wait for one STS call.
    assumed: tokio::sync::Mutex<Option<Arc<Minted>>>,
}

impl std::fmt::Debug for LocalSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalSigner").finish_non_exhaustive()
    }
}

impl LocalSigner {
    /// With the process environment's chain; `sts` as configured for `s3-downscope`, whose
    /// `role_arn`, when set, is the role icegate signs as.
    pub fn new(config: &crate::config::credentials::Sts) -> Self {
        let sts = StsClient::new(config.endpoint.as_deref(), &config.region).ok();
        let role = config.role_arn.clone().filter(|r| !r.is_empty()).map(|arn| Role::new(config, arn));
        Self {
            chain: RwLock::new(Arc::new(Chain::from_process_env())),
            sts,
            role,
            assumed: tokio::sync::Mutex::new(None),
        }
    }

    /// Reads its credentials from `chain` from now on (tests give variables rather than the
    /// process's, which parallel tests share).
    pub fn use_chain(&self, chain: Chain) {
        *self.chain.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(chain);
    }

    async fn credentials(&self) -> Result<Credentials, LocalSignError> {
        let chain = Arc::clone(&self.chain.read().unwrap_or_else(PoisonError::into_inner));
        let sts = match &self.sts {
            Some(sts) => sts.clone(),
            // the configured endpoint did not parse: the role cannot be assumed without it
            None if self.role.is_some() => return Err(StsError::Config("`credentials.sts.endpoint`".into()).into()),
            None => StsClient::new(None, "us-east-1").map_err(|e| LocalSignError::Sign(e.to_string()))?,
        };
        let Some(role) = &self.role else { return Ok(chain.credentials(&sts).await?) };
        let mut held = self.assumed.lock().await;
        if let Some(minted) = held.as_ref().filter(|m| role.fresh(m, sts.now_ms())) {
            return Ok(session_credentials(minted));
        }
        let base = chain.credentials(&sts).await?;
        let minted = Arc::new(role.assume(&sts, &base, SESSION, &[]).await?);
        tracing::debug!(role = role.arn(), expiration_ms = minted.expiration_ms, "assumed the signing role");
        let credentials = session_credentials(&minted);
        *held = Some(minted);
        Ok(credentials)
    }

    /// The spec's `RemoteSignResponse` for `local`: its `uri` and every header it sent, with
    /// the signature's headers set.
    pub async fn answer(&self, local: &Local) -> Result<Vec<u8>, LocalSignError> {
        let credentials = self.credentials().await?;
        signed_answer(local, &credentials, SystemTime::now())
    }
}

/// The role's temporary credentials, as the signer takes them.
fn session_credentials(minted: &Minted) -> Credentials {
    let expiry = u64::try_from(minted.expiration_ms).ok().map(|ms| UNIX_EPOCH + Duration::from_millis(ms));
    Credentials::new(
        minted.access_key_id.clone(),
        minted.secret_access_key.clone(),
        Some(minted.session_token.clone()),
        expiry,
        "icegate-signing-role",
    )
}

/// The answer to `local` signed with `credentials` at `time`.
pub fn signed_answer(local: &Local, credentials: &Credentials, time: SystemTime) -> Result<Vec<u8>, LocalSignError> {
    let request = &local.request;
    let fail = |e: &dyn std::fmt::Display| LocalSignError::Sign(e.to_string());
    // S3 signs the path as sent: no normalization, no double encoding
    let mut settings = SigningSettings::default();
    settings.percent_encoding_mode = PercentEncodingMode::Single;
    settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
    settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    // What HTTP stacks and proxies add, drop or change on the way (the AWS Java SDK and botocore
    // never sign them), besides aws-sigv4's own exclusions: `Expect` signed made moto refuse
    // every PutObject botocore sent. A catalog's signer is never sent them either.
    if let Some(excluded) = &mut settings.excluded_headers {
        excluded.extend(HOP_BY_HOP.iter().map(|h| std::borrow::Cow::Borrowed(*h)));
    }
    let identity = Identity::from(credentials.clone());
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(&request.region)
        .name("s3")
        .time(time)
        .settings(settings)
        .build()
        .map_err(|e| fail(&e))?
        .into();
    // the caller's own payload hash is replaced by the one icegate decides
    let kept: Vec<(String, String)> = request
        .headers
        .iter()
        .filter(|(name, _)| !name.eq_ignore_ascii_case(CONTENT_SHA256))
        .map(|(name, values)| (name.to_ascii_lowercase(), values.join(",")))
        .collect();
    let body = match &local.body_sha256 {
        Some(sha256) => SignableBody::Precomputed(sha256.clone()),
        None => SignableBody::UnsignedPayload,
    };
    let signable = SignableRequest::new(
        &request.method,
        request.uri.as_str(),
        kept.iter().map(|(n, v)| (n.as_str(), v.as_str())),
        body,
    )
    .map_err(|e| fail(&e))?;
    let (instructions, _) = sign(signable, &params).map_err(|e| fail(&e))?.into_parts();
    let mut headers = Map::new();
    for (name, value) in &kept {
        headers.insert(name.clone(), Value::Array(vec![Value::String(value.clone())]));
    }
    for (name, value) in instructions.headers() {
        headers.retain(|n, _| !n.eq_ignore_ascii_case(name));
        headers.insert(name.to_owned(), Value::Array(vec![Value::String(value.to_owned())]));
    }
    let answer = serde_json::json!({"uri": request.uri, "headers": headers});
    serde_json::to_vec(&answer).map_err(|e| fail(&e))
}

/// The served answer to an authorized sign request icegate signs itself; like a forwarded
/// one's, only a read's answer may be cached by the client.
pub async fn respond(
    signer: Option<&LocalSigner>,
    local: &Local,
    cacheable: bool,
) -> Result<http::Response<bytes::Bytes>, LocalSignError> {
    let signer = signer.ok_or(LocalSignError::NotConfigured)?;
    let bytes = signer.answer(local).await?;
    let mut builder = http::Response::builder()
        .status(http::StatusCode::OK)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::CONTENT_LENGTH, bytes.len());
    if !cacheable {
        builder = builder.header(http::header::CACHE_CONTROL, "no-store");
    }
    builder.body(bytes::Bytes::from(bytes)).map_err(|e| LocalSignError::Build(e.to_string()))
}
