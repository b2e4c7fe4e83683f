//! The top level of a credential-bearing response, read by a structural scan: each member's
//! key and the byte span of its value. Only the small parts (`config`, `storage-credentials`,
//! the table's `location` and `properties`) are parsed; `metadata` is walked once, to find its
//! end and those two members, and passes through byte for byte.

use marks::Marks;
use std::ops::Range;
use thiserror::Error;

mod marks;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum EnvelopeError {
    #[error("upstream response is not a JSON object")]
    NotAnObject,
    #[error("upstream response is malformed at byte {0}")]
    Malformed(usize),
    /// The byte at which the repeated key starts (the key itself is the upstream's text).
    #[error("upstream response has a member twice (the second at byte {0})")]
    Duplicate(usize),
    /// `key` is the name icegate looked the member up by; nothing of its value is quoted.
    #[error("upstream response member `{key}` is not {expected}")]
    Member { key: String, expected: &'static str },
}

/// One member of an object: its decoded key, the span of the whole member (key through value)
/// and of its value alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub key: String,
    pub span: Range<usize>,
    pub value: Range<usize>,
}

/// A scanned response: its top-level members, and the members of `metadata` when it is an
/// object.
#[derive(Debug, Default)]
pub struct Envelope {
    pub members: Vec<Member>,
    pub metadata: Vec<Member>,
}

impl Envelope {
    /// Invariant: keys are unique at both levels (a duplicate is refused by `scan`), so the one
    /// member icegate rewrites is the one every client reads.
    pub fn scan(bytes: &[u8]) -> Result<Self, EnvelopeError> {
        let mut s = Scanner { bytes, at: 0, closers: Vec::with_capacity(16), marks: Marks::default() };
        s.skip_ws();
        if s.peek() != Some(b'{') {
            return Err(EnvelopeError::NotAnObject);
        }
        let mut metadata = Vec::new();
        let members = s.object(|s, key| {
            if key == "metadata" && s.peek() == Some(b'{') {
                metadata = s.object(|s, _| s.value())?;
                Ok(())
            } else {
                s.value()
            }
        })?;
        s.skip_ws();
        if s.at != bytes.len() {
            return Err(EnvelopeError::Malformed(s.at));
        }
        Ok(Self { members, metadata })
    }

    pub fn member(&self, key: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.key == key)
    }

    pub fn metadata_member(&self, key: &str) -> Option<&Member> {
        self.metadata.iter().find(|m| m.key == key)
    }
}

/// Parses one member's value (a small part, never `metadata`); `expected` says in icegate's
/// words what it must be, for the error (serde's message would quote the upstream's value).
pub fn parse<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    member: &Member,
    expected: &'static str,
) -> Result<T, EnvelopeError> {
    let raw = bytes.get(member.value.clone()).ok_or(EnvelopeError::Malformed(member.value.start))?;
    serde_json::from_slice(raw).map_err(|_| EnvelopeError::Member { key: member.key.clone(), expected })
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The closing brackets `value` still expects, innermost last; kept between values so
    /// that a response costs one allocation, not one per nested value.
    closers: Vec<u8>,
    marks: Marks,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        self.at = skip_ws(self.bytes, self.at);
    }

    fn expect(&mut self, byte: u8) -> Result<(), EnvelopeError> {
        self.skip_ws();
        if self.peek() != Some(byte) {
            return Err(EnvelopeError::Malformed(self.at));
        }
        self.at += 1;
        Ok(())
    }

    /// An object at the cursor; `value(scanner, key)` consumes each member's value.
    fn object(
        &mut self,
        mut value: impl FnMut(&mut Self, &str) -> Result<(), EnvelopeError>,
    ) -> Result<Vec<Member>, EnvelopeError> {
        self.expect(b'{')?;
        let mut members: Vec<Member> = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(members);
        }
        loop {
            self.skip_ws();
            let start = self.at;
            if self.peek() != Some(b'"') {
                return Err(EnvelopeError::Malformed(start));
            }
            self.at = self.marks.string_end(self.bytes, start)?;
            let key = decode_key(self.bytes.get(start..self.at).unwrap_or_default())
                .ok_or(EnvelopeError::Malformed(start))?;
            if members.iter().any(|m| m.key == key) {
                return Err(EnvelopeError::Duplicate(start));
            }
            self.expect(b':')?;
            self.skip_ws();
            let value_start = self.at;
            value(self, &key)?;
            members.push(Member { key, span: start..self.at, value: value_start..self.at });
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(members);
                }
                _ => return Err(EnvelopeError::Malformed(self.at)),
            }
        }
    }

    /// Any value at the cursor, by structure alone: strings end where they end, brackets
    /// balance and match, and a scalar is a run of the characters a literal or number uses.
    /// Most of a large response passes through here, so it works on a local index and one
    /// table lookup per token (the `reference` scanner is the same grammar, written plainly).
    fn value(&mut self) -> Result<(), EnvelopeError> {
        let bytes = self.bytes;
        let mut i = self.at;
        self.closers.clear();
        loop {
            let (at, class) = token(bytes, i);
            i = at;
            match class {
                QUOTE => i = self.marks.string_end(bytes, i)?,
                OPEN => {
                    // `{` + 2 is `}`, `[` + 2 is `]`.
                    self.closers.push(bytes.get(i).map_or(0, |b| b + 2));
                    i += 1;
                    continue;
                }
                CLOSE if self.closers.last() == bytes.get(i) => {
                    self.closers.pop();
                    i += 1;
                }
                SCALAR => {
                    i += 1;
                    while class_at(bytes, i) == SCALAR {
                        i += 1;
                    }
                }
                _ => return Err(EnvelopeError::Malformed(i)),
            }
            if self.closers.is_empty() {
                self.at = i;
                return Ok(());
            }
            // Inside a container: the next token is a separator, or its end.
            let (at, class) = token(bytes, i);
            i = at;
            match class {
                SEPARATOR => i += 1,
                CLOSE => {}
                _ => return Err(EnvelopeError::Malformed(i)),
            }
        }
    }
}

