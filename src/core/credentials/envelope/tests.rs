//! The fast scanner against the reference scanner, and the envelope's own behaviour.

use super::*;

fn keys<'a>(members: &'a [Member<'_>]) -> Vec<&'a str> {
    members.iter().map(|m| m.key.as_ref()).collect()
}

#[test]
fn members_and_metadata_members_are_found_with_their_spans() {
    let body = br#" { "metadata-location":"m.json", "metadata" : {"location":"s3://b/t","a":[1,{"x":"}"}],"properties":{"k":"v"}},
            "config":{"token":"t\"}"}, "e\u0301":null } "#;
    let env = Envelope::scan(body).unwrap();
    assert_eq!(keys(&env.members), ["metadata-location", "metadata", "config", "e\u{301}"]);
    assert_eq!(keys(&env.metadata), ["location", "a", "properties"]);
    let config = env.member("config").unwrap();
    assert_eq!(&body[config.value.clone()], br#"{"token":"t\"}"}"#);
    assert_eq!(&body[config.span.clone()], br#""config":{"token":"t\"}"}"#);
    let location: String = parse(body, env.metadata_member("location").unwrap(), "a string").unwrap();
    assert_eq!(location, "s3://b/t");
}

#[test]
fn a_broken_envelope_is_refused() {
    for bad in [
        &b"[1]"[..],
        b"",
        b"{",
        br#"{"a":1"#,
        br#"{"a":[1}"#,
        br#"{"a":{"b":1]}"#,
        br#"{"a":"x}"#,
        br#"{"a":1} x"#,
        br#"{"a" 1}"#,
        br#"{"a":1,}"#,
        br#"{a:1}"#,
        br#"{"a":1 2}"#,
        br#"{"metadata":{"x":[1,2}}"#,
    ] {
        assert!(Envelope::scan(bad).is_err(), "{}", String::from_utf8_lossy(bad));
    }
}

/// Where the value at `at` ends, by the fast scanner.
fn value_end(bytes: &[u8], at: usize) -> Result<usize, EnvelopeError> {
    let mut s = Scanner { bytes, at, closers: Vec::new(), marks: Marks::default() };
    s.value()?;
    Ok(s.at)
}

/// Bytes that make up JSON's structure, and some that break it.
const PIECES: [&[u8]; 22] = [
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b"\\\"",
    b",",
    b":",
    b" ",
    b"\n",
    b"a",
    b"1",
    b"-2.5e+3",
    b"true",
    b"null",
    b"\"k\":",
    b"\"plain string of some length\"",
    b"\xc3\xa9",
    b"\x01",
    b"/",
    b"#",
];

/// Values of up to 40 [`PIECES`].
fn jsonish() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    proptest::collection::vec(proptest::sample::select(PIECES.to_vec()), 0..40).prop_map(|p| p.concat())
}

/// [`jsonish`] at the lengths where strings cross the 64-byte blocks of [`Marks`], with long
/// runs of string content, backslash runs of both parities, more multi-byte UTF-8 and bytes
/// that are not UTF-8.
pub(super) fn jsonish_long() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    let mut pieces = PIECES.to_vec();
    pieces.extend_from_slice(&[
        b"\\\\",
        b"\\\\\"",
        b"s3://lake/wh/db/t/metadata/snap-1-1-4d3c2b1a.avro",
        b"a plain run of string content that is longer than one block of sixty-four bytes",
        b"\xf0\x9f\x98\x80",
        b"\xff\xfe",
    ]);
    proptest::collection::vec(proptest::sample::select(pieces), 0..120).prop_map(|p| p.concat())
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn long_values_end_and_fail_where_the_reference_does(bytes in jsonish_long(), at in 0usize..80) {
        prop_assert_eq!(value_end(&bytes, at), reference::value_end(&bytes, at));
    }
}

proptest! {
    #[test]
    fn the_fast_scanner_ends_and_fails_where_the_reference_does(bytes in jsonish(), at in 0usize..4) {
        prop_assert_eq!(value_end(&bytes, at), reference::value_end(&bytes, at));
    }

    #[test]
    fn keys_decode_as_serde_json_decodes_them(bytes in proptest::collection::vec(any::<u8>(), 0..24), escaped in any::<bool>()) {
        let mut quoted = vec![b'"'];
        quoted.extend(bytes.iter().filter(|&&b| b != b'"' && (escaped || b != b'\\')));
        quoted.push(b'"');
        prop_assert_eq!(decode_key(&quoted).map(std::borrow::Cow::into_owned), serde_json::from_slice::<String>(&quoted).ok());
    }
}

#[test]
fn a_realistic_response_scans_as_the_reference_scans_it() {
    let body = serde_json::json!({
        "metadata-location": "s3://b/t/metadata/00001.json",
        "metadata": {"location": "s3://b/t", "schemas": [{"fields": [{"id": 1, "name": "a \"quoted\" \\ name", "required": true, "type": "long"}]}],
                     "snapshots": [{"snapshot-id": -12, "summary": {"x": "{[\"]}"}}], "properties": {"k": "v"}},
        "config": {"token": "t"},
    })
    .to_string();
    let bytes = body.as_bytes();
    for at in 0..bytes.len() {
        assert_eq!(value_end(bytes, at), reference::value_end(bytes, at), "at {at}");
    }
}

