//! Which headers may be signed (docs/design.md §8): a signature makes every header it signs the
//! caller's choice, so a sign request's `x-amz-*` headers are held to an allow-list, and a
//! client's own `Authorization` or session token is never signed. Names are compared without
//! regard to case, as S3 and SigV4 read them.

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum HeaderError {
    /// The header, lower case, and why it is refused; values are never quoted (an SSE-C key is
    /// a secret).
    #[error("the header `{name}` is never signed: {why}")]
    Refused { name: String, why: &'static str },
    #[error("the header `{0}` is signed only with the value {1}")]
    Value(String, &'static str),
    #[error(
        "the header `{0}` is signed only with the `x-amz-server-side-encryption-aws-kms-key-id` icegate is configured with"
    )]
    KmsKey(String),
    #[error("a header name must be an HTTP token, not `{0}`")]
    Name(String),
}

/// What the configuration allows beyond the fixed list (`credentials.signing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderRules<'a> {
    /// `x-amz-storage-class` (`allow_storage_class`).
    pub storage_class: bool,
    /// `x-amz-tagging` (`allow_tagging`).
    pub tagging: bool,
    /// `x-amz-server-side-encryption-customer-*` (`allow_sse_c`).
    pub sse_c: bool,
    /// The only `x-amz-server-side-encryption-aws-kms-key-id` signed, when set (`kms_key_id`).
    pub kms_key_id: Option<&'a str>,
}

impl Default for HeaderRules<'_> {
    fn default() -> Self {
        Self { storage_class: true, tagging: true, sse_c: false, kms_key_id: None }
    }
}

/// Headers no signature covers (docs/signing.md): the hop-by-hop headers of RFC 9110 §7.6.1 and
/// RFC 2616 §13.5.1, which each hop may add, drop or answer, and `Expect`, which HTTP stacks add
/// and answer on the way. botocore and the AWS SDKs do not sign them, and a store checking a
/// signature as botocore computes it refuses one that signed `Expect`.
pub const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "expect",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "transfer-encoding",
    "upgrade",
];

/// Whether the header `name` is one no signature covers ([`HOP_BY_HOP`]), in any case.
pub fn is_hop_by_hop(name: &str) -> bool {
    HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h))
}