/// Byte classes: what a token starting with the byte is. `OTHER` (and the end of the input)
/// is never valid where a token is expected.
const OTHER: u8 = 0;
const WS: u8 = 1;
const SCALAR: u8 = 2;
const QUOTE: u8 = 3;
const OPEN: u8 = 4;
const CLOSE: u8 = 5;
const SEPARATOR: u8 = 6;

/// Each byte's class: JSON whitespace, a character of a literal or number, a quote, a bracket,
/// a separator, or none of these.
#[expect(clippy::indexing_slicing, reason = "INVARIANT: the loop runs `b` over 0..256, the table's indices")]
static CLASS: [u8; 256] = {
    let mut table = [OTHER; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = match c {
            b' ' | b'\t' | b'\n' | b'\r' => WS,
            b'"' => QUOTE,
            b'{' | b'[' => OPEN,
            b'}' | b']' => CLOSE,
            b',' | b':' => SEPARATOR,
            b'-' | b'+' | b'.' => SCALAR,
            _ if c.is_ascii_alphanumeric() => SCALAR,
            _ => OTHER,
        };
        b += 1;
    }
    table
};

fn class_at(bytes: &[u8], i: usize) -> u8 {
    bytes.get(i).and_then(|&b| CLASS.get(usize::from(b))).copied().unwrap_or(OTHER)
}

/// The next token at or after `i` (past whitespace) and its class.
fn token(bytes: &[u8], mut i: usize) -> (usize, u8) {
    loop {
        let class = class_at(bytes, i);
        if class != WS {
            return (i, class);
        }
        i += 1;
    }
}

fn skip_ws(bytes: &[u8], i: usize) -> usize {
    token(bytes, i).0
}

/// A member's key from its quoted form. A key without escapes (all of them, in practice) is
/// its bytes; one with escapes goes through serde_json. Both refuse what serde_json refuses:
/// control characters and bytes that are not UTF-8.
fn decode_key(quoted: &[u8]) -> Option<String> {
    let inner = quoted.get(1..quoted.len().checked_sub(1)?)?;
    if inner.iter().any(|&b| b == b'\\' || b < 0x20) {
        return serde_json::from_slice(quoted).ok();
    }
    std::str::from_utf8(inner).ok().map(str::to_owned)
}

#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(members: &[Member]) -> Vec<&str> {
        members.iter().map(|m| m.key.as_str()).collect()
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
    fn jsonish_long() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
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
        #![proptest_config(ProptestConfig::with_cases(2000))]

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
            prop_assert_eq!(decode_key(&quoted), serde_json::from_slice::<String>(&quoted).ok());
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
}
