//! What may be signed (docs/design.md §8): the allow-list of S3 request shapes — object requests,
//! listings and batch deletes — and the check that everything a sign request reaches (its
//! object, listing prefix, batch-delete keys, copy source) lies under one of the table's
//! locations, with its `uri` read as the endpoint it names reads it. Which headers may be
//! signed is [`headers`]; what a signature must bind besides them, [`bind`].

pub mod bind;
pub mod headers;

use super::clean::{is_inside, is_under, s3_locations};
use super::s3url::{self, Endpoint, MapError, RESPONSE_OVERRIDES, S3Target};
use super::storage::TableStorage;
use crate::core::iceberg::body::SignRequest;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum SignError {
    #[error(transparent)]
    Map(#[from] MapError),
    #[error("`{0}` is not an S3 method icegate signs")]
    Method(String),
    #[error("`{method}` of an object with the parameter `{parameter}` is not a request icegate signs")]
    ObjectParameter { method: String, parameter: String },
    #[error(
        "a bucket request is signed only as a listing (`GET` with a `prefix`) or a batch delete (`POST ?delete`), not `{method}` with {parameters}"
    )]
    BucketRequest { method: String, parameters: String },
    #[error("a `POST` of an object is signed only to start (`?uploads`) or complete (`?uploadId=`) a multipart upload")]
    ObjectPost,
    #[error("`x-amz-copy-source` is signed only on a `PUT` of an object")]
    CopySource,
    #[error("the `Host` header `{0}` is not the host of the `uri`")]
    Host(String),
    #[error("`x-amz-copy-source` `{0}` names no object")]
    BadCopySource(String),
    #[error("the batch-delete `body` is not signed: {0}")]
    BadDeleteBody(String),
    #[error("`{0}` is not under the table's locations")]
    Outside(String),
    #[error("the table has no S3 location, so there is nothing to sign")]
    NoLocation,
}

/// The listing parameters of ListObjects and ListObjectsV2 (`prefix` is required besides).
const LISTING: [&str; 9] = [
    "prefix",
    "list-type",
    "delimiter",
    "max-keys",
    "encoding-type",
    "marker",
    "continuation-token",
    "start-after",
    "fetch-owner",
];

/// What a sign request asks for, once its shape is known.
#[derive(Debug, PartialEq, Eq)]
enum Shape<'a> {
    Object,
    Listing(&'a str),
    BatchDelete,
}

/// What an authorized sign request's signature must bind beyond what it was asked to sign.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// A batch delete's: the hex SHA-256 of the body whose keys were checked, which the
    /// signature must sign as `x-amz-content-sha256` (docs/design.md §8 "What a signature binds").
    pub body_sha256: Option<String>,
}

/// Checks a sign request against the table's storage; `configured` are the S3 endpoints of
/// icegate's configuration (the table's own `s3.endpoint` is tried first).
pub fn check(sign: &SignRequest, table: &TableStorage, configured: &[Endpoint]) -> Result<Checked, SignError> {
    let locations: Vec<&str> = s3_locations(&table.locations).collect();
    if locations.is_empty() {
        return Err(SignError::NoLocation);
    }
    let target = s3url::map(&sign.uri, table.endpoint.iter().chain(configured))?;
    // A signer signs the `Host` it is given; the store then reads the bucket from that host.
    if let Some(host) = sign.hosts.iter().find(|h| !target.origin.is_host(h)) {
        return Err(SignError::Host(host.clone()));
    }
    if !sign.copy_sources.is_empty() && (sign.method != "PUT" || target.key.is_empty()) {
        return Err(SignError::CopySource);
    }
    let mut checked = Checked::default();
    match shape(&sign.method, &target)? {
        Shape::Object => object_under(&target.bucket, &target.key, &locations)?,
        Shape::Listing(prefix) => listing_under(&target.bucket, prefix, &locations)?,
        Shape::BatchDelete => {
            let body = sign.body.as_deref().unwrap_or_default();
            for key in delete_keys(body)? {
                object_under(&target.bucket, &key, &locations)?;
            }
            // Without it, the signature of an `UNSIGNED-PAYLOAD` request opens any other body.
            checked.body_sha256 = Some(bind::sha256_hex(body.as_bytes()));
        }
    }
    for source in &sign.copy_sources {
        let (bucket, key) = copy_source(source)?;
        object_under(&bucket, &key, &locations)?;
    }
    Ok(checked)
}