/// The names of `headers` no signature covers, lower case: what is left out of a sign request.
pub fn hop_by_hop(headers: &[(String, Vec<String>)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (name, _) in headers.iter().filter(|(name, _)| is_hop_by_hop(name)) {
        let lower = name.to_ascii_lowercase();
        if !out.contains(&lower) {
            out.push(lower);
        }
    }
    out
}

/// `x-amz-*` headers signed whatever their value: the request's own hash, time and checksums,
/// object metadata, conditions and ranges of a copy, and encryption under the bucket's keys.
const ALLOWED: [&str; 11] = [
    "x-amz-content-sha256",
    "x-amz-date",
    "x-amz-sdk-checksum-algorithm",
    "x-amz-trailer",
    "x-amz-decoded-content-length",
    // the source itself is checked against the table's locations with the `uri`
    "x-amz-copy-source",
    "x-amz-copy-source-range",
    "x-amz-server-side-encryption",
    "x-amz-server-side-encryption-context",
    "x-amz-server-side-encryption-bucket-key-enabled",
    "x-amz-expected-bucket-owner",
];
const ALLOWED_PREFIXES: [&str; 3] = ["x-amz-checksum-", "x-amz-meta-", "x-amz-copy-source-if-"];

/// Headers refused by name, with why: access or retention that outlives the table's policy, a
/// redirect of the bucket's website, and credentials of the client's own.
const REFUSED: [(&str, &str); 7] = [
    ("authorization", "a signature is icegate's or the catalog's, never the client's"),
    ("x-amz-security-token", "the session of the signature is the signer's, never the client's"),
    ("x-amz-grant-", "grants give access beyond the table's policy"),
    ("x-amz-object-lock-", "object locks outlive the table's policy"),
    ("x-amz-bypass-governance-retention", "retention is not the caller's to lift"),
    ("x-amz-mfa", "MFA deletes are not made through a catalog"),
    ("x-amz-website-redirect-location", "a redirect would send the bucket's website elsewhere"),
];

/// `x-amz-server-side-encryption-customer-*` and its copy-source twin: a key only the writer
/// knows makes the data unreadable to everyone else.
const SSE_C: [&str; 2] =
    ["x-amz-server-side-encryption-customer-", "x-amz-copy-source-server-side-encryption-customer-"];

/// The one canned ACL signed: it gives the bucket's owner the object, and nobody else anything.
const OWNER_ACL: &str = "bucket-owner-full-control";

/// The one `x-amz-te` signed: the AWS SDK for Java v2 asks S3 to append the object's MD5 to a
/// `GetObject` answer (Iceberg's `S3FileIO` reads that way); it changes only how a read is framed.
const APPEND_MD5: &str = "append-md5";

/// Checks every header of a sign request; the first refused one is the error.
pub fn check(headers: &[(String, Vec<String>)], rules: &HeaderRules<'_>) -> Result<(), HeaderError> {
    for (name, values) in headers {
        check_one(name, values, rules)?;
    }
    Ok(())
}

fn check_one(name: &str, values: &[String], rules: &HeaderRules<'_>) -> Result<(), HeaderError> {
    // A name a store would read differently (`x-amz-acl ` trimmed) could slip past the list.
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        return Err(HeaderError::Name(name.to_owned()));
    }
    let lower = name.to_ascii_lowercase();
    let refused = |why| Err(HeaderError::Refused { name: lower.clone(), why });
    if let Some((_, why)) =
        REFUSED.iter().find(|(n, _)| if n.ends_with('-') { lower.starts_with(n) } else { lower == *n })
    {
        return refused(why);
    }
    if !lower.starts_with("x-amz-") {
        return Ok(());
    }
    if SSE_C.iter().any(|p| lower.starts_with(p)) {
        return match rules.sse_c {
            true => Ok(()),
            false => refused("customer-provided keys are off (`credentials.signing.allow_sse_c`)"),
        };
    }
    match lower.as_str() {
        "x-amz-acl" if values.iter().all(|v| v.trim() == OWNER_ACL) => Ok(()),
        "x-amz-acl" => Err(HeaderError::Value(lower, "`bucket-owner-full-control`")),
        "x-amz-te" if values.iter().all(|v| v.trim() == APPEND_MD5) => Ok(()),
        "x-amz-te" => Err(HeaderError::Value(lower, "`append-md5`")),
        "x-amz-server-side-encryption-aws-kms-key-id" => match rules.kms_key_id {
            Some(key) if !values.iter().all(|v| v.trim() == key) => Err(HeaderError::KmsKey(lower)),
            _ => Ok(()),
        },
        "x-amz-storage-class" if !rules.storage_class => {
            refused("storage classes are off (`credentials.signing.allow_storage_class`)")
        }
        "x-amz-tagging" if !rules.tagging => refused("object tags are off (`credentials.signing.allow_tagging`)"),
        "x-amz-storage-class" | "x-amz-tagging" | "x-amz-request-payer" => Ok(()),
        other if ALLOWED.contains(&other) || ALLOWED_PREFIXES.iter().any(|p| other.starts_with(p)) => Ok(()),
        _ => refused("it is not on the allow-list of `x-amz-*` headers"),
    }
}

