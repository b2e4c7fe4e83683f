//! Path canonicalization: how icegate and the upstream's Java stack (Jersey and Iceberg's
//! `RESTUtil`) read a raw target alike. Whatever the two could read differently is refused
//! here (400), before anything is authorized (DESIGN.md §7).

use super::names::NameError;
use thiserror::Error;

/// A target that the two sides could read differently (400).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PathError {
    #[error("request target `{0}` is not in origin form (it must start with `/`)")]
    AbsoluteForm(String),
    #[error("request target contains `#`")]
    Fragment,
    #[error("path has an empty segment or a trailing slash")]
    EmptySegment,
    #[error("path segment `{0}` contains `;` (matrix parameters are not accepted)")]
    Semicolon(String),
    #[error("path segment `{segment}` contains the character `{ch}`, which must be percent-encoded")]
    BadCharacter { segment: String, ch: char },
    #[error("`{0}` has a malformed percent escape")]
    MalformedEscape(String),
    #[error("`{0}` contains `%25` (double encoding)")]
    DoubleEncoding(String),
    #[error("path segment `{0}` contains an encoded `/` or `\\`")]
    EncodedSeparator(String),
    #[error("path segment `{0}` contains an encoded `;`")]
    EncodedSemicolon(String),
    #[error("path segment `{0}` contains an encoded `#`")]
    EncodedHash(String),
    #[error("`{0}` does not decode to UTF-8")]
    NotUtf8(String),
    #[error("`{0}` decodes to a control character")]
    Control(String),
    #[error("path segment `{0}` is a dot segment")]
    DotSegment(String),
    #[error("`{0}` contains a lower-case `%1f`; namespace levels are separated by `%1F`")]
    LowerCaseSeparator(String),
    #[error("path segment `{0}` spells a route literal with percent escapes")]
    EncodedLiteral(String),
    #[error("invalid name in path: {0}")]
    Name(#[from] NameError),
    #[error("`{0}` must name exactly one object, not several levels")]
    NotOneLevel(String),
    #[error("query parameter `{0}` is repeated")]
    RepeatedParameter(String),
    #[error("query parameter `pageSize` must be a positive integer, got `{0}`")]
    BadPageSize(String),
    #[error("query string contains the character `{0}`, which must be percent-encoded")]
    BadQueryCharacter(char),
}

/// Characters allowed unencoded in a path segment (RFC 3986 pchar, less `;`).
fn is_pchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~!$&'()*+,=:@%".contains(c)
}

/// Checks a raw path segment's characters, before any decoding.
pub fn check_raw_segment(segment: &str) -> Result<(), PathError> {
    if segment.contains(';') {
        return Err(PathError::Semicolon(segment.to_owned()));
    }
    if let Some(ch) = segment.chars().find(|c| !is_pchar(*c)) {
        return Err(PathError::BadCharacter { segment: segment.to_owned(), ch });
    }
    if segment.contains("%1f") {
        return Err(PathError::LowerCaseSeparator(segment.to_owned()));
    }
    Ok(())
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

/// Percent-decodes `raw` once, form-style (`+` is a space). `strict` adds the path rules:
/// no `%25`, and no encoded `/`, `\`, `;` or `#`.
fn decode(raw: &str, strict: bool) -> Result<String, PathError> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'%' => {
                let (Some(h), Some(l)) =
                    (bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex))
                else {
                    return Err(PathError::MalformedEscape(raw.to_owned()));
                };
                let v = h << 4 | l;
                if strict {
                    match v {
                        b'%' => return Err(PathError::DoubleEncoding(raw.to_owned())),
                        b'/' | b'\\' => return Err(PathError::EncodedSeparator(raw.to_owned())),
                        b';' => return Err(PathError::EncodedSemicolon(raw.to_owned())),
                        b'#' => return Err(PathError::EncodedHash(raw.to_owned())),
                        _ => {}
                    }
                }
                out.push(v);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    let text = String::from_utf8(out).map_err(|_| PathError::NotUtf8(raw.to_owned()))?;
    if text.chars().any(char::is_control) {
        return Err(PathError::Control(raw.to_owned()));
    }
    Ok(text)
}

/// Decodes one part of a path segment (a whole segment, or one namespace level).
pub fn decode_path_part(raw: &str) -> Result<String, PathError> {
    let text = decode(raw, true)?;
    if text == "." || text == ".." {
        return Err(PathError::DotSegment(raw.to_owned()));
    }
    Ok(text)
}

/// Decodes a query-string key or value: malformed escapes, bad UTF-8 and control
/// characters are refused; `%25` is an ordinary `%` there.
pub fn decode_query_part(raw: &str) -> Result<String, PathError> {
    decode(raw, false)
}

