use super::*;
use crate::core::credentials::Action;
use crate::core::credentials::clean::Endpoints;
use crate::core::credentials::envelope::Prefix;
use crate::core::policy::authorize::Scope;
use crate::serve::storage::sts::Minted;
use serde_json::json;

const METADATA: &str = r#"{"format-version":2,"location":"s3://lake/wh/db/t","properties":{"write.data.path":"s3://lake/data/t","x":"{\"a\":[1,2]}"},"schemas":[{"type":"struct","fields":[]}],   "odd-spacing" : [ 1 , 2 ]}"#;

fn body(extra: &str) -> Bytes {
    Bytes::from(format!(
        r#"{{"metadata-location":"s3://lake/wh/db/t/metadata/1.json","metadata":{METADATA},"config":{{"s3.access-key-id":"AKIA","token":"t","client.region":"r"}},"storage-credentials":[{{"prefix":"s3://lake/","config":{{"s3.access-key-id":"ROOT"}}}},{{"prefix":"s3://lake/data/t","config":{{"s3.access-key-id":"DATA"}}}}]{extra}}}"#
    ))
}

fn endpoints() -> Endpoints {
    Endpoints { credentials: "v1/c".into(), sign: "v1/s".into(), signer_uri: None }
}

fn rules<'a>(action: Action, e: &'a Endpoints, minted: Option<&'a Minted>) -> Rules<'a> {
    Rules { action, extra_allowed: &[], endpoints: e, minted, read_headers: &[] }
}

fn render(body: Bytes, rules: &Rules<'_>) -> (String, Value) {
    let parsed = Parsed::read(&body).unwrap();
    let locations = parsed.locations.clone().unwrap();
    let out = parsed.render(rules, &locations).unwrap();
    let text = String::from_utf8(out.concat()).unwrap();
    assert_eq!(out.len(), text.len());
    let value = serde_json::from_str(&text).unwrap();
    (text, value)
}

