//! How an S3 endpoint reads a request URL (docs/design.md §8): the bucket, key and query parameters a
//! sign request's `uri` names, read as the endpoint it names reads them — every AWS S3 host form
//! by AWS's rules, any other endpoint as the table's `s3.endpoint` or icegate's configuration
//! says — and refused whenever icegate cannot be certain of that reading.

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum MapError {
    #[error("`{0}` is not an http or https URL")]
    NotUrl(String),
    #[error("the host `{0}` is not an S3 endpoint icegate can map to a bucket")]
    UnknownHost(String),
    #[error("`{0}` names no bucket")]
    NoBucket(String),
    #[error("`{0}` is not valid percent-encoded UTF-8")]
    BadEncoding(String),
    #[error("the query parameter `{0}` is repeated")]
    RepeatedParameter(String),
    #[error("a raw `+` in the query reads as `+` on some stores and as a space on others")]
    AmbiguousPlus,
}

/// The DNS suffixes of the AWS partitions (aws, aws-cn, aws-us-gov shares `amazonaws.com`,
/// aws-iso, aws-iso-b, aws-iso-e, aws-iso-f, aws-eusc). A host under one of them is read by
/// AWS's rules only, never as a configured endpoint.
const AWS_SUFFIXES: [&str; 7] = [
    "amazonaws.com",
    "amazonaws.com.cn",
    "c2s.ic.gov",
    "sc2s.sgov.gov",
    "cloud.adc-e.uk",
    "csp.hci.ic.gov",
    "amazonaws.eu",
];

/// The parameters of `Content-Disposition`-style overrides a GetObject or HeadObject may carry.
pub const RESPONSE_OVERRIDES: [&str; 6] = [
    "response-cache-control",
    "response-content-disposition",
    "response-content-encoding",
    "response-content-language",
    "response-content-type",
    "response-expires",
];

/// Scheme, host (lower case, without a trailing dot) and port of a URL: what says which server
/// a request reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub scheme: &'static str,
    pub host: String,
    pub port: u16,
}

impl Origin {
    /// Whether a `Host` header value names this origin (a default port may be left out).
    pub fn is_host(&self, value: &str) -> bool {
        let Ok(authority) = value.trim().parse::<http::uri::Authority>() else { return false };
        let host = authority.host().to_ascii_lowercase();
        let default_port = if self.scheme == "https" { 443 } else { 80 };
        !authority.as_str().contains('@')
            && host.strip_suffix('.').unwrap_or(&host) == self.host
            && authority.port_u16().unwrap_or(default_port) == self.port
    }

    /// `None` for anything but an absolute http(s) URL without user information.
    pub fn of(uri: &http::Uri) -> Option<Self> {
        let (scheme, default_port) = match uri.scheme_str()?.to_ascii_lowercase().as_str() {
            "http" => ("http", 80),
            "https" => ("https", 443),
            _ => return None,
        };
        let authority = uri.authority()?;
        if authority.as_str().contains('@') {
            return None;
        }
        let host = authority.host().to_ascii_lowercase();
        // `example.com.` is the same host as `example.com` (a fully qualified name).
        let host = host.strip_suffix('.').unwrap_or(&host);
        if host.is_empty() || host.ends_with('.') {
            return None;
        }
        Some(Self { scheme, host: host.to_owned(), port: authority.port_u16().unwrap_or(default_port) })
    }

    /// `scheme://host[:port]` with no path, query or user information.
    pub fn parse(text: &str) -> Option<Self> {
        let uri: http::Uri = text.trim().parse().ok()?;
        let bare = matches!(uri.path(), "" | "/") && uri.query().is_none();
        Self::of(&uri).filter(|_| bare)
    }
}

/// An S3-compatible endpoint other than AWS's, and how it addresses buckets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    origin: Origin,
    /// The path in front of the bucket or key, without a trailing `/` (usually empty).
    base_path: String,
    /// Only `host/bucket/key`; otherwise `bucket.host/key` is read as virtual-hosted too.
    path_style: bool,
}

