//! Stage `rewrite`: what icegate changes in an upstream response before the caller sees it —
//! lists filtered to what the caller may see (fetching further pages to fill a short one) with
//! their page tokens sealed, `stack` traces removed from errors, `no-store` on responses that
//! may carry credentials.

use crate::core::credentials::clean::{names_read_header, read_headers};
use crate::core::iceberg::list::{self, Entry, ListError, ListKind};
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use thiserror::Error;

/// The most of an upstream body icegate buffers to rewrite it.
pub const MAX_REWRITE_BYTES: usize = 64 * 1024 * 1024;
/// Pages followed when the caller sent no `pageSize` (the whole list), as a last bound.
pub const MAX_PAGES_WITHOUT_SIZE: usize = 10_000;

#[derive(Debug, Error)]
pub enum RewriteError {
    #[error("upstream response could not be read: {0}")]
    Read(String),
    #[error(transparent)]
    List(#[from] ListError),
    #[error("upstream answered a follow-up page with status {0}")]
    FollowUp(u16),
}

/// Buffers an upstream body, bounded.
pub async fn collect(body: Incoming) -> Result<Bytes, RewriteError> {
    Limited::new(body, MAX_REWRITE_BYTES)
        .collect()
        .await
        .map(|c| c.to_bytes())
        .map_err(|e| RewriteError::Read(e.to_string()))
}

/// An upstream error body without its `stack`, at any depth (JSON errors only), and whether it
/// was replaced: a non-empty body that is not JSON icegate can read (a plain-text Java stack
/// trace, or JSON serde refuses but Jackson writes, such as a lone surrogate escape) could carry
/// a trace that cannot be removed, so it becomes an Iceberg error of the same status instead.
pub fn strip_stack(bytes: Bytes, status: http::StatusCode) -> (Bytes, bool) {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return (bytes, false);
    }
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return (Bytes::from(unreadable_error(status)), true);
    };
    if !remove_stacks(&mut value) {
        return (bytes, false);
    }
    match serde_json::to_vec(&value) {
        Ok(v) => (Bytes::from(v), false),
        Err(_) => (Bytes::from(unreadable_error(status)), true),
    }
}

/// Removes every `stack` member; whether there was one.
fn remove_stacks(value: &mut serde_json::Value) -> bool {
    match value {
        serde_json::Value::Object(map) => {
            let mut changed = map.remove("stack").is_some();
            for v in map.values_mut() {
                changed |= remove_stacks(v);
            }
            changed
        }
        serde_json::Value::Array(items) => items.iter_mut().fold(false, |c, v| remove_stacks(v) | c),
        _ => false,
    }
}

fn unreadable_error(status: http::StatusCode) -> String {
    let kind = if status.is_server_error() { "ServiceFailureException" } else { "RESTException" };
    serde_json::json!({"error": {
        "message": format!("upstream answered {} with an error body icegate could not read", status.as_u16()),
        "type": kind,
        "code": status.as_u16(),
    }})
    .to_string()
}

/// One filtered list response, possibly made of several upstream pages.
#[derive(Debug)]
pub struct Filtered {
    pub body: Vec<u8>,
    pub hidden: usize,
}

/// Filters a list. `first` is the upstream's first page; `fetch(token, size)` asks for the next
/// page; `seal` wraps the upstream token the caller gets back. With `page_size`, pages are
/// fetched until the page is full, the upstream has no more, or `max_pages` were read; the
/// follow-up asks only for what is missing, so no visible entry is skipped. Without it, every
/// page is followed.
/// How one list is read: its kind, the upstream's separators, the caller's `pageSize`, and
/// the refill bound.
#[derive(Clone, Copy, Debug)]
pub struct ListRead<'a> {
    pub kind: ListKind,
    pub separators: &'a [String],
    pub page_size: Option<u32>,
    pub max_pages: usize,
}

