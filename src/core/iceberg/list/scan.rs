//! The usual list response, read by hand in one pass: the envelope, the list array, and each
//! entry of the common shape (`{"namespace": [...], "name": "..."}` for tables and views, an
//! array of levels for namespaces and functions) whose strings have no escape, so that they
//! decode to themselves and are borrowed from the response.
//!
//! The scanner only ever accepts what the general reading ([`general`](super::general))
//! accepts, with the same result: an entry of another shape is captured by serde and read by
//! [`entry::read`] as the general reading reads it, another field is captured by serde and
//! held to [`json::check_strict_nested`], and at anything else (an error, an unusual envelope)
//! the scanner gives up and the general reading takes the whole response. Giving up hands over
//! `keep`'s answers so far, so that no entry is asked about twice.

use super::entry::{self, Reused};
use super::general::{FIELD_DEPTH, Replay};
use super::model::{Entry, Field, Read, TOKEN_KEY};
use crate::core::iceberg::ListKind;
use crate::core::iceberg::json;
pub(super) use crate::core::wordscan::string_stop;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::ops::Range;

/// Reads `text`, a whole list response; `Err` when the general reading must read it instead,
/// with what `keep` answered so far.
pub(super) fn scan<F: FnMut(&Entry) -> bool>(
    kind: ListKind,
    text: &str,
    separators: &[String],
    keep: &mut F,
) -> Result<Read, Replay> {
    let mut scanner = Scanner {
        text,
        bytes: text.as_bytes(),
        at: 0,
        kind,
        separators,
        keep,
        reused: Reused::default(),
        levels: Vec::new(),
        page: Read::default(),
        until: 0,
    };
    match scanner.envelope() {
        Some(()) => Ok(scanner.page),
        None => Err(Replay { until: scanner.until, kept: scanner.page.kept }),
    }
}

/// The scanner's state. Every method that returns `None` means "give up": the cursor is then
/// meaningless, since the general reading starts over.
struct Scanner<'t, 'k, F> {
    text: &'t str,
    bytes: &'t [u8],
    /// The cursor, a byte offset into `text`.
    at: usize,
    kind: ListKind,
    separators: &'k [String],
    keep: &'k mut F,
    reused: Reused,
    /// The current entry's levels, borrowed from `text`; the buffer is reused across entries.
    levels: Vec<&'t str>,
    page: Read,
    /// The end of the last entry read: `keep` has answered for every entry before it.
    until: usize,
}

