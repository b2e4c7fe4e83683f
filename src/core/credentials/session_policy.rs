//! The inline session policy of `s3-downscope` (docs/design.md §8): S3 actions for the caller's scope,
//! limited to the table's location prefixes, or an explicit deny-all when no S3 location is known.

use crate::core::policy::authorize::Scope;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use thiserror::Error;

/// STS rejects an inline session policy longer than this (counted without whitespace).
pub const MAX_POLICY_CHARS: usize = 2048;

const READ_ACTIONS: [&str; 2] = ["s3:GetObject", "s3:GetObjectVersion"];
const WRITE_ACTIONS: [&str; 4] =
    ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"];

#[derive(Debug, Error)]
pub enum PolicyError {
    #[error("the session policy for these locations is {0} characters, over the {MAX_POLICY_CHARS} STS accepts")]
    TooLong(usize),
    #[error("cannot encode the session policy: {0}")]
    Encode(String),
}

/// The bucket and key prefix of an S3 location (`s3://`, `s3a://` or `s3n://`): the prefix has no
/// leading slash and, unless empty (the whole bucket), ends in `/` so `t` never covers `t2`.
pub fn s3_location(uri: &str) -> Option<(String, String)> {
    let (scheme, rest) = uri.split_once("://")?;
    if !["s3", "s3a", "s3n"].iter().any(|s| scheme.eq_ignore_ascii_case(s)) {
        return None;
    }
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    // A bucket name with anything else would not be one S3 accepts, or could smuggle an ARN part.
    let valid_bucket = !bucket.is_empty()
        && bucket.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'_'));
    if !valid_bucket {
        return None;
    }
    let key = key.trim_start_matches('/');
    let prefix = if key.is_empty() || key.ends_with('/') { key.to_owned() } else { format!("{key}/") };
    Some((bucket.to_owned(), prefix))
}

/// Each bucket's prefixes, without those another prefix of the same bucket already covers.
fn prefixes_by_bucket(locations: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut by_bucket: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (bucket, prefix) in locations.iter().filter_map(|l| s3_location(l)) {
        by_bucket.entry(bucket).or_default().push(prefix);
    }
    for prefixes in by_bucket.values_mut() {
        // Sorted, a covering prefix comes before everything it covers.
        prefixes.sort();
        prefixes.dedup();
        let mut kept: Vec<String> = Vec::with_capacity(prefixes.len());
        for p in prefixes.drain(..) {
            if !kept.iter().any(|k| p.starts_with(k.as_str())) {
                kept.push(p);
            }
        }
        *prefixes = kept;
    }
    by_bucket
}

/// Policy documents read `*`, `?` and `${...}` as wildcards and variables; a location containing
/// them must match only itself.
fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '*' => out.push_str("${*}"),
            '?' => out.push_str("${?}"),
            '$' => out.push_str("${$}"),
            c => out.push(c),
        }
    }
    out
}

/// The session policy for `scope` on the S3 locations among `locations`; others are ignored.
pub fn session_policy(scope: Scope, locations: &[String]) -> Value {
    let by_bucket = prefixes_by_bucket(locations);
    if by_bucket.is_empty() {
        return json!({
            "Version": "2012-10-17",
            "Statement": [{"Sid": "DenyAll", "Effect": "Deny", "Action": "*", "Resource": "*"}],
        });
    }
    let mut actions: Vec<&str> = READ_ACTIONS.to_vec();
    if scope == Scope::Write {
        actions.extend(WRITE_ACTIONS);
    }
    let objects: Vec<String> = by_bucket
        .iter()
        .flat_map(|(bucket, prefixes)| prefixes.iter().map(move |p| format!("arn:aws:s3:::{bucket}/{}*", literal(p))))
        .collect();
    let mut statements = vec![json!({"Sid": "Objects", "Effect": "Allow", "Action": actions, "Resource": objects})];
    for (i, (bucket, prefixes)) in by_bucket.iter().enumerate() {
        let mut list = json!({"Sid": format!("List{i}"), "Effect": "Allow", "Action": "s3:ListBucket",
            "Resource": format!("arn:aws:s3:::{bucket}")});
        // `p*` also matches `p` itself (the table's "directory"); a bare `wh/t` would also list
        // `wh/t2/...`. A table at the bucket's root may list without a prefix.
        if !prefixes.iter().any(String::is_empty) {
            let patterns: Vec<String> = prefixes.iter().map(|p| format!("{}*", literal(p))).collect();
            if let Some(list) = list.as_object_mut() {
                list.insert("Condition".to_owned(), json!({"StringLike": {"s3:prefix": patterns}}));
            }
        }
        statements.push(list);
    }
    let buckets: Vec<String> = by_bucket.keys().map(|b| format!("arn:aws:s3:::{b}")).collect();
    statements.push(json!({"Sid": "BucketLocation", "Effect": "Allow", "Action": "s3:GetBucketLocation",
        "Resource": buckets}));
    json!({"Version": "2012-10-17", "Statement": statements})
}

