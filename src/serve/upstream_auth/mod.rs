//! The service credential of one upstream (docs/design.md §6): none (the caller's own is passed
//! through), a static `Authorization`, an OAuth2 client-credentials token, or a SigV4 signature.
//! It belongs to that upstream's client ([`crate::serve::forward::Upstream`]), which applies it
//! to every request it sends, so that each upstream can have its own.

mod error;
pub mod oauth2;
pub mod sigv4;

pub use error::{AuthError, Status};

use crate::config::{Upstream as UpstreamConfig, UpstreamAuth};
use crate::core::clock::Clock;
use crate::ops::metrics::UpstreamAuthMetrics;
use http::HeaderValue;
use std::time::Duration;

/// The credential one upstream gets.
#[derive(Debug)]
pub enum ServiceAuth {
    /// The caller's `Authorization` goes upstream (set when the request is built).
    Passthrough,
    Static(HeaderValue),
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
            UpstreamAuth::Service => {
                let value = config.service_authorization.as_deref().unwrap_or_default();
                let mut value = HeaderValue::from_str(value)
                    .map_err(|_| AuthError::Config("`upstream.service_authorization` is not a header value".into()))?;
                value.set_sensitive(true);
                Self::Static(value)
            }
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
}
