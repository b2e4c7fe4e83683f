//! Path canonicalization: how icegate and the upstream's Java stack (Jersey and Iceberg's
//! `RESTUtil`) read a raw target alike. Whatever the two could read differently is refused
//! here (400), before anything is authorized (docs/design.md §7).

use super::names::NameError;
use smallvec::SmallVec;
use std::borrow::Cow;
use thiserror::Error;

/// A target that the two sides could read differently (400). Raw input is shown escaped, so a
/// control character sent in a target never reaches a log or a response as it is.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PathError {
    #[error("request target `{}` is not in origin form (it must start with `/`)", .0.escape_debug())]
    AbsoluteForm(String),
    #[error("request target contains `#`")]
    Fragment,
    #[error("path has an empty segment or a trailing slash")]
    EmptySegment,
    #[error("path segment `{}` contains `;` (matrix parameters are not accepted)", .0.escape_debug())]
    Semicolon(String),
    #[error("path segment `{}` contains `{}`, which is not allowed unencoded", .segment.escape_debug(), .ch.escape_debug())]
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
    #[error(transparent)]
    Name(#[from] NameError),
    #[error("`{0}` must name exactly one object, not several levels")]
    NotOneLevel(String),
    #[error("query parameter `{0}` is repeated")]
    RepeatedParameter(String),
    #[error("query parameter `pageSize` must be a positive integer that fits 32 bits, got `{0}`")]
    BadPageSize(String),
    #[error("query string contains `{}`, which is not allowed unencoded", .0.escape_debug())]
    BadQueryCharacter(char),
    #[error("query parameter `{0}` asks to override the request method, which icegate does not accept")]
    MethodOverride(String),
}

/// Bytes allowed unencoded in a path segment (RFC 3986 pchar, less `;`); every one is ASCII,
/// so a segment of them is checked byte by byte (every request reads several).
#[expect(clippy::indexing_slicing, reason = "INVARIANT: the loop runs `b` over 0..256, the table's indices")]
static PCHAR: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(c, b'-' | b'.' | b'_' | b'~' | b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',')
            || matches!(c, b'=' | b':' | b'@' | b'%');
        b += 1;
    }
    table
};

fn is_pchar(b: u8) -> bool {
    PCHAR.get(usize::from(b)).copied().unwrap_or(false)
}

/// Checks a raw path segment's characters, before any decoding.
pub fn check_raw_segment(segment: &str) -> Result<(), PathError> {
    if !segment.bytes().all(is_pchar) {
        if segment.contains(';') {
            return Err(PathError::Semicolon(segment.to_owned()));
        }
        // The first character that is not a pchar (one not ASCII is none).
        let ch = segment.chars().find(|c| !u8::try_from(*c).is_ok_and(is_pchar)).unwrap_or(char::REPLACEMENT_CHARACTER);
        return Err(PathError::BadCharacter { segment: segment.to_owned(), ch });
    }
    if segment.contains('%') && segment.contains("%1f") {
        return Err(PathError::LowerCaseSeparator(segment.to_owned()));
    }
    Ok(())
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

/// Which escapes [`decode`] refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Escapes {
    /// A path segment: no `%25`, and no encoded `/`, `\`, `;` or `#`.
    Path,
    /// A segment that may be a declared catalog prefix sent whole (docs/design.md §2): the path
    /// rules, less the refusal of an encoded `/`.
    Prefix,
    /// A query part: every escape is a character.
    Query,
}

/// Percent-decodes `raw` once, form-style (`+` is a space), refusing what `escapes` says.
fn decode(raw: &str, escapes: Escapes) -> Result<Cow<'_, str>, PathError> {
    let bytes = raw.as_bytes();
    // Printable ASCII without `%` or `+` decodes to itself, and holds no control character:
    // the usual name, read without a copy.
    if bytes.iter().all(|&b| (b' '..=b'~').contains(&b) && b != b'%' && b != b'+') {
        return Ok(Cow::Borrowed(raw));
    }
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
                if escapes != Escapes::Query {
                    match v {
                        b'%' => return Err(PathError::DoubleEncoding(raw.to_owned())),
                        b'/' if escapes == Escapes::Prefix => {}
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
    Ok(Cow::Owned(text))
}

/// Decodes one part of a path segment (a whole segment, or one namespace level).
pub fn decode_path_part(raw: &str) -> Result<Cow<'_, str>, PathError> {
    let text = decode(raw, Escapes::Path)?;
    if text == "." || text == ".." {
        return Err(PathError::DotSegment(raw.to_owned()));
    }
    Ok(text)
}

