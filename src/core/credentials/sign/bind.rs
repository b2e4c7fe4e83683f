//! What a signature binds (docs/design.md §8): SigV4 covers a request's body only through its payload
//! hash, and with `UNSIGNED-PAYLOAD` not at all (`Content-MD5` and CRC checksums do not bind it
//! either: the client writes both bodies). So a batch delete whose keys were checked is bound by
//! setting `x-amz-content-sha256` in its sign request to the body's SHA-256, and the signer's
//! answer is relayed only when its signature signed that header with that value.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use thiserror::Error;

/// The header that carries the payload hash a SigV4 signature signs.
pub const CONTENT_SHA256: &str = "x-amz-content-sha256";

#[derive(Debug, Error, PartialEq, Eq)]
pub enum BindError {
    #[error("the sign request cannot carry its body's hash: {0}")]
    Request(&'static str),
    #[error("the catalog's signer does not bind batch deletes: {0}")]
    Unbound(&'static str),
}

/// The lower-case hex SHA-256 of `bytes`, as `x-amz-content-sha256` carries it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(crate::core::text::hex_lower(b >> 4));
        out.push(crate::core::text::hex_lower(b));
    }
    out
}

/// The sign request `request` (JSON icegate already read strictly) as it is forwarded: without
/// the headers named in `unsigned` (lower case), and with `sha256`, when given, as its only
/// `x-amz-content-sha256`.
pub fn forwarded_request(request: &[u8], unsigned: &[String], sha256: Option<&str>) -> Result<Vec<u8>, BindError> {
    let mut value: Value = serde_json::from_slice(request).map_err(|_| BindError::Request("it is not JSON"))?;
    let headers = value
        .get_mut("headers")
        .and_then(Value::as_object_mut)
        .ok_or(BindError::Request("it has no `headers` object"))?;
    headers.retain(|name, _| !unsigned.iter().any(|u| name.eq_ignore_ascii_case(u)));
    if let Some(sha256) = sha256 {
        headers.retain(|name, _| !name.eq_ignore_ascii_case(CONTENT_SHA256));
        headers.insert(CONTENT_SHA256.to_owned(), Value::Array(vec![Value::String(sha256.to_owned())]));
    }
    serde_json::to_vec(&value).map_err(|_| BindError::Request("it cannot be written back"))
}

/// Checks the signer's answer (`uri` and `headers`): every `Authorization` it carries names
/// `x-amz-content-sha256` among its signed headers, and the answer's own
/// `x-amz-content-sha256`, if any, is `sha256` (which icegate put into the request it signed).
pub fn check_answer(answer: &[u8], sha256: &str) -> Result<(), BindError> {
    let value: Value = serde_json::from_slice(answer).map_err(|_| BindError::Unbound("its answer is not JSON"))?;
    let headers =
        value.get("headers").and_then(Value::as_object).ok_or(BindError::Unbound("its answer carries no headers"))?;
    let authorizations = values(headers, "authorization")?;
    if authorizations.is_empty() {
        return Err(BindError::Unbound("its answer carries no `Authorization`"));
    }
    if !authorizations.iter().all(|a| signed_headers(a).any(|h| h.eq_ignore_ascii_case(CONTENT_SHA256))) {
        return Err(BindError::Unbound("its signature does not sign `x-amz-content-sha256`"));
    }
    if !values(headers, CONTENT_SHA256)?.iter().all(|v| v.trim() == sha256) {
        return Err(BindError::Unbound("it signed an `x-amz-content-sha256` other than the checked body's hash"));
    }
    Ok(())
}

/// Every value of the header `name` (any case) in a multi-valued map of the answer.
fn values<'a>(headers: &'a Map<String, Value>, name: &str) -> Result<Vec<&'a str>, BindError> {
    let mut out = Vec::new();
    for (_, v) in headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name)) {
        let list = v.as_array().ok_or(BindError::Unbound("its answer's headers are not lists of strings"))?;
        for item in list {
            out.push(item.as_str().ok_or(BindError::Unbound("its answer's headers are not lists of strings"))?);
        }
    }
    Ok(out)
}