pub async fn filter_list<F, Fut>(
    read: ListRead<'_>,
    first: Bytes,
    mut visible: impl FnMut(&Entry) -> bool,
    mut fetch: F,
    seal: impl Fn(&str) -> Option<String>,
) -> Result<Filtered, RewriteError>
where
    F: FnMut(String, Option<u32>) -> Fut,
    Fut: std::future::Future<Output = Result<(u16, Bytes), RewriteError>>,
{
    let ListRead { kind, separators, page_size, max_pages } = read;
    let mut page = list::filter(kind, first, separators, &mut visible)?;
    let limit = if page_size.is_some() { max_pages } else { MAX_PAGES_WITHOUT_SIZE };
    let mut pages = 1;
    loop {
        let missing = page_size.map(|n| (n as usize).saturating_sub(page.len()));
        let Some(token) = page.next_page_token().map(str::to_owned) else { break };
        if missing == Some(0) || pages >= limit {
            break;
        }
        let (status, bytes) = fetch(token, missing.and_then(|m| u32::try_from(m).ok())).await?;
        if status != 200 {
            return Err(RewriteError::FollowUp(status));
        }
        page.append(list::filter(kind, bytes, separators, &mut visible)?);
        pages += 1;
    }
    let next = page.next_page_token().and_then(&seal);
    let body = page.render(kind, next.as_deref());
    let hidden = page.hidden();
    Ok(Filtered { body, hidden })
}

/// `config` keys that are credentials (DESIGN.md §4 getConfig row); prefixes end with `.`.
const CREDENTIAL_KEYS: [&str; 9] = [
    "s3.access-key-id",
    "s3.secret-access-key",
    "s3.session-token",
    "client.access-key-id",
    "client.secret-access-key",
    "client.session-token",
    "gcs.oauth2.token",
    "adls.sas-token.",
    "adls.auth.shared-key.",
];

/// Words that mark a key as secret whatever the upstream calls it (`s3.secret-key`,
/// `credential`, `oauth2.token-exchange`...): removing a harmless key costs little, leaking a
/// secret one costs much.
const SECRET_WORDS: [&str; 6] = ["secret", "token", "password", "credential", "sas-", "-key"];

/// The signer keys: clients must sign through icegate (DESIGN.md §8).
const SIGNER_KEYS: [&str; 4] = ["s3.signer.uri", "s3.signer.endpoint", "signer.uri", "signer.endpoint"];

/// Whether a getConfig `defaults`/`overrides` key is removed: `uri` and the signer keys would
/// send clients around icegate, `token` would let them authenticate as icegate,
/// `namespace-separator` would make them use a separator icegate refuses; credentials never
/// leave, nor does a key named like one. `header.*` keys are the catalog's instructions to
/// clients and pass, except those naming a header icegate reads (`read_headers`, lower case):
/// clients send them on every request, so the upstream could otherwise set a caller's active
/// roles (DESIGN.md §4).
fn removed_config_key(key: &str, extras: &[String], read_headers: &[String]) -> bool {
    let lower = key.to_ascii_lowercase();
    if lower.starts_with("header.") {
        return names_read_header(key, read_headers);
    }
    matches!(key, "uri" | "token" | "namespace-separator")
        || SIGNER_KEYS.contains(&key)
        || CREDENTIAL_KEYS.iter().any(|c| if c.ends_with('.') { key.starts_with(c) } else { key == *c })
        || extras.iter().any(|e| e == key)
        || SECRET_WORDS.iter().any(|w| lower.contains(w))
}

/// An endpoint the catalog advertises, kept only when icegate classifies it.
fn classified_endpoint(endpoint: &str) -> bool {
    let Some((method, path)) = endpoint.split_once(' ') else { return false };
    let concrete = path
        .replace("{prefix}", "p")
        .replace("{namespace}", "n")
        .replace("{table}", "t")
        .replace("{view}", "v")
        .replace("{function}", "f")
        .replace("{plan-id}", "i");
    matches!(
        crate::core::iceberg::routes::classify(
            method,
            &concrete,
            &crate::core::iceberg::routes::RouteOptions::default()
        ),
        Ok(crate::core::iceberg::routes::Classified::Route(_))
    )
}

