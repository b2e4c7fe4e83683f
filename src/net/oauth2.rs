//! OAuth2's client-credentials grant (RFC 6749 §4.4): the one token request of icegate's side
//! calls — its form, the client's authentication, the bounded exchange and the reading of the
//! answer — for every credential icegate fetches for itself (`[gravitino.oauth2]` and the
//! upstreams' `[upstream.oauth2]`, `serve/upstream/upstream_auth/oauth2.rs`).
//! Keeping a token, and when to replace it, is each caller's. Neither the client secret nor the
//! token is ever written to an error message.

use super::outbound::Outbound;
use crate::config::{ClientAuth, OAuth2};
use http::HeaderValue;
use std::time::Duration;
use thiserror::Error;

/// A token endpoint's answer is read up to this size.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// Why no token was granted; each message ends with the proxy the request went through, if any.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TokenError {
    /// The client secret could not be read (its file or variable, never its value).
    #[error("{0}")]
    Secret(String),
    #[error("{0}")]
    Request(String),
    #[error("token endpoint is unreachable: {0}")]
    Unreachable(String),
    #[error("token endpoint's answer could not be read: {message}{through}")]
    Unread { message: String, through: String },
    #[error("token endpoint did not answer within {ms} ms{through}")]
    Timeout { ms: u128, through: String },
    #[error("{message}{through}")]
    Answer { message: String, through: String },
}

/// The parts of a token endpoint's answer icegate uses.
#[derive(Debug, PartialEq, Eq)]
pub struct Granted {
    pub access_token: String,
    /// Seconds from the request, as the endpoint said.
    pub expires_in: Option<u64>,
}

/// Asks `config`'s token endpoint for a token through `client`, the whole exchange within
/// `timeout`. The caller notes the time before it calls: a token's life counts from its request.
pub async fn client_credentials(client: &Outbound, config: &OAuth2, timeout: Duration) -> Result<Granted, TokenError> {
    let secret = config.read_secret().map_err(TokenError::Secret)?;
    let request = request(client, config, &secret)?;
    drop(secret);
    let through = client.through(request.url());
    let exchange = async {
        let response = client.send(request).await.map_err(|e| TokenError::Unreachable(e.to_string()))?;
        let status = response.status();
        let body = super::outbound::read(response, MAX_ANSWER_BYTES)
            .await
            .map_err(|message| TokenError::Unread { message, through: through.clone() })?;
        Ok::<_, TokenError>((status, body))
    };
    let (status, body) = tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| TokenError::Timeout { ms: timeout.as_millis(), through: through.clone() })??;
    parse_answer(status, &body).map_err(|message| TokenError::Answer { message, through })
}

/// The token request: the form of §4.4.2, the client authenticated as `client_auth` says (§2.3.1).
fn request(client: &Outbound, config: &OAuth2, secret: &str) -> Result<reqwest::Request, TokenError> {
    let mut form = vec![("grant_type", "client_credentials")];
    for (key, value) in [("scope", &config.scope), ("audience", &config.audience), ("resource", &config.resource)] {
        if let Some(v) = value {
            form.push((key, v));
        }
    }
    let mut builder = client.client().post(&config.token_endpoint).header(http::header::ACCEPT, "application/json");
    match config.client_auth {
        ClientAuth::Post => {
            form.push(("client_id", &config.client_id));
            form.push(("client_secret", secret));
        }
        ClientAuth::Basic => {
            use base64::Engine;
            // RFC 6749 §2.3.1: each form-encoded before they are joined
            let encode = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", encode(&config.client_id), encode(secret));
            let mut value =
                HeaderValue::try_from(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair)))
                    .map_err(|_| TokenError::Request("the client id cannot be sent in a header".to_owned()))?;
            value.set_sensitive(true);
            builder = builder.header(http::header::AUTHORIZATION, value);
        }
    }
    builder.form(&form).build().map_err(|e| {
        TokenError::Request(format!(
            "cannot build the token request: {}",
            crate::core::text::error_chain(&e.without_url())
        ))
    })
}

/// Reads a token endpoint's answer (RFC 6749 §5.1, §5.2). Error messages never quote the
/// answer beyond the `error` code of §5.2.
pub fn parse_answer(status: http::StatusCode, body: &[u8]) -> Result<Granted, String> {
    let json: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    if !status.is_success() {
        let code = json
            .as_ref()
            .and_then(|v| v.get("error")?.as_str().map(str::to_owned))
            .filter(|c| c.len() <= 64 && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
        return Err(match code {
            Some(code) => format!("token endpoint answered {} `{code}`", status.as_u16()),
            None => format!("token endpoint answered {}", status.as_u16()),
        });
    }
    let json = json.ok_or("token endpoint's answer is not JSON")?;
    let access_token = json
        .get("access_token")
        .and_then(serde_json::Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or("token endpoint's answer has no `access_token`")?
        .to_owned();
    if let Some(kind) = json.get("token_type").and_then(serde_json::Value::as_str)
        && !kind.eq_ignore_ascii_case("bearer")
    {
        return Err("token endpoint's answer has a `token_type` other than `bearer`".into());
    }
    // a number, or a string of one as some providers send it
    let expires_in = match json.get("expires_in") {
        None | Some(serde_json::Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                .ok_or("token endpoint's `expires_in` is not a number of seconds")?,
        ),
    };
    Ok(Granted { access_token, expires_in })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    #[test]
    fn answers_are_read_as_rfc_6749_says_and_errors_quote_only_the_error_code() {
        let ok = br#"{"access_token":"t0k","token_type":"Bearer","expires_in":"30"}"#;
        assert_eq!(parse_answer(StatusCode::OK, ok), Ok(Granted { access_token: "t0k".into(), expires_in: Some(30) }));
        let no_expiry = br#"{"access_token":"t0k","token_type":"bearer"}"#;
        assert_eq!(parse_answer(StatusCode::OK, no_expiry).unwrap().expires_in, None);
        let mac = br#"{"access_token":"t0k","token_type":"mac"}"#;
        assert!(parse_answer(StatusCode::OK, mac).unwrap_err().contains("`token_type`"));
        let refused = br#"{"error":"invalid_client","error_description":"secret s3cr3t is wrong"}"#;
        let m = parse_answer(StatusCode::UNAUTHORIZED, refused).unwrap_err();
        assert_eq!(m, "token endpoint answered 401 `invalid_client`");
        let odd = br#"{"error":"leaked s3cr3t"}"#;
        assert_eq!(parse_answer(StatusCode::BAD_REQUEST, odd).unwrap_err(), "token endpoint answered 400");
        assert!(parse_answer(StatusCode::OK, b"{}").unwrap_err().contains("no `access_token`"));
    }
}
