//! Where a remote-signing request reaches (DESIGN.md §8): the S3 object, listing prefix or
//! batch-delete keys its `uri` and `body` name, each of which must lie under one of the table's
//! locations before icegate lets the upstream sign it.

use super::clean::{is_under, s3_locations};
use crate::iceberg::body::SignRequest;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum SignError {
    #[error("the sign request's `uri` is not an S3 URL: `{0}`")]
    BadUri(String),
    #[error("the sign request's `uri` names no object or listing prefix: `{0}`")]
    NoKey(String),
    #[error("the sign request's batch-delete `body` cannot be read: {0}")]
    BadDeleteBody(String),
    #[error("`{0}` is not under the table's locations")]
    Outside(String),
    #[error("the table has no S3 location, so there is nothing to sign")]
    NoLocation,
}

/// Checks every S3 path `sign` reaches against the table's `locations`.
pub fn check(sign: &SignRequest, locations: &[String]) -> Result<(), SignError> {
    if s3_locations(locations).next().is_none() {
        return Err(SignError::NoLocation);
    }
    for path in reached(sign)? {
        let inside = s3_locations(locations).any(|location| is_under(&path, location));
        if !inside {
            return Err(SignError::Outside(path));
        }
    }
    Ok(())
}

/// The `s3://bucket/key` paths a sign request reaches.
fn reached(sign: &SignRequest) -> Result<Vec<String>, SignError> {
    let bad = || SignError::BadUri(sign.uri.clone());
    let uri: http::Uri = sign.uri.parse().map_err(|_| bad())?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(bad());
    }
    let host = uri.host().ok_or_else(bad)?.to_ascii_lowercase();
    let path = decode(uri.path()).ok_or_else(bad)?;
    let (bucket, key) = match virtual_hosted_bucket(&host) {
        Some(bucket) => (bucket.to_owned(), path.strip_prefix('/').unwrap_or(&path).to_owned()),
        None => {
            let rest = path.strip_prefix('/').unwrap_or(&path);
            let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
            (bucket.to_owned(), key.to_owned())
        }
    };
    if bucket.is_empty() {
        return Err(bad());
    }
    let query: Vec<(String, String)> =
        form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes()).into_owned().collect();
    let has = |name: &str| query.iter().any(|(k, _)| k == name);
    let keys = if !key.is_empty() {
        vec![key]
    } else if sign.method == "POST" && has("delete") {
        delete_keys(sign.body.as_deref().unwrap_or_default())?
    } else if let Some((_, prefix)) = query.iter().find(|(k, _)| k == "prefix").filter(|(_, p)| !p.is_empty()) {
        vec![prefix.clone()]
    } else {
        return Err(SignError::NoKey(sign.uri.clone()));
    };
    let mut paths: Vec<(String, String)> = keys.into_iter().map(|key| (bucket.clone(), key)).collect();
    // A copy reads its source, so the source must be the table's too.
    for source in &sign.copy_sources {
        let bad = || SignError::BadUri(format!("x-amz-copy-source: {source}"));
        let source = source.split_once('?').map_or(source.as_str(), |(path, _)| path);
        let source = decode(source).ok_or_else(bad)?;
        let (bucket, key) = source.trim_start_matches('/').split_once('/').ok_or_else(bad)?;
        if bucket.is_empty() || key.is_empty() || bucket.starts_with("arn:") {
            return Err(bad());
        }
        paths.push((bucket.to_owned(), key.to_owned()));
    }
    paths
        .into_iter()
        .map(|(bucket, key)| {
            // S3 keeps `.` and `..` literally, but stores in front of it may not; such a key
            // could name a path outside the location after normalization.
            if key.split('/').any(|s| s == "." || s == "..") {
                return Err(SignError::Outside(format!("s3://{bucket}/{key}")));
            }
            Ok(format!("s3://{bucket}/{key}"))
        })
        .collect()
}

/// `bucket.s3.amazonaws.com`, `bucket.s3.region.amazonaws.com`, `bucket.s3-region.amazonaws.com`
/// and their variants are virtual-hosted; any other host (`s3.region.amazonaws.com`, a custom
/// endpoint) is path-style.
fn virtual_hosted_bucket(host: &str) -> Option<&str> {
    if !host.ends_with(".amazonaws.com") {
        return None;
    }
    let at = host.find(".s3.").or_else(|| host.find(".s3-"))?;
    Some(&host[..at]).filter(|b| !b.is_empty())
}

fn decode(path: &str) -> Option<String> {
    percent_encoding::percent_decode_str(path).decode_utf8().ok().map(|s| s.into_owned())
}