impl Endpoint {
    /// `url` as `s3.endpoint` or the configuration gives it; `None` when it is not an http(s) URL.
    pub fn parse(url: &str, path_style: bool) -> Option<Self> {
        let uri: http::Uri = url.trim().parse().ok()?;
        if uri.query().is_some() {
            return None;
        }
        let origin = Origin::of(&uri)?;
        Some(Self { origin, base_path: uri.path().trim_end_matches('/').to_owned(), path_style })
    }
}

/// What a request URL reaches on S3.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct S3Target {
    /// The server the URL names.
    pub origin: Origin,
    pub bucket: String,
    /// Decoded; empty for a bucket request.
    pub key: String,
    /// Decoded names and values, in order, each name once.
    pub query: Vec<(String, String)>,
}

impl S3Target {
    pub fn has(&self, name: &str) -> bool {
        self.query.iter().any(|(n, _)| n == name)
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Maps `uri` to what it reaches: AWS hosts by AWS's rules, other hosts by the first of
/// `endpoints` that names them.
pub fn map<'a>(uri: &str, endpoints: impl IntoIterator<Item = &'a Endpoint>) -> Result<S3Target, MapError> {
    let not_url = || MapError::NotUrl(uri.to_owned());
    // A fragment is never sent, but a signer could read it into the path.
    if uri.contains('#') {
        return Err(not_url());
    }
    let parsed: http::Uri = uri.parse().map_err(|_| not_url())?;
    let origin = Origin::of(&parsed).ok_or_else(not_url)?;
    let query = parameters(parsed.query().unwrap_or_default())?;
    let path = parsed.path();
    let unknown = || MapError::UnknownHost(origin.host.clone());
    let (bucket, raw_key) = if is_aws(&origin.host) {
        match aws_bucket(&origin.host).ok_or_else(unknown)? {
            Some(bucket) => (bucket, path.strip_prefix('/').unwrap_or(path)),
            None => path_style(path),
        }
    } else {
        custom(&origin, path, endpoints).flatten().ok_or_else(unknown)?
    };
    if !valid_bucket(&bucket) {
        return Err(MapError::NoBucket(uri.to_owned()));
    }
    let key = decode(raw_key).ok_or_else(|| MapError::BadEncoding(uri.to_owned()))?;
    Ok(S3Target { origin, bucket, key, query })
}

fn is_aws(host: &str) -> bool {
    AWS_SUFFIXES.iter().any(|s| host == *s || host.strip_suffix(s).is_some_and(|r| r.ends_with('.')))
}

/// The bucket an AWS S3 host names (`Some(None)`: the host is path-style), or `None` when the
/// host is not a form icegate reads with certainty (access points, S3 Express, website and
/// control endpoints, PrivateLink, anything unknown).
fn aws_bucket(host: &str) -> Option<Option<String>> {
    let (rest, suffix) =
        AWS_SUFFIXES.iter().find_map(|s| host.strip_suffix(s)?.strip_suffix('.').map(|rest| (rest, *s)))?;
    let labels: Vec<&str> = rest.split('.').collect();
    let n = labels.len();
    // the label `i` places from the right (1 is the last)
    let from_right = |i: usize| n.checked_sub(i).and_then(|at| labels.get(at)).copied();
    let commercial = suffix == "amazonaws.com";
    let service = |label: &str| label == "s3" || label == "s3-fips";
    let last = from_right(1)?;
    // How many labels from the right name the endpoint; what is left of them is the bucket.
    let (endpoint, virtual_only) = if is_region(last) {
        if from_right(2) == Some("dualstack") && from_right(3).is_some_and(service) {
            (3, false)
        } else if from_right(2).is_some_and(service) {
            (2, false)
        } else {
            return None;
        }
    } else if commercial && (last == "s3" || last == "s3-external-1" || legacy_regional(last)) {
        (1, false)
    } else if commercial && last == "s3-accelerate" {
        (1, true)
    } else if commercial && last == "dualstack" && from_right(2) == Some("s3-accelerate") {
        (2, true)
    } else {
        return None;
    };
    let bucket = n.checked_sub(endpoint).and_then(|k| labels.get(..k))?;
    match (bucket.is_empty(), virtual_only) {
        (true, true) => None,
        (true, false) => Some(None),
        (false, _) => Some(Some(bucket.join("."))),
    }
}

/// `us-east-1`, `us-gov-west-1`, `cn-north-1`, `us-isob-east-1`, `eusc-de-east-1`: letters in
/// two or more groups, then a number.
fn is_region(label: &str) -> bool {
    let Some((words, number)) = label.rsplit_once('-') else { return false };
    !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && words.split('-').count() >= 2
        && words.split('-').all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()))
}