/// A getConfig response cleaned as DESIGN.md §4 says, with `config`'s
/// `credentials.secret_config_keys` and the headers its identity providers read.
pub fn clean_config(bytes: &[u8], config: &crate::config::Config) -> Result<Bytes, RewriteError> {
    let invalid = |why: &str| RewriteError::List(ListError::Shape(format!("config response: {why}")));
    let mut value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| invalid(&e.to_string()))?;
    let top = value.as_object_mut().ok_or_else(|| invalid("not an object"))?;
    let read_headers = read_headers(&config.identity.header.user_header, &config.identity.header.groups_header);
    for key in ["defaults", "overrides"] {
        if let Some(map) = top.get_mut(key).and_then(serde_json::Value::as_object_mut) {
            map.retain(|k, _| !removed_config_key(k, &config.credentials.secret_config_keys, &read_headers));
        }
    }
    if let Some(endpoints) = top.get_mut("endpoints").and_then(serde_json::Value::as_array_mut) {
        endpoints.retain(|e| e.as_str().is_some_and(classified_endpoint));
    }
    serde_json::to_vec(&value).map(Bytes::from).map_err(|e| invalid(&e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_loses_what_would_bypass_icegate() {
        let body = br#"{"defaults":{"uri":"http://catalog","warehouse":"w","s3.secret-access-key":"x","adls.sas-token.acct":"y","header.X":"1","S3.Secret-Key":"z","credential":"id:secret","my.extra":"e","client.region":"r","rest-page-size":"10","s3.signer.uri":"http://catalog","signer.endpoint":"v1/sign"},"overrides":{"token":"t","namespace-separator":"%2E","prefix":"p","header.X-Api-Token":"h","s3.signer.endpoint":"v1/aws/s3/sign","signer.uri":"http://catalog"},"endpoints":["GET /v1/{prefix}/namespaces","POST /v1/{prefix}/magic"]}"#;
        let mut config = crate::config::Config::default();
        config.credentials.secret_config_keys = vec!["my.extra".to_owned()];
        let cleaned = clean_config(body, &config).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&cleaned).unwrap();
        assert_eq!(
            v["defaults"],
            serde_json::json!({"warehouse":"w","header.X":"1","client.region":"r","rest-page-size":"10"})
        );
        assert_eq!(v["overrides"], serde_json::json!({"prefix":"p","header.X-Api-Token":"h"}));
        assert_eq!(v["endpoints"], serde_json::json!(["GET /v1/{prefix}/namespaces"]));
        assert!(clean_config(b"nope", &config).is_err());
    }

    #[test]
    fn config_loses_header_keys_naming_headers_icegate_reads() {
        let body = br#"{"defaults":{"header.Authorization":"Basic x","header.X-Gravitino-Active-Roles":"admin","header.x-forwarded-user":"root","header.X-Custom":"kept"},"overrides":{"HEADER.x-gravitino-active-roles":"admin","header.X-Team":"g","header.X-Trace":"kept"}}"#;
        let mut config = crate::config::Config::default();
        config.identity.header.groups_header = "X-Team".to_owned();
        let v: serde_json::Value = serde_json::from_slice(&clean_config(body, &config).unwrap()).unwrap();
        assert_eq!(v["defaults"], serde_json::json!({"header.X-Custom":"kept"}));
        assert_eq!(v["overrides"], serde_json::json!({"header.X-Trace":"kept"}));
    }

    #[test]
    fn stack_traces_are_removed_from_errors() {
        let body = Bytes::from_static(br#"{"error":{"message":"m","type":"T","code":500,"stack":["at x"]}}"#);
        let out: serde_json::Value =
            serde_json::from_slice(&strip_stack(body, http::StatusCode::BAD_GATEWAY).0).unwrap();
        assert!(out["error"].get("stack").is_none());
        let (plain, replaced) =
            strip_stack(Bytes::from_static(b"plain\n\tat secret.Trace"), http::StatusCode::BAD_GATEWAY);
        assert!(replaced);
        let out: serde_json::Value = serde_json::from_slice(&plain).unwrap();
        assert_eq!(
            (out["error"]["code"].as_u64(), out["error"]["type"].as_str()),
            (Some(502), Some("ServiceFailureException"))
        );
        assert_eq!(strip_stack(Bytes::new(), http::StatusCode::NOT_FOUND), (Bytes::new(), false));
        let nested = Bytes::from_static(br#"{"error":{"message":"m","cause":{"stack":["x"]}}}"#);
        assert!(!String::from_utf8_lossy(&strip_stack(nested, http::StatusCode::BAD_REQUEST).0).contains("stack"));
    }
}