#[test]
fn metadata_passes_byte_for_byte_while_credentials_are_rewritten() {
    let e = endpoints();
    let (text, v) = render(body(""), &rules(Action::Keep, &e, None));
    assert!(text.contains(&format!(r#""metadata":{METADATA}"#)), "{text}");
    assert_eq!(v["config"], json!({"s3.access-key-id": "AKIA", "client.region": "r"}));
    assert_eq!(
        v["storage-credentials"],
        json!([{"prefix": "s3://lake/data/t", "config": {"s3.access-key-id": "DATA"}}])
    );

    let (text, v) = render(body(r#","unknown":{"kept":true}"#), &rules(Action::Strip, &e, None));
    assert!(text.contains(&format!(r#""metadata":{METADATA}"#)));
    assert_eq!(v["config"], json!({"client.region": "r"}));
    assert_eq!(v["storage-credentials"], json!([]));
    assert_eq!(v["unknown"], json!({"kept": true}));
}

#[test]
fn minted_credentials_are_added_where_the_upstream_sent_none() {
    let e = endpoints();
    let m = Minted {
        access_key_id: "ASIA".into(),
        secret_access_key: "s".into(),
        session_token: "t".into(),
        expiration_ms: 1,
    };
    let bare = Bytes::from(format!(r#"{{"metadata-location":"m","metadata":{METADATA}}}"#));
    let (_, v) = render(bare, &rules(Action::Downscope(Scope::Read), &e, Some(&m)));
    assert_eq!(v["config"]["s3.access-key-id"], "ASIA");
    let prefixes: Vec<&str> =
        v["storage-credentials"].as_array().unwrap().iter().map(|c| c["prefix"].as_str().unwrap()).collect();
    assert_eq!(prefixes, ["s3://lake/wh/db/t", "s3://lake/data/t"]);
}

#[test]
fn vending_is_recognized_in_either_place() {
    let e = endpoints();
    let r = rules(Action::Keep, &e, None);
    assert!(Parsed::read(&body("")).unwrap().vends(&r));
    let config_only = Bytes::from_static(br#"{"config":{"gcs.oauth2.token":"g"}}"#);
    assert!(Parsed::read(&config_only).unwrap().vends(&r));
    let nothing = Bytes::from_static(br#"{"config":{"client.region":"r","token":"t"},"storage-credentials":[]}"#);
    assert!(!Parsed::read(&nothing).unwrap().vends(&r));
}

#[test]
fn a_response_whose_credential_parts_do_not_parse_is_refused() {
    for bad in [
        &br#"{"config":[]}"#[..],
        br#"{"config":{"k":"v"},"storage-credentials":[{"config":{}}]}"#,
        br#"{"storage-credentials":{}}"#,
        br#"{"metadata":{"location":7}}"#,
        br#"{"metadata":{"location":"x"},"metadata":{}}"#,
        br#"{"metadata":{"location":"x"]}"#,
        br#"{"config":{"token":"t","k":"v","token":"t2"}}"#,
        br#"{"storage-credentials":[{"prefix":"s3://b","config":{"k":"v","\u006b":"w"}}]}"#,
        b"",
    ] {
        assert!(Parsed::read(&Bytes::from_static(bad)).is_err(), "{}", String::from_utf8_lossy(bad));
    }
}

/// `config` is read in place: what icegate keeps of it is the upstream's keys in the upstream's
/// order with their values as the upstream wrote them; what icegate writes goes in place or last.
#[test]
fn a_rewritten_config_keeps_the_upstreams_order_and_spelling() {
    let e = endpoints();
    let upstream = Bytes::from(format!(
        r#"{{"metadata":{METADATA},"config":{{"z.key":"\u0041","client.region":"r","token":"t","client.refresh-credentials-endpoint":"old","a.key":"b"}}}}"#
    ));
    let (text, _) = render(upstream, &rules(Action::Keep, &e, None));
    assert!(
        text.ends_with(r#""config":{"z.key":"\u0041","client.region":"r","client.refresh-credentials-endpoint":"v1/c","a.key":"b"}}"#),
        "{text}"
    );
}

/// hyper sends at most 16 queued buffers per `writev`: a rewritten response of one-byte
/// separators and small members used to go out in two system calls and two TCP segments.
#[test]
fn a_rewritten_response_is_a_few_buffers_the_large_metadata_one_uncopied() {
    let e = endpoints();
    let big = format!(r#"{{"location":"s3://lake/wh/db/t","pad":"{}"}}"#, "x".repeat(64 * 1024));
    let upstream = Bytes::from(format!(
        r#"{{"metadata-location":"m","metadata":{big},"config":{{"s3.access-key-id":"AKIA","client.region":"r"}},"storage-credentials":[],"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8}}"#
    ));
    let parsed = Parsed::read(&upstream).unwrap();
    let locations = parsed.locations.clone().unwrap();
    let out = parsed.render(&rules(Action::Strip, &e, None), &locations).unwrap();
    assert_eq!(out.part_count(), 3, "small parts before and after the metadata, the metadata itself");
    let metadata = out.parts.get(1).unwrap();
    let at = upstream.windows(big.len()).position(|w| w == big.as_bytes()).unwrap();
    assert_eq!(metadata.as_ptr(), upstream[at - br#""metadata":"#.len()..].as_ptr(), "a slice, not a copy");
    assert_eq!(out.len(), out.concat().len());
}

/// hyper writes its queue out once it holds more than 16 KiB: a 20 KB table of three parts
/// went out in two `writev`s.
#[test]
fn a_small_rewritten_response_is_one_buffer() {
    let e = endpoints();
    let big = format!(r#"{{"location":"s3://lake/wh/db/t","pad":"{}"}}"#, "x".repeat(20 * 1024));
    let upstream = Bytes::from(format!(
        r#"{{"metadata-location":"m","metadata":{big},"config":{{"s3.access-key-id":"AKIA","client.region":"r"}}}}"#
    ));
    let parsed = Parsed::read(&upstream).unwrap();
    let locations = parsed.locations.clone().unwrap();
    let out = parsed.render(&rules(Action::Strip, &e, None), &locations).unwrap();
    assert_eq!(out.part_count(), 1);
    let whole = out.concat();
    assert_eq!(out.len(), whole.len());
    let v: serde_json::Value = serde_json::from_slice(&whole).unwrap();
    assert_eq!(v["config"], serde_json::json!({"client.region": "r"}));
    assert_eq!(v["metadata"]["pad"].as_str().map(str::len), Some(20 * 1024));
}

/// What reading `body` gives, resumed or not: the table's locations and the rewritten bytes
/// under each action, or the error.
type Outcome = Result<(Option<Vec<String>>, Vec<u8>), EnvelopeError>;

fn outcome(body: &Bytes, earlier: Option<&Prefix>) -> Vec<Outcome> {
    let e = endpoints();
    [Action::Keep, Action::Strip, Action::Sign]
        .into_iter()
        .map(|action| {
            let (parsed, _) = Parsed::read_resuming(body, earlier, usize::MAX)?;
            let locations = parsed.locations.clone();
            let rendered = parsed.render(&rules(action, &e, None), locations.as_deref().unwrap_or_default())?;
            Ok((locations, rendered.concat()))
        })
        .collect()
}

/// The locations kept with a prefix serve only an answer whose metadata is the kept one's,
/// byte for byte: one with another `location` or another `write.data.path` is read anew.
#[test]
fn locations_kept_with_a_prefix_serve_only_the_same_metadata() {
    let first = body("");
    let (read, learned) = Parsed::read_resuming(&first, None, usize::MAX).unwrap();
    let prefix = learned.expect("a table answer's scan is kept");
    let expected = vec!["s3://lake/wh/db/t".to_owned(), "s3://lake/data/t".to_owned()];
    assert_eq!(read.locations.as_ref(), Some(&expected));
    assert_eq!(prefix.locations(), Some(expected.as_slice()), "kept with the prefix");
    let again = body(r#","extra":1"#);
    let (resumed, learned) = Parsed::read_resuming(&again, Some(&prefix), usize::MAX).unwrap();
    assert!(learned.is_none(), "the same metadata resumes");
    assert_eq!(resumed.locations, Some(expected));
    let text = String::from_utf8(first.to_vec()).unwrap();
    for (from, to) in [("s3://lake/wh/db/t\"", "s3://lake/wh/db/u\""), ("s3://lake/data/t", "s3://other/data/t")] {
        let moved = Bytes::from(text.replacen(from, to, 1));
        let (read, learned) = Parsed::read_resuming(&moved, Some(&prefix), usize::MAX).unwrap();
        assert!(learned.is_some(), "other metadata is scanned anew: {to}");
        assert_eq!(read.locations, Parsed::read(&moved).unwrap().locations);
        assert!(read.locations.unwrap().iter().any(|l| l.contains(to.trim_end_matches('"'))), "{to}");
    }
}

/// The security of resuming: for answers that differ from the kept one by one byte anywhere
/// from just inside its metadata to its end (or are cut there), the rewrite or the refusal is
/// byte for byte the full read's.
#[test]
fn a_resumed_read_rewrites_and_refuses_byte_for_byte_as_a_full_read() {
    let first = body(r#","remote-signing-config":{"uri":"https://s"}"#);
    let (_, learned) = Parsed::read_resuming(&first, None, usize::MAX).unwrap();
    let prefix = learned.expect("a table answer's scan is kept");
    let end = first.windows(METADATA.len()).position(|w| w == METADATA.as_bytes()).unwrap() + METADATA.len();
    let (mut resumed, mut refused) = (0, 0);
    for at in end - 3..first.len() {
        for byte in b"{}[]\",: \\a1\x00-".iter().copied() {
            let mut second = first.to_vec();
            second[at] = byte;
            for second in [Bytes::from(second), first.slice(..at)] {
                let full = outcome(&second, None);
                // read and not learned anew: resumed
                let read = Parsed::read_resuming(&second, Some(&prefix), usize::MAX);
                resumed += usize::from(matches!(read, Ok((_, None))));
                refused += usize::from(full.iter().all(Result::is_err));
                assert_eq!(outcome(&second, Some(&prefix)), full, "{}", String::from_utf8_lossy(&second));
            }
        }
    }
    assert!(resumed > 1000 && refused > 1000, "{resumed} resumed, {refused} refused");
}
