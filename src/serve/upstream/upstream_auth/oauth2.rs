//! `upstream.auth = "oauth2"`: one upstream's client-credentials token, kept until shortly
//! before it expires and fetched by one request however many wait for it (docs/design.md §6).
//! Neither the client secret nor the token is ever written to a log or an error message.

use super::error::{AuthError, Status};
use crate::config::OAuth2;
use crate::core::clock::Clock;
use crate::net::outbound::Outbound;
use crate::ops::metrics::UpstreamAuthMetrics;
use http::HeaderValue;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// After a failed fetch, requests get the same error for this long rather than each asking the
/// token endpoint again (while a held token is still valid, it keeps serving).
const FAILURE_BACKOFF: Duration = Duration::from_secs(1);
/// At most this long before its expiry a token is replaced.
const MAX_MARGIN: Duration = Duration::from_secs(60);

/// A token and when it is to be replaced.
pub struct Token {
    /// `Bearer <token>`, marked sensitive so that no `Debug` of a header map shows it.
    pub header: HeaderValue,
    /// Counts the tokens fetched: a request that saw a 401 with token `n` asks for one after `n`.
    pub generation: u64,
    refresh_at: Option<Instant>,
    expires_at: Option<Instant>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token").field("generation", &self.generation).finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    token: Option<Arc<Token>>,
    generation: u64,
    failed: Option<(Instant, String)>,
}

/// The token source of one upstream.
pub struct TokenSource {
    config: OAuth2,
    endpoint: http::Uri,
    client: Outbound,
    timeout: Duration,
    clock: Clock,
    state: RwLock<State>,
    /// Held by the one request that fetches; the others wait on it, then take what it fetched.
    fetching: tokio::sync::Mutex<()>,
    pub metrics: UpstreamAuthMetrics,
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSource").field("endpoint", &self.endpoint).finish_non_exhaustive()
    }
}

impl TokenSource {
    pub fn new(
        config: &OAuth2,
        timeout: Duration,
        clock: Clock,
        metrics: UpstreamAuthMetrics,
    ) -> Result<Self, AuthError> {
        let endpoint: http::Uri = config
            .token_endpoint
            .parse()
            .map_err(|_| AuthError::Config(format!("`{}` is not a url", config.token_endpoint)))?;
        let shared = crate::net::outbound::shared().map_err(|e| AuthError::Config(e.to_string()))?;
        let client = match config.ca_file.as_deref() {
            Some(ca) => shared.with_ca(ca).map_err(|e| AuthError::Config(e.to_string()))?,
            None => shared,
        };
        Ok(Self {
            config: config.clone(),
            endpoint,
            client,
            timeout,
            clock,
            state: RwLock::new(State::default()),
            fetching: tokio::sync::Mutex::new(()),
            metrics,
        })
    }

    /// A token not due for replacement: the held one, else one fetched now.
    pub async fn token(&self) -> Result<Arc<Token>, AuthError> {
        self.token_after(0).await
    }

    /// A token later than generation `stale` (which the upstream refused), or not due for
    /// replacement when `stale` is 0.
    pub async fn token_after(&self, stale: u64) -> Result<Arc<Token>, AuthError> {
        if let Some(t) = self.usable(stale) {
            return Ok(t);
        }
        let _fetching = self.fetching.lock().await;
        // whoever held the lock before may have fetched one
        if let Some(t) = self.usable(stale) {
            return Ok(t);
        }
        let now = self.clock.now();
        let failed = self.read(|s| s.failed.clone());
        if let Some((at, message)) = failed
            && now.saturating_duration_since(at) < FAILURE_BACKOFF
        {
            return self.still_valid(stale).ok_or(AuthError::Token(message));
        }
        match self.fetch().await {
            Ok(token) => Ok(token),
            Err(message) => {
                tracing::warn!(endpoint = %self.endpoint, error = %message, "cannot get an upstream token");
                self.metrics.refreshed(false);
                self.write(|s| s.failed = Some((self.clock.now(), message.clone())));
                let valid = self.still_valid(stale);
                if valid.is_none() {
                    self.metrics.dropped();
                }
                valid.ok_or(AuthError::Token(message))
            }
        }
    }

    /// The upstream refused token `generation`: the next request fetches another.
    pub fn forget(&self, generation: u64) {
        self.write(|s| {
            if s.token.as_ref().is_some_and(|t| t.generation == generation) {
                s.token = None;
                self.metrics.dropped();
            }
        });
    }

    fn usable(&self, stale: u64) -> Option<Arc<Token>> {
        let now = self.clock.now();
        self.read(|s| s.token.clone()).filter(|t| t.generation > stale && t.refresh_at.is_none_or(|at| now < at))
    }

    /// A token past its refresh time but not expired, when no new one could be fetched.
    fn still_valid(&self, stale: u64) -> Option<Arc<Token>> {
        let now = self.clock.now();
        self.read(|s| s.token.clone()).filter(|t| t.generation > stale && t.expires_at.is_none_or(|at| now < at))
    }

    fn read<T>(&self, f: impl FnOnce(&State) -> T) -> T {
        f(&self.state.read().unwrap_or_else(PoisonError::into_inner))
    }

    fn write(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.state.write().unwrap_or_else(PoisonError::into_inner));
    }

    async fn fetch(&self) -> Result<Arc<Token>, String> {
        // counted from when the request was sent, which the grant cannot predate
        let started = self.clock.now();
        let granted = crate::net::oauth2::client_credentials(&self.client, &self.config, self.timeout)
            .await
            .map_err(|e| e.to_string())?;
        let mut header = HeaderValue::try_from(format!("Bearer {}", granted.access_token))
            .map_err(|_| "token endpoint's `access_token` cannot be sent in a header".to_owned())?;
        header.set_sensitive(true);
        let (refresh_at, expires_at) = match granted.expires_in {
            Some(seconds) => {
                let lifetime = Duration::from_secs(seconds);
                let expires = started.checked_add(lifetime);
                let margin = MAX_MARGIN.min(lifetime / 5);
                (expires.and_then(|e| e.checked_sub(margin)), expires)
            }
            None => (None, None),
        };
        let token = self.install(header, refresh_at, expires_at);
        tracing::debug!(endpoint = %self.endpoint, expires_in = granted.expires_in, generation = token.generation, "obtained an upstream token");
        self.metrics.refreshed(true);
        self.metrics.held(granted.expires_in.map(|s| self.clock.system_now() + Duration::from_secs(s)));
        Ok(token)
    }

    fn install(&self, header: HeaderValue, refresh_at: Option<Instant>, expires_at: Option<Instant>) -> Arc<Token> {
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        state.generation += 1;
        let token = Arc::new(Token { header, generation: state.generation, refresh_at, expires_at });
        state.token = Some(Arc::clone(&token));
        state.failed = None;
        token
    }

    /// What `/readyz` says of the token.
    pub fn status(&self) -> Status {
        let now = self.clock.now();
        let (token, failed) = self.read(|s| (s.token.clone(), s.failed.as_ref().map(|(_, m)| m.clone())));
        let valid = token.as_ref().filter(|t| t.expires_at.is_none_or(|at| now < at));
        Status {
            mode: "oauth2",
            held: valid.is_some(),
            expires_in: valid.and_then(|t| t.expires_at).map(|at| at.saturating_duration_since(now).as_secs()),
            last_error: failed,
        }
    }
}