/// Decodes a path segment that may be a whole declared catalog prefix, whose `/` clients send
/// as `%2F` (docs/design.md §2): the rules of a path segment but that one. Only a prefix the policy
/// declares is read this way; anywhere else an encoded `/` is refused.
pub fn decode_prefix_segment(raw: &str) -> Result<Cow<'_, str>, PathError> {
    check_raw_segment(raw)?;
    decode(raw, Escapes::Prefix)
}

/// Decodes a query-string key or value: malformed escapes, bad UTF-8 and control
/// characters are refused; `%25` is an ordinary `%` there.
pub fn decode_query_part(raw: &str) -> Result<String, PathError> {
    decode(raw, Escapes::Query).map(Cow::into_owned)
}

/// A checked path segment: raw, and its decoded value, or its decoded levels when it may be a
/// `{namespace}`.
///
/// Parts borrow the raw text when it decodes to itself, and one part is held inline: reading
/// the usual path allocates nothing per segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment<'a> {
    pub raw: &'a str,
    pub parts: SmallVec<[Cow<'a, str>; 1]>,
}

impl<'a> Segment<'a> {
    /// A segment that names one thing: a `%1F` in it decodes to a control character (400).
    pub fn read(raw: &'a str) -> Result<Self, PathError> {
        Self::check(raw)?;
        Ok(Self { raw, parts: SmallVec::from_buf([decode_path_part(raw)?]) })
    }

    /// A segment that may be a `{namespace}`: levels split on the exact `%1F` before decoding,
    /// as Iceberg's `RESTUtil.decodeNamespace` does.
    pub fn read_levels(raw: &'a str) -> Result<Self, PathError> {
        Self::check(raw)?;
        let parts = if raw.contains('%') {
            raw.split("%1F").map(decode_path_part).collect::<Result<_, _>>()?
        } else {
            SmallVec::from_buf([decode_path_part(raw)?])
        };
        Ok(Self { raw, parts })
    }

    /// A segment that holds a whole declared catalog prefix, its `/` sent as `%2F` (docs/design.md
    /// §2): one part, decoded by [`decode_prefix_segment`].
    pub fn prefix(raw: &'a str) -> Result<Self, PathError> {
        Self::check(raw)?;
        Ok(Self { raw, parts: SmallVec::from_buf([decode_prefix_segment(raw)?]) })
    }

    /// The decoded parts, owned (a `{namespace}`'s levels).
    pub fn owned_parts(&self) -> Vec<String> {
        self.parts.iter().map(|p| p.as_ref().to_owned()).collect()
    }

    fn check(raw: &str) -> Result<(), PathError> {
        if raw.is_empty() {
            return Err(PathError::EmptySegment);
        }
        check_raw_segment(raw)
    }

    /// The one decoded value of a segment that names one thing.
    pub fn single(&self) -> Result<&str, PathError> {
        match self.parts.as_slice() {
            [one] => Ok(one.as_ref()),
            _ => Err(PathError::NotOneLevel(self.raw.to_owned())),
        }
    }
}

/// Percent-encodes a decoded name for the canonical form forwarded upstream: everything but
/// RFC 3986 unreserved characters is escaped, so the upstream decodes exactly `name`.
pub fn encode(name: &str) -> String {
    escape(name, is_unreserved)
}

/// `text` as an HTTP client puts a path it is given on the wire: every byte that is neither a
/// pchar nor `/` escaped, the rest (escapes included) as it is.
pub fn encode_for_path(text: &str) -> String {
    escape(text, |b| is_pchar(b) || b == b'/')
}

fn escape(text: &str, keep: impl Fn(u8) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if keep(b) {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(crate::core::text::hex_upper(b >> 4));
            out.push(crate::core::text::hex_upper(b));
        }
    }
    out
}