impl<'t, F: FnMut(&Entry) -> bool> Scanner<'t, '_, F> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// JSON's whitespace, the same four bytes serde_json skips.
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// Whitespace, then `byte`.
    fn eat(&mut self, byte: u8) -> Option<()> {
        self.ws();
        (self.peek() == Some(byte)).then(|| self.at += 1)
    }

    /// The top-level object and what follows it, as the general reading's `Envelope` reads it.
    fn envelope(&mut self) -> Option<()> {
        self.eat(b'{')?;
        let mut keys: Vec<Cow<'t, str>> = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            // no list: an error, which the general reading reports
            return None;
        }
        loop {
            self.eat(b'"')?;
            let key = self.string()?;
            if keys.contains(&key) {
                return None;
            }
            self.eat(b':')?;
            self.ws();
            if key == self.kind.list_key() {
                self.list()?;
                self.page.fields.push(Field::List);
            } else if key == TOKEN_KEY {
                self.page.next_page_token = self.token()?;
                self.page.fields.push(Field::Token);
            } else {
                let at = self.capture()?;
                json::check_strict_nested(self.text.get(at.clone())?, FIELD_DEPTH).ok()?;
                self.page.fields.push(Field::Other(key.to_string(), at));
            }
            keys.push(key);
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => break,
                _ => return None,
            }
        }
        self.at += 1;
        self.ws();
        let listed = self.page.fields.iter().any(|f| matches!(f, Field::List));
        (self.at == self.bytes.len() && listed).then_some(())
    }

    /// `next-page-token`'s value, read as `Option<String>` is.
    fn token(&mut self) -> Option<Option<String>> {
        match self.peek()? {
            b'n' if self.bytes.get(self.at..)?.starts_with(b"null") => {
                self.at += 4;
                Some(None)
            }
            b'"' => {
                self.at += 1;
                self.string().map(|token| Some(token.into_owned()))
            }
            _ => None,
        }
    }

    /// The decoded string whose opening quote is just behind the cursor; the cursor moves past
    /// its closing quote.
    fn string(&mut self) -> Option<Cow<'t, str>> {
        if let Some(plain) = self.plain() {
            return Some(Cow::Borrowed(plain));
        }
        // Escapes: find the closing quote, skipping each escaped byte, and let serde decode
        // the literal. What it decodes alone it decodes the same way inside the document,
        // since a string's reading never looks past its closing quote.
        let open = self.at.checked_sub(1)?;
        let mut end = self.at;
        loop {
            end += memchr::memchr2(b'"', b'\\', self.bytes.get(end..)?)?;
            match self.bytes.get(end)? {
                b'\\' => end += 2,
                _ => break,
            }
        }
        let decoded: String = serde_json::from_str(self.text.get(open..=end)?).ok()?;
        self.at = end + 1;
        Some(Cow::Owned(decoded))
    }

    /// The content of the string whose opening quote is just behind the cursor, when it has no
    /// escape (it then decodes to itself) and no raw control character (which JSON forbids);
    /// the cursor then moves past its closing quote. The text is UTF-8 already.
    fn plain(&mut self) -> Option<&'t str> {
        let rest = self.bytes.get(self.at..)?;
        let len = string_stop(rest)?;
        if rest.get(len) != Some(&b'"') {
            return None;
        }
        let plain = self.text.get(self.at..self.at + len)?;
        self.at += len + 1;
        Some(plain)
    }

    /// The span of the JSON value at the cursor, captured as the general reading captures it
    /// (serde's syntax checks, no depth bound); the cursor moves past it.
    fn capture(&mut self) -> Option<Range<usize>> {
        let rest = self.text.get(self.at..)?;
        let mut de = serde_json::Deserializer::from_str(rest);
        let raw = <&RawValue>::deserialize(&mut de).ok()?;
        let start = self.at + (raw.get().as_ptr().addr() - rest.as_ptr().addr());
        let end = start + raw.get().len();
        self.at = end;
        Some(start..end)
    }

    /// The list array, each entry judged as it is read.
    fn list(&mut self) -> Option<()> {
        if self.peek() != Some(b'[') {
            return None;
        }
        self.at += 1;
        self.ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Some(());
        }
        loop {
            self.ws();
            self.entry()?;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// One entry at the cursor: read, judged, and kept or counted hidden.
    fn entry(&mut self) -> Option<()> {
        let start = self.at;
        self.levels.clear();
        let name = match self.kind {
            ListKind::Tables | ListKind::Views => self.common_ident(),
            ListKind::Namespaces | ListKind::Functions => self.common_levels().map(|()| ""),
        };
        let keep = match name {
            Some(name) => {
                let (reused, levels, separators) = (&mut self.reused, self.levels.as_slice(), self.separators);
                let entry = match self.kind {
                    ListKind::Tables | ListKind::Views => reused.object(levels, name, separators),
                    ListKind::Namespaces => reused.namespace(levels, separators),
                    ListKind::Functions => match levels.split_last() {
                        Some((name, namespace)) => reused.object(namespace, name, separators),
                        None => None,
                    },
                };
                entry.is_some_and(|entry| (self.keep)(entry))
            }
            None => {
                self.at = start;
                let at = self.capture()?;
                match entry::read(self.kind, self.text.get(at)?, self.separators) {
                    Ok(Some(entry)) => (self.keep)(&entry),
                    Ok(None) => false,
                    Err(_) => return None,
                }
            }
        };
        if keep {
            self.page.kept.push(start..self.at);
        } else {
            self.page.hidden += 1;
        }
        self.until = self.at;
        Some(())
    }

    /// A table identifier of the common shape: an object with `namespace` (an array of plain
    /// strings) and `name` (a plain string), once each, in either order. The levels go to
    /// `self.levels`; `None` for anything else.
    fn common_ident(&mut self) -> Option<&'t str> {
        if self.peek() != Some(b'{') {
            return None;
        }
        self.at += 1;
        let (mut namespace, mut name) = (false, None);
        for last in [b',', b'}'] {
            self.eat(b'"')?;
            let rest = self.bytes.get(self.at..)?;
            if !namespace && rest.starts_with(b"namespace\"") {
                self.at += "namespace\"".len();
                self.eat(b':')?;
                self.ws();
                self.common_levels()?;
                namespace = true;
            } else if name.is_none() && rest.starts_with(b"name\"") {
                self.at += "name\"".len();
                self.eat(b':')?;
                self.eat(b'"')?;
                name = Some(self.plain()?);
            } else {
                return None;
            }
            self.eat(last)?;
        }
        name
    }

    /// An array of plain strings, pushed to `self.levels`; `None` for anything else.
    fn common_levels(&mut self) -> Option<()> {
        if self.peek() != Some(b'[') {
            return None;
        }
        self.at += 1;
        self.ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Some(());
        }
        loop {
            self.eat(b'"')?;
            let level = self.plain()?;
            self.levels.push(level);
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
}