/// RFC 9110's `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(name: &str, value: &str, rules: &HeaderRules<'_>) -> Result<(), HeaderError> {
        check(&[(name.to_owned(), vec![value.to_owned()])], rules)
    }

    #[test]
    fn hop_by_hop_headers_are_named_once_in_lower_case() {
        let headers =
            |names: &[&str]| names.iter().map(|n| ((*n).to_owned(), vec!["v".to_owned()])).collect::<Vec<_>>();
        assert_eq!(
            hop_by_hop(&headers(&[
                "Expect",
                "Content-Length",
                "Connection",
                "expect",
                "TE",
                "x-amz-trailer",
                "Trailer"
            ])),
            ["expect", "connection", "te"]
        );
        assert!(hop_by_hop(&headers(&["Host", "User-Agent", "x-amz-date"])).is_empty());
        // they pass the checks: left out of the signature, not refused
        assert_eq!(check(&headers(&["Expect", "Transfer-Encoding", "Upgrade"]), &HeaderRules::default()), Ok(()));
    }

    #[test]
    fn what_the_sdks_send_is_signed() {
        let rules = HeaderRules::default();
        for (name, value) in [
            ("X-Amz-Content-SHA256", "UNSIGNED-PAYLOAD"),
            ("x-amz-date", "20261204T000000Z"),
            ("x-amz-checksum-crc32", "AAAAAA=="),
            ("x-amz-sdk-checksum-algorithm", "CRC32"),
            ("x-amz-trailer", "x-amz-checksum-crc32"),
            ("x-amz-decoded-content-length", "10"),
            ("x-amz-meta-iceberg", "1"),
            ("x-amz-copy-source-range", "bytes=0-9"),
            ("x-amz-copy-source-if-match", "e"),
            ("x-amz-server-side-encryption", "aws:kms"),
            ("x-amz-server-side-encryption-aws-kms-key-id", "any"),
            ("x-amz-server-side-encryption-context", "e30="),
            ("x-amz-server-side-encryption-bucket-key-enabled", "true"),
            ("x-amz-expected-bucket-owner", "1"),
            ("x-amz-request-payer", "requester"),
            ("x-amz-storage-class", "STANDARD_IA"),
            ("x-amz-tagging", "a=b"),
            ("X-Amz-Acl", "bucket-owner-full-control"),
            // the AWS SDK for Java v2's GetObject (Iceberg's S3FileIO), issue 46
            ("x-amz-te", "append-md5"),
            ("Content-MD5", "x"),
            ("Range", "bytes=0-1"),
            ("If-None-Match", "*"),
            ("amz-sdk-invocation-id", "u"),
            ("User-Agent", "aws-sdk-java"),
        ] {
            assert_eq!(one(name, value, &rules), Ok(()), "{name}");
        }
    }

    #[test]
    fn headers_that_widen_access_or_outlive_the_policy_are_refused() {
        let rules = HeaderRules::default();
        for (name, value) in [
            ("x-amz-acl", "public-read"),
            ("X-AMZ-ACL", "bucket-owner-read"),
            ("x-amz-grant-read", "uri=http://acs.amazonaws.com/groups/global/AllUsers"),
            ("x-amz-grant-full-control", "id=1"),
            ("x-amz-object-lock-mode", "COMPLIANCE"),
            ("x-amz-object-lock-retain-until-date", "2099-01-01T00:00:00Z"),
            ("x-amz-object-lock-legal-hold", "ON"),
            ("x-amz-bypass-governance-retention", "true"),
            ("x-amz-mfa", "1 2"),
            ("x-amz-website-redirect-location", "https://evil.example"),
            ("x-amz-server-side-encryption-customer-key", "secret"),
            ("x-amz-server-side-encryption-customer-algorithm", "AES256"),
            ("x-amz-copy-source-server-side-encryption-customer-key", "secret"),
            ("Authorization", "AWS4-HMAC-SHA256 Credential=mine"),
            ("x-amz-security-token", "mine"),
            ("x-amz-future-header", "1"),
            ("x-amz-acl ", "bucket-owner-full-control"),
            ("x-amz-te", "gzip"),
        ] {
            let refused = one(name, value, &rules).expect_err(name);
            let message = refused.to_string();
            assert!(
                message.contains(&format!("`{}`", name.trim().to_ascii_lowercase())) || message.contains(name),
                "{message}"
            );
            assert!(!message.contains("secret") && !message.contains("evil"), "values are not quoted: {message}");
        }
        let acl = [("x-amz-acl".to_owned(), vec!["bucket-owner-full-control".to_owned(), "public-read".to_owned()])];
        assert!(check(&acl, &rules).is_err(), "every value counts");
    }

    #[test]
    fn the_configuration_turns_headers_on_and_off() {
        let off = HeaderRules { storage_class: false, tagging: false, ..HeaderRules::default() };
        assert!(one("x-amz-storage-class", "GLACIER", &off).is_err());
        assert!(one("X-Amz-Tagging", "a=b", &off).is_err());
        let sse_c = HeaderRules { sse_c: true, ..HeaderRules::default() };
        assert_eq!(one("x-amz-server-side-encryption-customer-key", "k", &sse_c), Ok(()));
        let kms = HeaderRules { kms_key_id: Some("arn:aws:kms:r:1:key/ours"), ..HeaderRules::default() };
        assert_eq!(one("x-amz-server-side-encryption-aws-kms-key-id", "arn:aws:kms:r:1:key/ours", &kms), Ok(()));
        assert_eq!(
            one("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "arn:aws:kms:r:2:key/theirs", &kms),
            Err(HeaderError::KmsKey("x-amz-server-side-encryption-aws-kms-key-id".into()))
        );
    }
}