/// An RFC 3986 unreserved character: the only bytes [`encode`] leaves as they are.
pub fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(raw: &str) -> Result<Vec<String>, PathError> {
        Segment::read(raw).map(|s| s.owned_parts())
    }

    fn levels(raw: &str) -> Result<Vec<String>, PathError> {
        Segment::read_levels(raw).map(|s| s.owned_parts())
    }

    #[test]
    fn the_pchar_table_is_rfc3986_pchar_less_semicolon() {
        for b in 0..=255u8 {
            let pchar = b.is_ascii_alphanumeric() || "-._~!$&'()*+,=:@%".contains(char::from(b));
            assert_eq!(is_pchar(b), pchar, "byte {b:#04x}");
        }
        assert_eq!(
            check_raw_segment("caf\u{e9}"),
            Err(PathError::BadCharacter { segment: "caf\u{e9}".into(), ch: '\u{e9}' }),
            "the first character that is not a pchar is named, not its first byte"
        );
        assert!(matches!(check_raw_segment("a b;c"), Err(PathError::Semicolon(_))), "`;` is named first");
    }

    #[test]
    fn a_part_that_decodes_to_itself_is_borrowed_and_others_are_decoded() {
        for raw in ["orders", "x.y", "a:b@c!$&'()*,=~-_", "...", "a b", "~"] {
            assert!(matches!(decode(raw, Escapes::Path), Ok(Cow::Borrowed(r)) if r == raw), "{raw}");
        }
        for (raw, decoded) in [("a+b", "a b"), ("%41", "A"), ("a%2B", "a+")] {
            assert!(matches!(decode(raw, Escapes::Path), Ok(Cow::Owned(d)) if d == decoded), "{raw}");
        }
        assert!(matches!(decode("a\u{7f}", Escapes::Query), Err(PathError::Control(_))), "DEL is a control character");
        assert!(matches!(decode("a\tb", Escapes::Query), Err(PathError::Control(_))));
    }

    #[test]
    fn segments_decode_once_form_style() {
        assert_eq!(seg("orders").unwrap(), ["orders"]);
        assert_eq!(seg("a+b").unwrap(), ["a b"]);
        assert_eq!(seg("%63at").unwrap(), ["cat"]);
        assert_eq!(seg("main%7Cwarehouse").unwrap(), ["main|warehouse"]);
        assert_eq!(seg("x.y").unwrap(), ["x.y"]);
        assert_eq!(seg("...").unwrap(), ["..."], "only `.` and `..` are dot segments");
        assert_eq!(seg("caf%C3%A9").unwrap(), ["café"]);
        assert_eq!(seg("a%2B").unwrap(), ["a+"]);
        assert_eq!(seg("a:b@c!$&'()*,=~-_").unwrap(), ["a:b@c!$&'()*,=~-_"]);
    }

    #[test]
    fn levels_split_on_the_exact_upper_case_unit_separator() {
        assert_eq!(levels("eu%1Fde").unwrap(), ["eu", "de"]);
        assert_eq!(levels("sales").unwrap(), ["sales"]);
        assert_eq!(levels("a%1F").unwrap(), ["a", ""], "the empty level is refused by the name rules");
        assert!(matches!(levels("eu%1fde"), Err(PathError::LowerCaseSeparator(_))));
        assert!(matches!(levels("a%1F.."), Err(PathError::DotSegment(_))));
        assert!(matches!(levels("a%1F%2e"), Err(PathError::DotSegment(_))));
        assert!(matches!(levels("%%1F"), Err(PathError::MalformedEscape(_))));
        assert_eq!(levels("%41F").unwrap(), ["AF"], "`%1F` inside another escape is no separator");
        assert_eq!(Segment::read_levels("a%1Fb").unwrap().single(), Err(PathError::NotOneLevel("a%1Fb".into())));
    }

    #[test]
    fn attack_inputs_are_refused() {
        type Expect = fn(&PathError) -> bool;
        let cases: &[(&str, Expect)] = &[
            ("..", |e| matches!(e, PathError::DotSegment(_))),
            (".", |e| matches!(e, PathError::DotSegment(_))),
            ("%2e%2e", |e| matches!(e, PathError::DotSegment(_))),
            ("%2E.", |e| matches!(e, PathError::DotSegment(_))),
            (".%2e", |e| matches!(e, PathError::DotSegment(_))),
            ("%2E%2e", |e| matches!(e, PathError::DotSegment(_))),
            ("%2e", |e| matches!(e, PathError::DotSegment(_))),
            ("a%2Fb", |e| matches!(e, PathError::EncodedSeparator(_))),
            ("a%2fb", |e| matches!(e, PathError::EncodedSeparator(_))),
            ("a%5Cb", |e| matches!(e, PathError::EncodedSeparator(_))),
            ("a%5cb", |e| matches!(e, PathError::EncodedSeparator(_))),
            ("a\\b", |e| matches!(e, PathError::BadCharacter { ch: '\\', .. })),
            ("a;b", |e| matches!(e, PathError::Semicolon(_))),
            ("a;x=1", |e| matches!(e, PathError::Semicolon(_))),
            ("a%3Bb", |e| matches!(e, PathError::EncodedSemicolon(_))),
            ("a%3bb", |e| matches!(e, PathError::EncodedSemicolon(_))),
            ("a%25", |e| matches!(e, PathError::DoubleEncoding(_))),
            ("orders%252F", |e| matches!(e, PathError::DoubleEncoding(_))),
            ("%252e%252e", |e| matches!(e, PathError::DoubleEncoding(_))),
            ("eu%1fde", |e| matches!(e, PathError::LowerCaseSeparator(_))),
            ("a%1Fb", |e| matches!(e, PathError::Control(_))),
            ("a%00b", |e| matches!(e, PathError::Control(_))),
            ("a%01b", |e| matches!(e, PathError::Control(_))),
            ("a%0Ab", |e| matches!(e, PathError::Control(_))),
            ("a%7Fb", |e| matches!(e, PathError::Control(_))),
            ("a%C2%85b", |e| matches!(e, PathError::Control(_))),
            ("a%C2%9Fb", |e| matches!(e, PathError::Control(_))),
            ("a%FFb", |e| matches!(e, PathError::NotUtf8(_))),
            ("a%C2", |e| matches!(e, PathError::NotUtf8(_))),
            ("%C0%AE%C0%AE", |e| matches!(e, PathError::NotUtf8(_))),
            ("a%23b", |e| matches!(e, PathError::EncodedHash(_))),
            ("a%zzb", |e| matches!(e, PathError::MalformedEscape(_))),
            ("a%4", |e| matches!(e, PathError::MalformedEscape(_))),
            ("a%", |e| matches!(e, PathError::MalformedEscape(_))),
            ("a%+1", |e| matches!(e, PathError::MalformedEscape(_))),
            ("a b", |e| matches!(e, PathError::BadCharacter { ch: ' ', .. })),
            ("a\u{1}b", |e| matches!(e, PathError::BadCharacter { ch: '\u{1}', .. })),
            ("a\tb", |e| matches!(e, PathError::BadCharacter { .. })),
            ("é", |e| matches!(e, PathError::BadCharacter { ch: 'é', .. })),
            ("a#b", |e| matches!(e, PathError::BadCharacter { ch: '#', .. })),
            ("a?b", |e| matches!(e, PathError::BadCharacter { ch: '?', .. })),
            ("a|b", |e| matches!(e, PathError::BadCharacter { ch: '|', .. })),
            ("a\"b", |e| matches!(e, PathError::BadCharacter { .. })),
            ("", |e| matches!(e, PathError::EmptySegment)),
        ];
        for (raw, want) in cases {
            let e = seg(raw).unwrap_err();
            assert!(want(&e), "{raw:?}: {e:?}");
            if *raw != "a%1Fb" {
                let e = levels(raw).unwrap_err();
                assert!(want(&e), "levels {raw:?}: {e:?}");
            }
        }
    }

    #[test]
    fn messages_show_raw_input_escaped() {
        let e = seg("a\u{1}b").unwrap_err().to_string();
        assert_eq!(e, "path segment `a\\u{1}b` contains `\\u{1}`, which is not allowed unencoded");
        assert_eq!(seg("%2e%2e").unwrap_err().to_string(), "path segment `%2e%2e` is a dot segment");
        assert_eq!(PathError::AbsoluteForm("http://h/\n".into()).to_string().lines().count(), 1);
    }

    #[test]
    fn query_parts_accept_percent_but_not_controls() {
        assert_eq!(decode_query_part("100%25").unwrap(), "100%");
        assert_eq!(decode_query_part("a%2Fb%3B%23").unwrap(), "a/b;#");
        assert_eq!(decode_query_part("a+b").unwrap(), "a b");
        assert_eq!(decode_query_part("..").unwrap(), "..");
        assert!(matches!(decode_query_part("%0A"), Err(PathError::Control(_))));
        assert!(matches!(decode_query_part("%C2%85"), Err(PathError::Control(_))));
        assert!(matches!(decode_query_part("%G0"), Err(PathError::MalformedEscape(_))));
        assert!(matches!(decode_query_part("%FF"), Err(PathError::NotUtf8(_))));
    }

    #[test]
    fn long_input_is_fine() {
        let long = "x".repeat(100_000);
        assert_eq!(seg(&long).unwrap(), [long]);
        let deep = vec!["l"; 10_000].join("%1F");
        assert_eq!(levels(&deep).unwrap().len(), 10_000);
        assert_eq!(seg(&"%41".repeat(10_000)).unwrap(), ["A".repeat(10_000)]);
    }

    #[test]
    fn encode_round_trips_through_decode() {
        for name in ["orders", "a b", "x.y", "main|warehouse", "café", "a+b", "50%", "a/b", "a;b#c"] {
            assert_eq!(decode(&encode(name), Escapes::Query).unwrap(), name);
        }
        assert_eq!(encode("a b"), "a%20b");
        assert_eq!(encode("main|warehouse"), "main%7Cwarehouse");
    }
}
