//! The scanner as it was before it was made table-driven, kept verbatim as the oracle of a
//! differential test: the fast one must accept, refuse and end where this one does.

use super::EnvelopeError;
use std::ops::Range;

/// Where the value at `at` ends, by the reference scanner.
pub fn value_end(bytes: &[u8], at: usize) -> Result<usize, EnvelopeError> {
    let mut s = Scanner { bytes, at };
    s.value()?;
    Ok(s.at)
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