/// The request's shape, from its method, whether it names a key, and its parameters.
fn shape<'a>(method: &str, target: &'a S3Target) -> Result<Shape<'a>, SignError> {
    // `x-id` names the operation for the SDKs' own routing; S3 ignores it.
    let names: Vec<&str> = target.query.iter().map(|(n, _)| n.as_str()).filter(|n| *n != "x-id").collect();
    let has = |name: &str| names.contains(&name);
    if target.key.is_empty() {
        let listing = method == "GET"
            && target.get("prefix").is_some_and(|p| !p.is_empty())
            && target.get("list-type").is_none_or(|v| v == "2")
            && names.iter().all(|n| LISTING.contains(n));
        return match target.get("prefix") {
            Some(prefix) if listing => Ok(Shape::Listing(prefix)),
            _ if method == "POST" && names == ["delete"] => Ok(Shape::BatchDelete),
            _ => Err(SignError::BucketRequest {
                method: method.to_owned(),
                parameters: match names.is_empty() {
                    true => "no parameter".to_owned(),
                    false => names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
                },
            }),
        };
    }
    let read: fn(&&str) -> bool = |n| matches!(*n, "versionId" | "partNumber") || RESPONSE_OVERRIDES.contains(n);
    // The parameters each object operation takes; any other is a sub-resource icegate does not sign.
    let allowed: fn(&&str) -> bool = match method {
        "GET" if has("tagging") => |n| matches!(*n, "tagging" | "versionId"),
        "GET" | "HEAD" => read,
        "PUT" | "DELETE" if has("tagging") => |n| matches!(*n, "tagging" | "versionId"),
        "PUT" if has("partNumber") && has("uploadId") => |n| matches!(*n, "partNumber" | "uploadId"),
        "PUT" => |_| false,
        "POST" if names == ["uploads"] || names == ["uploadId"] => |_| true,
        "POST" => return Err(SignError::ObjectPost),
        "DELETE" if has("uploadId") => |n| *n == "uploadId",
        "DELETE" => |n| *n == "versionId",
        _ => return Err(SignError::Method(method.to_owned())),
    };
    match names.iter().find(|n| !allowed(n)) {
        Some(parameter) => {
            Err(SignError::ObjectParameter { method: method.to_owned(), parameter: (*parameter).to_owned() })
        }
        None => Ok(Shape::Object),
    }
}

/// An object `key` of `bucket` must lie under one of the locations.
fn object_under(bucket: &str, key: &str, locations: &[&str]) -> Result<(), SignError> {
    let path = format!("s3://{bucket}/{key}");
    // S3 keeps `.` and `..` literally, but stores in front of it may not; such a key could
    // name a path outside the location after normalization.
    if key.split('/').any(|s| s == "." || s == "..") || !locations.iter().any(|l| is_under(&path, l)) {
        return Err(SignError::Outside(path));
    }
    Ok(())
}

/// A listing `prefix` matches keys by their first characters, so it must lie inside a location
/// (`wh/t/` or deeper): `wh/t` would also list `wh/t2/`.
fn listing_under(bucket: &str, prefix: &str, locations: &[&str]) -> Result<(), SignError> {
    let path = format!("s3://{bucket}/{prefix}");
    if prefix.split('/').any(|s| s == "." || s == "..") || !locations.iter().any(|l| is_inside(&path, l)) {
        return Err(SignError::Outside(path));
    }
    Ok(())
}

/// `x-amz-copy-source`: `bucket/key` (URL-encoded, an optional leading `/` and `?versionId=`).
fn copy_source(source: &str) -> Result<(String, String), SignError> {
    let bad = || SignError::BadCopySource(source.to_owned());
    let path = source.split_once('?').map_or(source, |(path, _)| path);
    let path = percent_encoding::percent_decode_str(path).decode_utf8().map_err(|_| bad())?;
    let (bucket, key) = path.strip_prefix('/').unwrap_or(&path).split_once('/').ok_or_else(bad)?;
    // An access point ARN names no bucket icegate could check.
    if bucket.is_empty() || key.is_empty() || bucket.starts_with("arn:") {
        return Err(bad());
    }
    Ok((bucket.to_owned(), key.to_owned()))
}

/// The keys of an S3 `DeleteObjects` body, read as S3 reads them: one `Key` per `Object`, its
/// whole text; no DTD (so no entity of its own), nothing S3 would read and icegate would not.
fn delete_keys(xml: &str) -> Result<Vec<String>, SignError> {
    let bad = |why: &str| SignError::BadDeleteBody(why.to_owned());
    // roxmltree refuses a DTD unless told otherwise.
    let doc = roxmltree::Document::parse(xml).map_err(|_| bad("it is not an XML document without a DTD"))?;
    let root = doc.root_element();
    if root.tag_name().name() != "Delete" {
        return Err(bad("its root element is not `Delete`"));
    }
    let mut keys = Vec::new();
    for child in root.children().filter(|n| !n.is_text() || !is_blank(n)) {
        match child.tag_name().name() {
            "Quiet" if child.is_element() && text_only(child) => {}
            "Object" if child.is_element() => keys.push(object_key(child).map_err(bad)?),
            _ => return Err(bad("`Delete` holds something other than `Object` and `Quiet`")),
        }
    }
    if keys.is_empty() {
        return Err(bad("it names no `Object`"));
    }
    Ok(keys)
}

/// The one `Key` of an `<Object>` (besides which it may name a version, ETag, time and size).
fn object_key(object: roxmltree::Node<'_, '_>) -> Result<String, &'static str> {
    let mut key = None;
    for child in object.children().filter(|n| !n.is_text() || !is_blank(n)) {
        match child.tag_name().name() {
            _ if child.is_element() && !text_only(child) => {
                return Err("an element of an `Object` holds more than text");
            }
            "Key" if child.is_element() && key.is_none() => {
                key = Some(child.children().filter_map(|n| n.text()).collect::<String>());
            }
            "Key" if child.is_element() => return Err("an `Object` has more than one `Key`"),
            "VersionId" | "ETag" | "LastModifiedTime" | "Size" if child.is_element() => {}
            _ => return Err("an `Object` holds something other than its key, version, ETag, time and size"),
        }
    }
    key.ok_or("an `Object` has no `Key`")
}

/// Text and CDATA only: a comment would split what S3 joins, and an element inside would be
/// read by some stores and not by others.
fn text_only(node: roxmltree::Node<'_, '_>) -> bool {
    node.children().all(|n| n.is_text())
}

fn is_blank(node: &roxmltree::Node<'_, '_>) -> bool {
    node.text().is_some_and(|t| t.chars().all(char::is_whitespace))
}

#[cfg(test)]
mod tests;
