//! The calls to Gravitino's REST API: through the process's one side-call client
//! (net/outbound.rs: its roots, `[outbound]`'s egress proxy, `gravitino.ca_file` trusted besides),
//! the credential of `gravitino.auth` on every call, and an answer read as JSON only when it says
//! success.

use super::error::SourceError;
use crate::config::{Gravitino, GravitinoAuth};
use crate::net::outbound::Outbound;
use base64::Engine;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::de::DeserializeOwned;
use std::time::{Duration, Instant};

/// The largest answer read: a metalake's lists of 10,000 tables and more (docs/gravitino-source.md).
const MAX_ANSWER: usize = 256 << 20;

/// Gravitino's REST API v1 media type.
const ACCEPT: &str = "application/vnd.gravitino.v1+json";

/// What a path segment keeps unencoded (RFC 3986 unreserved).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// A path segment, percent-encoded.
pub fn segment(s: &str) -> String {
    utf8_percent_encode(s, SEGMENT).to_string()
}

/// A client of one metalake's API.
pub struct Api {
    outbound: Outbound,
    /// `{url}/api/metalakes/{metalake}`.
    base: String,
    config: Gravitino,
    /// The token endpoint's client (`gravitino.oauth2.ca_file` trusted besides, else the API's).
    token_client: Option<Outbound>,
    /// An OAuth2 token and when it is to be replaced; held while one is fetched, so the calls
    /// in flight wait for that one instead of each asking the token endpoint.
    token: tokio::sync::Mutex<Option<(String, Instant)>>,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // not the token
        f.debug_struct("Api").field("base", &self.base).finish_non_exhaustive()
    }
}

impl Api {
    pub fn new(config: &Gravitino) -> Result<Self, SourceError> {
        let setup = |e: crate::net::outbound::OutboundError| SourceError::Setup(e.to_string());
        let shared = crate::net::outbound::shared().map_err(setup)?;
        let outbound = match config.ca_file.as_deref() {
            Some(ca) => shared.with_ca(ca).map_err(setup)?,
            None => shared.clone(),
        };
        let token_client = if config.auth == GravitinoAuth::OAuth2 {
            match config.oauth2.as_ref().and_then(|o| o.ca_file.as_deref()) {
                Some(ca) => Some(shared.with_ca(ca).map_err(setup)?),
                None => Some(outbound.clone()),
            }
        } else {
            None
        };
        let base = format!("{}/api/metalakes/{}", config.url.trim_end_matches('/'), segment(&config.metalake));
        Ok(Self { outbound, base, config: config.clone(), token_client, token: tokio::sync::Mutex::new(None) })
    }

    /// GETs `{base}{path}` (`path` starts with `/` and is already encoded) and reads its JSON;
    /// `Ok(None)` on a 404 when `missing_ok`.
    pub async fn get<T: DeserializeOwned>(&self, path: &str, missing_ok: bool) -> Result<Option<T>, SourceError> {
        let url = format!("{}{path}", self.base);
        let authorization = self.authorization().await?;
        let unreachable = |message: String| SourceError::Unreachable { url: url.clone(), message };
        let request = (self.outbound.client().get(&url))
            .header(reqwest::header::ACCEPT, ACCEPT)
            .header(reqwest::header::AUTHORIZATION, authorization)
            .timeout(Duration::from_millis(self.config.timeout_ms))
            .build()
            .map_err(|e| unreachable(crate::core::text::error_chain(&e)))?;
        let response = self.outbound.send(request).await.map_err(|e| unreachable(e.to_string()))?;
        let status = response.status();
        let bytes = crate::net::outbound::read(response, MAX_ANSWER).await.map_err(unreachable)?;
        if status == reqwest::StatusCode::NOT_FOUND && missing_ok {
            return Ok(None);
        }
        let envelope = serde_json::from_slice::<crate::core::policy::gravitino::wire::Envelope>(&bytes).ok();
        if !status.is_success() || envelope.as_ref().is_some_and(|e| e.code != 0) {
            let (kind, message) = envelope.map(|e| (e.kind, e.message)).unwrap_or_default();
            return Err(SourceError::Refused {
                url,
                status: status.as_u16(),
                message: [kind, message].into_iter().flatten().collect::<Vec<_>>().join(": "),
            });
        }
        serde_json::from_slice(&bytes).map(Some).map_err(|e| SourceError::Answer { url, message: e.to_string() })
    }

    /// The `Authorization` value of `gravitino.auth`.
    async fn authorization(&self) -> Result<String, SourceError> {
        match self.config.auth {
            GravitinoAuth::Simple => {
                // Gravitino's simple authenticator takes the user from Basic credentials and checks
                // no password; its own clients send `user:dummy`.
                let user = self.config.user.as_deref().unwrap_or_default();
                let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:dummy"));
                Ok(format!("Basic {encoded}"))
            }
            GravitinoAuth::Bearer => {
                let file = self.config.token_file.as_deref().unwrap_or_else(|| std::path::Path::new(""));
                let token = std::fs::read_to_string(file)
                    .map_err(|e| SourceError::Token(format!("cannot read `{}`: {e}", file.display())))?;
                Ok(format!("Bearer {}", token.trim()))
            }
            GravitinoAuth::OAuth2 => Ok(format!("Bearer {}", self.oauth2_token().await?)),
        }
    }

    /// A client-credentials token (net/oauth2.rs's request), kept until a minute (or a tenth of
    /// its life) before it expires.
    async fn oauth2_token(&self) -> Result<String, SourceError> {
        let mut held = self.token.lock().await;
        let now = Instant::now();
        if let Some((token, until)) = held.as_ref()
            && now < *until
        {
            return Ok(token.clone());
        }
        let (Some(oauth2), Some(client)) = (&self.config.oauth2, &self.token_client) else {
            return Err(SourceError::Token("no `[gravitino.oauth2]`".into()));
        };
        let timeout = Duration::from_millis(self.config.timeout_ms);
        let granted = crate::net::oauth2::client_credentials(client, oauth2, timeout)
            .await
            .map_err(|e| SourceError::Token(e.to_string()))?;
        let life = Duration::from_secs(granted.expires_in.unwrap_or(300));
        let until = now + life.saturating_sub((life / 10).min(Duration::from_secs(60)));
        *held = Some((granted.access_token.clone(), until));
        Ok(granted.access_token)
    }
}
