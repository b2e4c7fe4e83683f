//! The top level of a credential-bearing response, read by a structural scan: each member's
//! key and the byte span of its value. Only the small parts (`config`, `storage-credentials`,
//! the table's `location` and `properties`) are parsed; `metadata` is walked once, to find its
//! end and those two members, and passes through byte for byte.

use blocks::{BLOCK, Block, Blocks};
pub use error::EnvelopeError;
use marks::Marks;
pub use member::Member;
pub use resume::Prefix;
use std::borrow::Cow;

mod blocks;
mod error;
mod marks;
mod member;
mod resume;

/// A scanned response: its top-level members, and the members of `metadata` when it is an
/// object.
#[derive(Debug, Default)]
pub struct Envelope<'a> {
    pub members: Vec<Member<'a>>,
    pub metadata: Vec<Member<'a>>,
    /// The scan went on from an earlier answer's [`Prefix`].
    pub resumed: bool,
}

/// A table's metadata has about twenty members: one allocation holds them.
const METADATA_MEMBERS: usize = 32;

impl<'a> Envelope<'a> {
    /// Invariant: keys are unique at both levels (a duplicate is refused by `scan`), so the one
    /// member icegate rewrites is the one every client reads.
    pub fn scan(bytes: &'a [u8]) -> Result<Self, EnvelopeError> {
        Self::scan_resuming(bytes, None)
    }

    /// [`Envelope::scan`], with what an earlier scan of the same table's answer learned: when
    /// `bytes` start with the bytes that scan read up to the end of `metadata`, scanning goes on
    /// from there (see [`Prefix`]).
    pub fn scan_resuming(bytes: &'a [u8], earlier: Option<&'a Prefix>) -> Result<Self, EnvelopeError> {
        let mut s = Scanner { bytes, at: 0, closers: Vec::with_capacity(16), marks: Marks::default() };
        let resumed = earlier.and_then(|p| p.resume(bytes));
        let mut metadata = Vec::new();
        let mut visit = |s: &mut Scanner<'a>, key: &str| {
            if key == "metadata" && s.peek() == Some(b'{') {
                metadata = s.object_with_capacity(METADATA_MEMBERS, |s, _| s.value())?;
                Ok(())
            } else {
                s.value()
            }
        };
        let was_resumed = resumed.is_some();
        let members = match resumed {
            Some(resumed) => {
                s.at = resumed.end;
                let members = s.members(resumed.members, &mut visit)?;
                metadata = resumed.metadata;
                members
            }
            None => {
                s.skip_ws();
                if s.peek() != Some(b'{') {
                    return Err(EnvelopeError::NotAnObject);
                }
                s.object(&mut visit)?
            }
        };
        s.skip_ws();
        if s.at != bytes.len() {
            return Err(EnvelopeError::Malformed(s.at));
        }
        Ok(Self { members, metadata, resumed: was_resumed })
    }

    /// What this scan of `bytes` learned up to the end of `metadata`, for the next answer of
    /// the same table, when `metadata` is an object ending within `max_bytes`.
    pub fn prefix(&self, bytes: &[u8], max_bytes: usize) -> Option<Prefix> {
        Prefix::of(bytes, &self.members, &self.metadata, max_bytes)
    }

    pub fn member(&self, key: &str) -> Option<&Member<'a>> {
        self.members.iter().find(|m| m.key == key)
    }

    pub fn metadata_member(&self, key: &str) -> Option<&Member<'a>> {
        self.metadata.iter().find(|m| m.key == key)
    }
}

/// Parses one member's value (a small part, never `metadata`); `expected` says in icegate's
/// words what it must be, for the error (serde's message would quote the upstream's value).
/// Borrows from `bytes` what `T` can borrow.
pub fn parse<'a, T: serde::Deserialize<'a>>(
    bytes: &'a [u8],
    member: &Member<'_>,
    expected: &'static str,
) -> Result<T, EnvelopeError> {
    let raw = bytes.get(member.value.clone()).ok_or(EnvelopeError::Malformed(member.value.start))?;
    serde_json::from_slice(raw).map_err(|_| EnvelopeError::Member { key: member.key.clone().into_owned(), expected })
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The closing brackets `container` still expects, innermost last; kept between values so
    /// that a response costs one allocation, not one per nested value.
    closers: Vec<u8>,
    marks: Marks,
}