/// A checked path segment: raw, and its parts split on the exact `%1F`, each decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment<'a> {
    pub raw: &'a str,
    pub parts: Vec<String>,
}

impl<'a> Segment<'a> {
    pub fn read(raw: &'a str) -> Result<Self, PathError> {
        if raw.is_empty() {
            return Err(PathError::EmptySegment);
        }
        check_raw_segment(raw)?;
        let parts = raw.split("%1F").map(decode_path_part).collect::<Result<Vec<_>, _>>()?;
        Ok(Self { raw, parts })
    }

    /// The one decoded value of a segment that names one thing.
    pub fn single(&self) -> Result<&str, PathError> {
        match self.parts.as_slice() {
            [one] => Ok(one),
            _ => Err(PathError::NotOneLevel(self.raw.to_owned())),
        }
    }
}

/// Percent-encodes a decoded name for the canonical form forwarded upstream: everything but
/// RFC 3986 unreserved characters is escaped, so the upstream decodes exactly `name`.
pub fn encode(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(raw: &str) -> Result<Vec<String>, PathError> {
        Segment::read(raw).map(|s| s.parts)
    }

    #[test]
    fn segments_decode_once_form_style() {
        assert_eq!(seg("orders").unwrap(), vec!["orders"]);
        assert_eq!(seg("a+b").unwrap(), vec!["a b"]);
        assert_eq!(seg("%63at").unwrap(), vec!["cat"]);
        assert_eq!(seg("eu%1Fde").unwrap(), vec!["eu", "de"]);
        assert_eq!(seg("main%7Cwarehouse").unwrap(), vec!["main|warehouse"]);
        assert_eq!(seg("x.y").unwrap(), vec!["x.y"]);
        assert_eq!(seg("caf%C3%A9").unwrap(), vec!["café"]);
    }

    #[test]
    fn attack_inputs_are_refused() {
        type Expect = fn(&PathError) -> bool;
        let cases: [(&str, Expect); 22] = [
            ("..", |e| matches!(e, PathError::DotSegment(_))),
            (".", |e| matches!(e, PathError::DotSegment(_))),
            ("%2e%2e", |e| matches!(e, PathError::DotSegment(_))),
            ("%2E.", |e| matches!(e, PathError::DotSegment(_))),
            ("a%2Fb", |e| matches!(e, PathError::EncodedSeparator(_))),
            ("a%2fb", |e| matches!(e, PathError::EncodedSeparator(_))),
            ("a%5Cb", |e| matches!(e, PathError::EncodedSeparator(_))),
            ("a\\b", |e| matches!(e, PathError::BadCharacter { .. })),
            ("a;b", |e| matches!(e, PathError::Semicolon(_))),
            ("a%3Bb", |e| matches!(e, PathError::EncodedSemicolon(_))),
            ("a%25", |e| matches!(e, PathError::DoubleEncoding(_))),
            ("orders%252F", |e| matches!(e, PathError::DoubleEncoding(_))),
            ("eu%1fde", |e| matches!(e, PathError::LowerCaseSeparator(_))),
            ("a%00b", |e| matches!(e, PathError::Control(_))),
            ("a%7Fb", |e| matches!(e, PathError::Control(_))),
            ("a%C2%85b", |e| matches!(e, PathError::Control(_))),
            ("a%FFb", |e| matches!(e, PathError::NotUtf8(_))),
            ("a%23b", |e| matches!(e, PathError::EncodedHash(_))),
            ("a%zzb", |e| matches!(e, PathError::MalformedEscape(_))),
            ("a%4", |e| matches!(e, PathError::MalformedEscape(_))),
            ("a b", |e| matches!(e, PathError::BadCharacter { .. })),
            ("", |e| matches!(e, PathError::EmptySegment)),
        ];
        for (raw, want) in cases {
            let e = seg(raw).unwrap_err();
            assert!(want(&e), "{raw:?}: {e:?}");
        }
        assert!(seg("a\u{1}b").is_err());
        assert!(seg("é").is_err(), "raw non-ASCII must be percent-encoded");
    }

    #[test]
    fn query_parts_accept_percent_but_not_controls() {
        assert_eq!(decode_query_part("100%25").unwrap(), "100%");
        assert_eq!(decode_query_part("a+b").unwrap(), "a b");
        assert!(decode_query_part("%0A").is_err());
        assert!(decode_query_part("%G0").is_err());
    }

    #[test]
    fn encode_round_trips_through_decode() {
        for name in ["orders", "a b", "x.y", "main|warehouse", "café", "a+b", "50%"] {
            assert_eq!(decode(&encode(name), false).unwrap(), name);
        }
        assert_eq!(encode("a b"), "a%20b");
    }
}
