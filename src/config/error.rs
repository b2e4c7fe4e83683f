//! Why a configuration cannot be used.

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read config file `{path}`: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("invalid config file `{path}`: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("no upstream: set `--upstream URL` or `upstream.url`")]
    NoUpstream,
    #[error("no policy: set `--policy PATH` or `policy`")]
    NoPolicy,
    #[error("invalid upstream url `{0}`: expected `http://host:port[/base]` or `https://...`")]
    BadUpstream(String),
    #[error("invalid `{key}`: {message}")]
    Invalid { key: &'static str, message: String },
    /// A setting of one `[[upstreams]]` entry.
    #[error("invalid `{key}` of upstream `{name}`: {message}")]
    InvalidUpstream { name: String, key: String, message: String },
}