/// The keys of an S3 `DeleteObjects` body.
fn delete_keys(xml: &str) -> Result<Vec<String>, SignError> {
    let bad = |why: String| SignError::BadDeleteBody(why);
    let doc = roxmltree::Document::parse(xml).map_err(|e| bad(e.to_string()))?;
    let root = doc.root_element();
    if root.tag_name().name() != "Delete" {
        return Err(bad(format!("the root element is `{}`, not `Delete`", root.tag_name().name())));
    }
    let keys: Vec<String> = root
        .children()
        .filter(|n| n.is_element() && n.tag_name().name() == "Object")
        .map(|object| {
            object
                .children()
                .find(|n| n.is_element() && n.tag_name().name() == "Key")
                .and_then(|k| k.text())
                .map(str::to_owned)
                .ok_or_else(|| bad("an `Object` has no `Key`".into()))
        })
        .collect::<Result<_, _>>()?;
    if keys.is_empty() {
        return Err(bad("no `Object` to delete".into()));
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(method: &str, uri: &str, body: Option<&str>) -> SignRequest {
        SignRequest {
            region: "us-east-1".into(),
            method: method.into(),
            uri: uri.into(),
            provider: None,
            body: body.map(str::to_owned),
            copy_sources: Vec::new(),
        }
    }

    fn locations() -> Vec<String> {
        vec!["file:///wh/db/t".into(), "s3://lake/wh/db/t".into(), "s3a://lake/data/t".into()]
    }

    #[test]
    fn objects_under_the_table_are_signed_in_every_url_style() {
        for uri in [
            "https://lake.s3.amazonaws.com/wh/db/t/data/f.parquet",
            "https://lake.s3.eu-west-1.amazonaws.com/wh/db/t/metadata/m.json",
            "https://lake.s3-eu-west-1.amazonaws.com/data/t/x?partNumber=1&uploadId=u",
            "https://s3.eu-west-1.amazonaws.com/lake/wh/db/t/f",
            "http://127.0.0.1:9000/lake/wh/db/t/f%20g",
            "http://127.0.0.1:9000/lake/?list-type=2&prefix=wh%2Fdb%2Ft%2Fdata%2F",
        ] {
            assert_eq!(check(&sign("GET", uri, None), &locations()), Ok(()), "{uri}");
        }
    }

    #[test]
    fn anything_outside_the_table_is_refused() {
        for uri in [
            "https://lake.s3.amazonaws.com/wh/db/t2/f",
            "https://other.s3.amazonaws.com/wh/db/t/f",
            "http://127.0.0.1:9000/lake/wh/db/t/../u/f",
            "http://127.0.0.1:9000/lake/wh/db/t/%2E%2E/u/f",
            "http://127.0.0.1:9000/lake/wh/db/tx",
            "http://127.0.0.1:9000/lake/?list-type=2&prefix=wh%2F",
            "http://127.0.0.1:9000/lake/",
            "http://127.0.0.1:9000/",
            "file:///wh/db/t/f",
            "not a uri",
        ] {
            assert!(check(&sign("GET", uri, None), &locations()).is_err(), "{uri}");
        }
        assert_eq!(
            check(&sign("GET", "http://h/lake/wh/db/t/f", None), &["file:///wh/db/t".into()]),
            Err(SignError::NoLocation)
        );
    }

    #[test]
    fn a_copy_must_read_from_the_table_too() {
        let mut copy = sign("PUT", "http://127.0.0.1:9000/lake/wh/db/t/data/new", None);
        copy.copy_sources = vec!["/lake/wh/db/t/data/old?versionId=1".into()];
        assert_eq!(check(&copy, &locations()), Ok(()));
        for source in
            ["lake/wh/db/secret/x", "/other/wh/db/t/x", "arn:aws:s3:us-east-1:1:accesspoint/a/object/k", "lake"]
        {
            copy.copy_sources = vec![source.into()];
            assert!(check(&copy, &locations()).is_err(), "{source}");
        }
    }

    #[test]
    fn every_key_of_a_batch_delete_must_be_under_the_table() {
        let body = |keys: &[&str]| {
            let objects: String = keys.iter().map(|k| format!("<Object><Key>{k}</Key></Object>")).collect();
            format!(
                r#"<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">{objects}<Quiet>true</Quiet></Delete>"#
            )
        };
        let uri = "http://127.0.0.1:9000/lake/?delete";
        let ok = body(&["wh/db/t/data/a", "data/t/b"]);
        assert_eq!(check(&sign("POST", uri, Some(&ok)), &locations()), Ok(()));
        let mixed = body(&["wh/db/t/data/a", "wh/db/other/b"]);
        assert_eq!(
            check(&sign("POST", uri, Some(&mixed)), &locations()),
            Err(SignError::Outside("s3://lake/wh/db/other/b".into()))
        );
        for bad in [
            "",
            "<Delete/>",
            "<NotDelete><Object><Key>wh/db/t/a</Key></Object></NotDelete>",
            "<Delete><Object/></Delete>",
            "<Delete>",
        ] {
            assert!(check(&sign("POST", uri, Some(bad)), &locations()).is_err(), "{bad}");
        }
    }
}
