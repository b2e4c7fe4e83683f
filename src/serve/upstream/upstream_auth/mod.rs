//! The service credential of one upstream (docs/design.md §6): none (the caller's own is passed
//! through), a static `Authorization`, an OAuth2 client-credentials token, or a SigV4 signature.
//! It belongs to that upstream's client ([`crate::serve::upstream::forward::Upstream`]), which applies it
//! to every request it sends, so that each upstream can have its own.

mod error;
pub mod oauth2;
pub mod sigv4;

pub use error::{AuthError, Status};

use crate::config::{Upstream as UpstreamConfig, UpstreamAuth};
use crate::core::clock::Clock;
use crate::ops::metrics::UpstreamAuthMetrics;
use arc_swap::ArcSwap;
use http::HeaderValue;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The credential one upstream gets.
#[derive(Debug)]
pub enum ServiceAuth {
    /// The caller's `Authorization` goes upstream (set when the request is built).
    Passthrough,
    Static(StaticValue),
    OAuth2(oauth2::TokenSource),
    SigV4(sigv4::Signer),
}

impl ServiceAuth {
    /// The credential `config` asks for; times are read from `clock`, and its metrics kept in
    /// `metrics`.
    pub fn from_config(config: &UpstreamConfig, clock: Clock, metrics: UpstreamAuthMetrics) -> Result<Self, AuthError> {
        let missing = |section: &str| AuthError::Config(format!("`[upstream.{section}]` is required"));
        Ok(match config.auth {
            UpstreamAuth::Passthrough => Self::Passthrough,
            UpstreamAuth::Service => Self::Static(StaticValue::new(
                config.service_authorization.as_deref().unwrap_or_default(),
                config.service_authorization_file.clone(),
            )?),
            UpstreamAuth::OAuth2 => {
                let oauth2 = config.oauth2.as_ref().ok_or_else(|| missing("oauth2"))?;
                let timeout = Duration::from_millis(config.response_timeout_ms.max(config.connect_timeout_ms));
                Self::OAuth2(oauth2::TokenSource::new(oauth2, timeout, clock, metrics)?)
            }
            UpstreamAuth::SigV4 => {
                let sigv4 = config.sigv4.as_ref().ok_or_else(|| missing("sigv4"))?;
                Self::SigV4(sigv4::Signer::new(sigv4, clock, metrics))
            }
        })
    }

    /// The token's or credentials' state; `None` for the modes that hold neither.
    pub fn status(&self) -> Option<Status> {
        match self {
            Self::OAuth2(source) => Some(source.status()),
            Self::SigV4(signer) => Some(signer.status()),
            Self::Passthrough | Self::Static(_) => None,
        }
    }

    /// Whether requests can be authenticated now: a mode that holds a token or credentials is
    /// ready once it holds one.
    pub fn ready(&self) -> bool {
        self.status().is_none_or(|s| s.held)
    }

    pub fn metrics(&self) -> Option<&UpstreamAuthMetrics> {
        match self {
            Self::OAuth2(source) => Some(&source.metrics),
            Self::SigV4(signer) => Some(&signer.metrics),
            Self::Passthrough | Self::Static(_) => None,
        }
    }

    /// Whether every request body must be held (hashed into a signature) rather than streamed.
    pub fn needs_bodies(&self) -> bool {
        matches!(self, Self::SigV4(_))
    }

    /// Reads a static value's file again (a reload); `Ok(true)` when the value changed. The
    /// other modes have nothing to re-read: OAuth2 reads its client secret at every fetch.
    pub fn reread(&self) -> Result<bool, AuthError> {
        match self {
            Self::Static(value) => value.reread(),
            Self::Passthrough | Self::OAuth2(_) | Self::SigV4(_) => Ok(false),
        }
    }
}

/// A static `Authorization` value. One read from `service_authorization_file` is read again on
/// every reload (docs/design.md §6), so a rotated Secret reaches the upstream without a restart;
/// an inline value stays what the config said.
#[derive(Debug)]
pub struct StaticValue {
    value: ArcSwap<HeaderValue>,
    file: Option<PathBuf>,
}

impl StaticValue {
    fn new(value: &str, file: Option<PathBuf>) -> Result<Self, AuthError> {
        Ok(Self { value: ArcSwap::from_pointee(header(value)?), file })
    }

    /// The value to send now.
    pub fn current(&self) -> HeaderValue {
        HeaderValue::clone(&self.value.load())
    }

    /// Reads the file again; `Ok(true)` when its value changed. On an error the value in use
    /// stays: a Secret half-written during rotation must not cut the upstream off.
    pub fn reread(&self) -> Result<bool, AuthError> {
        let Some(file) = &self.file else { return Ok(false) };
        let text = std::fs::read_to_string(file).map_err(|e| {
            AuthError::Config(format!("cannot read `upstream.service_authorization_file` `{}`: {e}", file.display()))
        })?;
        let value = header(text.trim())?;
        if **self.value.load() == value {
            return Ok(false);
        }
        self.value.store(Arc::new(value));
        Ok(true)
    }
}

/// `value` as a header value that is never logged; the error never repeats it.
fn header(value: &str) -> Result<HeaderValue, AuthError> {
    if value.is_empty() {
        return Err(AuthError::Config("`upstream.service_authorization` is empty".into()));
    }
    let mut value = HeaderValue::from_str(value)
        .map_err(|_| AuthError::Config("`upstream.service_authorization` is not a header value".into()))?;
    value.set_sensitive(true);
    Ok(value)
}