/// The `SignedHeaders` of a SigV4 (or SigV4a) `Authorization` value; none when it has none.
fn signed_headers(authorization: &str) -> impl Iterator<Item = &str> {
    let list = authorization
        .split([',', ' '])
        .map(str::trim)
        .find_map(|part| part.strip_prefix("SignedHeaders="))
        .unwrap_or_default();
    list.split(';').map(str::trim).filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    fn answer(authorization: &str, sha: Option<&str>) -> Vec<u8> {
        let mut headers = json!({"Authorization": [authorization], "X-Amz-Date": ["20261204T000000Z"]});
        if let Some(sha) = sha {
            headers["X-Amz-Content-SHA256"] = json!([sha]);
        }
        json!({"uri": "https://lake.s3.amazonaws.com/?delete", "headers": headers}).to_string().into_bytes()
    }

    #[test]
    fn the_hash_is_sha256_in_lower_case_hex() {
        assert_eq!(sha256_hex(b""), EMPTY);
    }

    #[test]
    fn the_request_carries_the_hash_in_one_spelling_only() {
        let request = json!({"region": "r", "method": "POST", "uri": "u", "body": "<Delete/>", "properties": {"a": "b"},
                             "headers": {"X-Amz-Content-SHA256": ["UNSIGNED-PAYLOAD"], "x-amz-content-sha256": ["x"], "Content-MD5": ["m"]}});
        let bound: Value =
            serde_json::from_slice(&forwarded_request(request.to_string().as_bytes(), &[], Some(EMPTY)).unwrap())
                .unwrap();
        assert_eq!(bound["headers"], json!({"Content-MD5": ["m"], "x-amz-content-sha256": [EMPTY]}));
        assert_eq!((&bound["body"], &bound["properties"]), (&request["body"], &request["properties"]));
        assert!(forwarded_request(br#"{"headers": []}"#, &[], Some(EMPTY)).is_err());
    }

    #[test]
    fn the_request_loses_the_headers_no_signature_covers() {
        let request = json!({"region": "r", "method": "PUT", "uri": "u",
                             "headers": {"Expect": ["100-continue"], "connection": ["keep-alive"], "Content-Length": ["3"],
                                         "x-amz-content-sha256": ["UNSIGNED-PAYLOAD"]}});
        let unsigned = ["expect".to_owned(), "connection".to_owned()];
        let forwarded: Value =
            serde_json::from_slice(&forwarded_request(request.to_string().as_bytes(), &unsigned, None).unwrap())
                .unwrap();
        assert_eq!(
            forwarded["headers"],
            json!({"Content-Length": ["3"], "x-amz-content-sha256": ["UNSIGNED-PAYLOAD"]}),
            "the payload hash as the client sent it"
        );
    }

    #[test]
    fn only_an_answer_that_signed_the_hash_binds() {
        let signed = "AWS4-HMAC-SHA256 Credential=AKIA/20261204/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=ab";
        assert_eq!(check_answer(&answer(signed, Some(EMPTY)), EMPTY), Ok(()));
        assert_eq!(check_answer(&answer(signed, None), EMPTY), Ok(()));
        let unsigned = "AWS4-HMAC-SHA256 Credential=AKIA/x, SignedHeaders=host;x-amz-date, Signature=ab";
        for bad in [
            answer(unsigned, Some(EMPTY)),
            answer(signed, Some("UNSIGNED-PAYLOAD")),
            answer("Bearer x", None),
            json!({"uri": "u", "headers": {}}).to_string().into_bytes(),
            json!({"uri": "u"}).to_string().into_bytes(),
            json!({"uri": "u", "headers": {"authorization": signed}}).to_string().into_bytes(),
            b"nope".to_vec(),
        ] {
            let e = check_answer(&bad, EMPTY).unwrap_err();
            assert!(e.to_string().starts_with("the catalog's signer does not bind batch deletes"), "{e}");
        }
        let two = json!({"uri": "u", "headers": {"Authorization": [signed], "authorization": [unsigned]}});
        assert!(check_answer(two.to_string().as_bytes(), EMPTY).is_err(), "every signature counts");
    }
}