impl<'a> Scanner<'a> {
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
        value: impl FnMut(&mut Self, &str) -> Result<(), EnvelopeError>,
    ) -> Result<Vec<Member<'a>>, EnvelopeError> {
        self.object_with_capacity(0, value)
    }

    fn object_with_capacity(
        &mut self,
        capacity: usize,
        value: impl FnMut(&mut Self, &str) -> Result<(), EnvelopeError>,
    ) -> Result<Vec<Member<'a>>, EnvelopeError> {
        self.expect(b'{')?;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Vec::new());
        }
        self.members(Vec::with_capacity(capacity), value)
    }

    /// The rest of an object whose `members` were read: with none, the cursor is at the first
    /// key; else it is just after the last member's value.
    fn members(
        &mut self,
        mut members: Vec<Member<'a>>,
        mut value: impl FnMut(&mut Self, &str) -> Result<(), EnvelopeError>,
    ) -> Result<Vec<Member<'a>>, EnvelopeError> {
        loop {
            if !members.is_empty() {
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
        }
    }

    /// Any value at the cursor, by structure alone: strings end where they end, brackets
    /// balance and match, and a scalar is a run of the characters a literal or number uses.
    fn value(&mut self) -> Result<(), EnvelopeError> {
        let bytes = self.bytes;
        let (i, class) = token(bytes, self.at);
        self.at = match class {
            QUOTE => self.marks.string_end(bytes, i)?,
            OPEN => self.container(i)?,
            SCALAR => scalar_end(bytes, i),
            _ => return Err(EnvelopeError::Malformed(i)),
        };
        Ok(())
    }

    /// Where the array or object whose opening bracket is at `start` ends. Most of a large
    /// response passes through here, so the grammar (the `reference` scanner's, written
    /// plainly there) is checked by [`Blocks`] in bit arithmetic, 64 bytes at a time; what
    /// is left to do in order is to match the brackets, up to a block's first error.
    fn container(&mut self, start: usize) -> Result<usize, EnvelopeError> {
        let bytes = self.bytes;
        let closers = &mut self.closers;
        closers.clear();
        let mut blocks = Blocks::new(bytes);
        let mut at = start - start % BLOCK;
        let mut from = start % BLOCK;
        loop {
            let Some(Block { brackets, errors }) = blocks.read(at, from) else {
                return Err(EnvelopeError::Malformed(blocks.open_string().unwrap_or(bytes.len())));
            };
            // The brackets below the block's first error, if it has one.
            let mut brackets = brackets & (errors & errors.wrapping_neg()).wrapping_sub(1);
            while brackets != 0 {
                let i = at + brackets.trailing_zeros() as usize;
                brackets &= brackets - 1;
                match bytes.get(i).copied().unwrap_or(0) {
                    // `{` + 2 is `}`, `[` + 2 is `]`.
                    open @ (b'{' | b'[') => closers.push(open + 2),
                    close if closers.last() == Some(&close) => {
                        closers.pop();
                        if closers.is_empty() {
                            return Ok(i + 1);
                        }
                    }
                    _ => return Err(EnvelopeError::Malformed(i)),
                }
            }
            if errors != 0 {
                return Err(EnvelopeError::Malformed(at + errors.trailing_zeros() as usize));
            }
            at += BLOCK;
            from = 0;
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

/// Where the scalar starting at `i` ends: the first byte after it that is not a scalar's.
fn scalar_end(bytes: &[u8], mut i: usize) -> usize {
    while class_at(bytes, i) == SCALAR {
        i += 1;
    }
    i
}

/// A member's key from its quoted form. A key without escapes (all of them, in practice) is
/// its bytes, borrowed; one with escapes goes through serde_json. Both refuse what serde_json
/// refuses: control characters and bytes that are not UTF-8.
fn decode_key(quoted: &[u8]) -> Option<Cow<'_, str>> {
    let inner = quoted.get(1..quoted.len().checked_sub(1)?)?;
    if inner.iter().any(|&b| b == b'\\' || b < 0x20) {
        return serde_json::from_slice::<String>(quoted).ok().map(Cow::Owned);
    }
    std::str::from_utf8(inner).ok().map(Cow::Borrowed)
}

#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests;