/// The legacy `s3-us-west-2` (and `s3-fips-us-gov-west-1`) forms; not the website endpoints.
fn legacy_regional(label: &str) -> bool {
    label.strip_prefix("s3-").is_some_and(|region| is_region(region) && !region.starts_with("website-"))
}

/// `/bucket/key`: the bucket and the still-encoded key.
fn path_style(path: &str) -> (String, &str) {
    let rest = path.strip_prefix('/').unwrap_or(path);
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    (bucket.to_owned(), key)
}

/// The first endpoint whose host is `origin`'s or a parent of it decides (`Some(None)`: it
/// refuses): its own host is path-style; a subdomain is virtual-hosted unless the endpoint is
/// path-style only (or an IP address, which has no subdomains).
fn custom<'a, 'p>(
    origin: &Origin,
    path: &'p str,
    endpoints: impl IntoIterator<Item = &'a Endpoint>,
) -> Option<Option<(String, &'p str)>> {
    endpoints.into_iter().find_map(|e| {
        if e.origin.scheme != origin.scheme || e.origin.port != origin.port {
            return None;
        }
        let bucket = if origin.host == e.origin.host {
            None
        } else {
            let sub = origin.host.strip_suffix(e.origin.host.as_str())?.strip_suffix('.')?;
            Some(sub.to_owned())
        };
        Some(e.read(bucket, path))
    })
}

impl Endpoint {
    /// The bucket and still-encoded key of `path` on this endpoint; `bucket` is the subdomain
    /// the request names, if any.
    fn read<'p>(&self, bucket: Option<String>, path: &'p str) -> Option<(String, &'p str)> {
        if bucket.is_some() && (self.path_style || is_ip(&self.origin.host)) {
            return None;
        }
        let rest = path.strip_prefix(self.base_path.as_str())?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        Some(match bucket {
            Some(bucket) => (bucket, rest.strip_prefix('/').unwrap_or(rest)),
            None => path_style(rest),
        })
    }
}

fn is_ip(host: &str) -> bool {
    host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>().is_ok()
}

/// Bucket names as any S3 store accepts them (legacy path-style names included): never empty,
/// never an escape, a `/` or a dot segment.
fn valid_bucket(bucket: &str) -> bool {
    !bucket.is_empty()
        && bucket.len() <= 255
        && bucket.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        && bucket.split('.').all(|label| !label.is_empty())
}

/// The query's parameters, decoded. A repeated name or a raw `+` could be read differently by
/// the store, so neither is accepted.
fn parameters(raw: &str) -> Result<Vec<(String, String)>, MapError> {
    if raw.contains('+') {
        return Err(MapError::AmbiguousPlus);
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for part in raw.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        let bad = || MapError::BadEncoding(part.to_owned());
        let (name, value) = (decode(name).ok_or_else(bad)?, decode(value).ok_or_else(bad)?);
        if out.iter().any(|(n, _)| *n == name) {
            return Err(MapError::RepeatedParameter(name));
        }
        out.push((name, value));
    }
    Ok(out)
}

/// Percent-decodes `text`; a `%` that does not start an escape is refused (stores differ on it).
fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let escapes_ok = text
        .match_indices('%')
        .all(|(at, _)| bytes.get(at + 1..at + 3).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)));
    if !escapes_ok {
        return None;
    }
    percent_encoding::percent_decode_str(text).decode_utf8().ok().map(|s| s.into_owned())
}

#[cfg(test)]
mod tests;
