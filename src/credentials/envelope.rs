//! The top level of a credential-bearing response, read by a structural scan: each member's
//! key and the byte span of its value. Only the small parts (`config`, `storage-credentials`,
//! the table's `location` and `properties`) are parsed; `metadata` is walked once, to find its
//! end and those two members, and passes through byte for byte.

use std::ops::Range;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum EnvelopeError {
    #[error("upstream response is not a JSON object")]
    NotAnObject,
    #[error("upstream response is malformed at byte {0}")]
    Malformed(usize),
    #[error("upstream response has the member `{0}` twice")]
    Duplicate(String),
    #[error("upstream response member `{key}` is invalid: {message}")]
    Member { key: String, message: String },
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
        let mut s = Scanner { bytes, at: 0 };
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

/// Parses one member's value (a small part, never `metadata`).
pub fn parse<T: serde::de::DeserializeOwned>(bytes: &[u8], member: &Member) -> Result<T, EnvelopeError> {
    let raw = bytes.get(member.value.clone()).ok_or(EnvelopeError::Malformed(member.value.start))?;
    serde_json::from_slice(raw).map_err(|e| EnvelopeError::Member { key: member.key.clone(), message: e.to_string() })
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
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
            let raw_key = self.string()?;
            let key: String = serde_json::from_slice(self.bytes.get(raw_key).unwrap_or_default())
                .map_err(|_| EnvelopeError::Malformed(start))?;
            if members.iter().any(|m| m.key == key) {
                return Err(EnvelopeError::Duplicate(key));
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

    /// A string at the cursor; returns its span with the quotes. Escapes are skipped, not
    /// decoded: only where the string ends matters here.
    fn string(&mut self) -> Result<Range<usize>, EnvelopeError> {
        let start = self.at;
        if self.peek() != Some(b'"') {
            return Err(EnvelopeError::Malformed(start));
        }
        let mut i = start + 1;
        // Most strings of table metadata are short: a plain loop finds their end before a
        // vectorized search would have set up. Longer ones fall through to `memchr2`.
        let short_end = (i + SHORT_STRING).min(self.bytes.len());
        while i < short_end {
            match self.bytes.get(i) {
                Some(b'"') => {
                    self.at = i + 1;
                    return Ok(start..self.at);
                }
                Some(b'\\') => i += 2,
                _ => i += 1,
            }
        }
        loop {
            let rest = self.bytes.get(i..).unwrap_or_default();
            match memchr::memchr2(b'"', b'\\', rest) {
                None => return Err(EnvelopeError::Malformed(start)),
                Some(n) if rest.get(n) == Some(&b'\\') => i += n + 2,
                Some(n) => {
                    self.at = i + n + 1;
                    return Ok(start..self.at);
                }
            }
        }
    }

    /// Any value at the cursor, by structure alone: strings end where they end, brackets
    /// balance and match, and a scalar is a run of the characters a literal or number uses.
    fn value(&mut self) -> Result<(), EnvelopeError> {
        let mut closers: Vec<u8> = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                Some(b'"') => {
                    self.string()?;
                }
                Some(open @ (b'{' | b'[')) => {
                    closers.push(if open == b'{' { b'}' } else { b']' });
                    self.at += 1;
                    continue;
                }
                Some(close @ (b'}' | b']')) if closers.last() == Some(&close) => {
                    closers.pop();
                    self.at += 1;
                }
                Some(b) if is_scalar(b) => {
                    while self.peek().is_some_and(is_scalar) {
                        self.at += 1;
                    }
                }
                _ => return Err(EnvelopeError::Malformed(self.at)),
            }
            if closers.is_empty() {
                return Ok(());
            }
            // Inside a container: the next token is a separator, or its end.
            self.skip_ws();
            match self.peek() {
                Some(b',' | b':') => self.at += 1,
                Some(b'}' | b']') => {}
                _ => return Err(EnvelopeError::Malformed(self.at)),
            }
        }
    }
}

/// Strings up to this long are scanned byte by byte.
const SHORT_STRING: usize = 24;

fn is_scalar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
}

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
        let location: String = parse(body, env.metadata_member("location").unwrap()).unwrap();
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

    #[test]
    fn duplicate_keys_are_refused_even_when_escaped_differently() {
        let err = Envelope::scan(br#"{"config":{},"con\u0066ig":{"s3.secret-access-key":"x"}}"#).unwrap_err();
        assert_eq!(err, EnvelopeError::Duplicate("config".into()));
        assert!(Envelope::scan(br#"{"metadata":{"location":"a","location":"b"}}"#).is_err());
    }
}