/// The policy as sent to STS, refused when STS would reject it for its length.
pub fn encode(policy: &Value) -> Result<String, PolicyError> {
    let text = serde_json::to_string(policy).map_err(|e| PolicyError::Encode(e.to_string()))?;
    let chars = text.chars().count();
    if chars > MAX_POLICY_CHARS {
        return Err(PolicyError::TooLong(chars));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locs(l: &[&str]) -> Vec<String> {
        l.iter().map(|s| (*s).to_owned()).collect()
    }

    fn statement<'a>(policy: &'a Value, sid: &str) -> &'a Value {
        policy["Statement"].as_array().unwrap().iter().find(|s| s["Sid"] == sid).unwrap()
    }

    #[test]
    fn locations_map_to_bucket_and_slash_terminated_prefix() {
        let l = |s: &str| s3_location(s).map(|(b, p)| format!("{b}|{p}"));
        assert_eq!(l("s3://b/wh/db/t").as_deref(), Some("b|wh/db/t/"));
        assert_eq!(l("s3a://b/wh/db/t/").as_deref(), Some("b|wh/db/t/"));
        assert_eq!(l("S3N://b//wh").as_deref(), Some("b|wh/"));
        assert_eq!(l("s3://b").as_deref(), Some("b|"));
        assert_eq!(l("s3://b/").as_deref(), Some("b|"));
        for other in ["file:///tmp/t", "gs://b/t", "abfss://c@a.dfs.core.windows.net/t", "s3://", "s3:///k", "b/t"] {
            assert_eq!(l(other), None, "{other}");
        }
        assert_eq!(l("s3://Bad*Bucket/k"), None);
    }

    #[test]
    fn read_policy_covers_objects_listing_and_bucket_location() {
        let p = session_policy(Scope::Read, &locs(&["s3://b/wh/db/t", "s3://b/wh/db/t/data", "gs://x/y"]));
        assert_eq!(p["Version"], "2012-10-17");
        assert_eq!(p["Statement"].as_array().unwrap().len(), 3);
        let objects = statement(&p, "Objects");
        assert_eq!(objects["Action"], json!(["s3:GetObject", "s3:GetObjectVersion"]));
        assert_eq!(objects["Resource"], json!(["arn:aws:s3:::b/wh/db/t/*"]));
        let list = statement(&p, "List0");
        assert_eq!(list["Resource"], "arn:aws:s3:::b");
        assert_eq!(list["Condition"], json!({"StringLike": {"s3:prefix": ["wh/db/t/*"]}}));
        assert_eq!(statement(&p, "BucketLocation")["Resource"], json!(["arn:aws:s3:::b"]));
    }

    #[test]
    fn write_policy_adds_write_actions_and_spans_buckets() {
        let p = session_policy(Scope::Write, &locs(&["s3://b2/t", "s3://b1/x/t", "s3://b1/y"]));
        let objects = statement(&p, "Objects");
        assert_eq!(objects["Action"].as_array().unwrap().len(), 6);
        assert_eq!(objects["Resource"], json!(["arn:aws:s3:::b1/x/t/*", "arn:aws:s3:::b1/y/*", "arn:aws:s3:::b2/t/*"]));
        assert_eq!(statement(&p, "List0")["Condition"]["StringLike"]["s3:prefix"], json!(["x/t/*", "y/*"]));
        assert_eq!(statement(&p, "List1")["Resource"], "arn:aws:s3:::b2");
    }

    #[test]
    fn no_s3_location_denies_everything() {
        for l in [locs(&[]), locs(&["file:///tmp/t", "gs://b/t"])] {
            let p = session_policy(Scope::Write, &l);
            assert_eq!(p["Statement"], json!([{"Sid": "DenyAll", "Effect": "Deny", "Action": "*", "Resource": "*"}]));
        }
    }

    #[test]
    fn wildcards_in_a_location_match_only_themselves_and_root_tables_list_freely() {
        let p = session_policy(Scope::Read, &locs(&["s3://b/a*b?$c"]));
        assert_eq!(statement(&p, "Objects")["Resource"], json!(["arn:aws:s3:::b/a${*}b${?}${$}c/*"]));
        let p = session_policy(Scope::Read, &locs(&["s3://b", "s3://b/t"]));
        assert_eq!(statement(&p, "Objects")["Resource"], json!(["arn:aws:s3:::b/*"]));
        assert!(statement(&p, "List0").get("Condition").is_none());
    }

    #[test]
    fn encoding_refuses_what_sts_would_reject() {
        let typical = session_policy(Scope::Write, &locs(&["s3://bucket/warehouse/db/table"]));
        assert!(encode(&typical).unwrap().len() < 1000);
        let many: Vec<String> = (0..40).map(|i| format!("s3://bucket/warehouse/db/table_{i}")).collect();
        assert!(matches!(encode(&session_policy(Scope::Write, &many)), Err(PolicyError::TooLong(_))));
    }
}