/// A string whose end lies at each offset of a block, and one that runs out at the input's
/// end in each position: the bit search of [`Marks`] crosses blocks as the byte loop does.
#[test]
fn strings_end_where_the_reference_ends_them_at_every_block_offset() {
    for pad in 0..130 {
        for body in [&b"x"[..], b"\\\"", b"\\\\", b"\\"] {
            let mut bytes = vec![b' '; pad];
            bytes.extend_from_slice(b"[\"");
            bytes.extend_from_slice(body);
            for closed in [true, false] {
                let mut input = bytes.clone();
                if closed {
                    input.extend_from_slice(b"\"]");
                }
                assert_eq!(value_end(&input, pad), reference::value_end(&input, pad), "pad {pad} {input:?}");
                assert_eq!(value_end(&input, 0), reference::value_end(&input, 0));
            }
        }
    }
}

#[test]
fn duplicate_keys_are_refused_even_when_escaped_differently() {
    let err = Envelope::scan(br#"{"config":{},"con\u0066ig":{"s3.secret-access-key":"x"}}"#).unwrap_err();
    assert_eq!(err, EnvelopeError::Duplicate(13));
    assert!(!err.to_string().contains("config"), "the upstream's key is not quoted: {err}");
    assert!(Envelope::scan(br#"{"metadata":{"location":"a","location":"b"}}"#).is_err());
}

/// `input` and each of its prefixes scan as the reference scans them, from the first byte and
/// from `at`: every way the input can run out (inside a string, a scalar, an escape, a nested
/// container, in the last short block or at a block's end) ends or fails where it does.
fn assert_prefixes_scan_as_the_reference(input: &[u8], at: usize) {
    for len in 0..=input.len() {
        let prefix = &input[..len];
        for start in [0, at] {
            assert_eq!(
                value_end(prefix, start),
                reference::value_end(prefix, start),
                "from {start}: {}",
                String::from_utf8_lossy(prefix)
            );
        }
    }
}

/// A container after `pad` spaces: its tokens, escapes and brackets fall on each offset of a
/// 64-byte block.
fn padded(pad: usize, container: &[u8]) -> Vec<u8> {
    let mut bytes = vec![b' '; pad];
    bytes.extend_from_slice(container);
    bytes
}

#[test]
fn backslash_runs_straddling_blocks_escape_as_the_reference_escapes() {
    for pad in 0..70 {
        for run in 0..6 {
            // A string whose backslash run ends on each offset, then a quote it may escape.
            let mut container = b"[\"ab".to_vec();
            container.extend(std::iter::repeat_n(b'\\', run));
            container.extend_from_slice(b"\"],\"x\"]");
            assert_prefixes_scan_as_the_reference(&padded(pad, &container), pad);
        }
    }
}

#[test]
fn tokens_straddling_blocks_end_where_the_reference_ends_them() {
    for pad in 0..70 {
        for container in [
            &br#"[-12345.678e+9,true , null,"a\"b",{"k":[]}]"#[..],
            br#"{"k":123456789012345678901234567890}"#,
            b"[1\x01]",
            b"[1 2]",
            b"[1,]",
            br#"["a""b"]"#,
            b"[\"\xc3\xa9\xff\",\"\\\xc3\xa9\"]",
            b"[/]",
        ] {
            assert_prefixes_scan_as_the_reference(&padded(pad, container), pad);
        }
    }
}

#[test]
fn deep_nesting_across_blocks_matches_and_fails_as_the_reference_does() {
    let depth = 150;
    let mut nested = Vec::new();
    for d in 0..depth {
        nested.push(if d % 3 == 0 { b'{' } else { b'[' });
        if d % 3 == 0 {
            nested.extend_from_slice(b"\"k\":");
        }
    }
    nested.extend_from_slice(b"\"deep\"");
    let closing: Vec<u8> = (0..depth).rev().map(|d| if d % 3 == 0 { b'}' } else { b']' }).collect();
    let mut whole = nested.clone();
    whole.extend_from_slice(&closing);
    assert_eq!(value_end(&whole, 0), Ok(whole.len()));
    assert_prefixes_scan_as_the_reference(&whole, 0);
    // A closing bracket of the wrong kind at each depth.
    for d in 0..depth {
        let mut broken = nested.clone();
        broken.extend_from_slice(&closing);
        let at = nested.len() + d;
        broken[at] = if broken[at] == b'}' { b']' } else { b'}' };
        assert_eq!(value_end(&broken, 0), Err(EnvelopeError::Malformed(at)), "depth {d}");
        assert_eq!(value_end(&broken, 0), reference::value_end(&broken, 0), "depth {d}");
    }
}

/// [`jsonish_long`] inside a container that starts on any offset of a block, cut anywhere.
fn containers() -> impl Strategy<Value = (Vec<u8>, usize)> {
    (0usize..130, jsonish_long(), any::<bool>(), any::<prop::sample::Index>()).prop_map(|(pad, body, close, cut)| {
        let mut bytes = vec![b' '; pad];
        bytes.push(if pad % 2 == 0 { b'[' } else { b'{' });
        bytes.extend_from_slice(&body);
        if close {
            bytes.push(if pad % 2 == 0 { b']' } else { b'}' });
        }
        let keep = pad + 1 + cut.index(bytes.len() - pad);
        bytes.truncate(keep);
        (bytes, pad)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn containers_anywhere_in_a_block_end_and_fail_where_the_reference_does((bytes, at) in containers()) {
        prop_assert_eq!(value_end(&bytes, at), reference::value_end(&bytes, at));
    }
}
