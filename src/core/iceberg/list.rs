//! List responses: reading their entries and keeping the ones a caller may see.
//!
//! Only each entry's name is read; kept entries are referenced in the upstream's bytes and
//! copied once, when the response is rendered, and the rest of the envelope passes through
//! raw, so filtering costs one pass with no re-serialization of what passes through
//! (docs/design.md §4 "Lists"). The usual response is read by a hand-written scanner (`scan`);
//! anything it does not take, every error included, is read by the general serde reading
//! (`general`), which defines what is accepted and each error.

mod entry;
mod general;
mod model;
mod scan;

pub use model::{Entry, ListError};
use model::{Field, TOKEN_KEY};

use super::OperationId;
use super::json::JsonError;
use bytes::Bytes;
use serde_json::value::RawValue;
use std::fmt;
use std::ops::Range;

pub use super::ListKind;

impl ListKind {
    pub fn for_operation(op: OperationId) -> Option<Self> {
        op.facts().list
    }

    /// The top-level key of the response's entries.
    pub fn list_key(self) -> &'static str {
        match self {
            Self::Namespaces => "namespaces",
            Self::Tables | Self::Views | Self::Functions => "identifiers",
        }
    }
}

/// A list response's bytes: borrowed, or shared with the buffer they arrived in, so that a page
/// can reference its kept entries instead of copying them.
#[derive(Clone)]
pub enum ListBytes<'a> {
    Borrowed(&'a [u8]),
    Shared(Bytes),
}

impl ListBytes<'_> {
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Borrowed(bytes) => bytes,
            Self::Shared(bytes) => bytes,
        }
    }
}

impl fmt::Debug for ListBytes<'_> {
    /// The length only: a response can be megabytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ListBytes({} bytes)", self.as_bytes().len())
    }
}

impl<'a> From<&'a [u8]> for ListBytes<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Self::Borrowed(bytes)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for ListBytes<'a> {
    fn from(bytes: &'a [u8; N]) -> Self {
        Self::Borrowed(bytes)
    }
}

impl<'a> From<&'a Vec<u8>> for ListBytes<'a> {
    fn from(bytes: &'a Vec<u8>) -> Self {
        Self::Borrowed(bytes)
    }
}

impl From<Bytes> for ListBytes<'static> {
    fn from(bytes: Bytes) -> Self {
        Self::Shared(bytes)
    }
}

/// A filtered page: the kept entries as the upstream sent them, the upstream's page token, and
/// the other top-level fields raw, in their order.
#[derive(Clone, Debug, Default)]
pub struct ListPage<'a> {
    /// The first response's fields; `Other` spans are of `pages[0]`.
    fields: Vec<Field>,
    /// Each upstream response appended, with the spans of its kept entries.
    pages: Vec<Kept<'a>>,
    next_page_token: Option<String>,
    hidden: usize,
}

#[derive(Clone, Debug)]
struct Kept<'a> {
    body: ListBytes<'a>,
    entries: Vec<Range<usize>>,
}

impl<'a> ListPage<'a> {
    /// The kept entries, in upstream order, byte for byte.
    pub fn visible(&self) -> impl Iterator<Item = &str> {
        self.pages.iter().flat_map(|page| {
            let body = page.body.as_bytes();
            // `filter` checked the whole body is UTF-8, so every entry in it is
            page.entries
                .iter()
                .map(move |at| body.get(at.clone()).and_then(|e| std::str::from_utf8(e).ok()).unwrap_or(""))
        })
    }

    /// The kept entries as owned raw values (what explain reports).
    pub fn to_raw_values(&self) -> Result<Vec<Box<RawValue>>, ListError> {
        self.visible()
            .map(|raw| RawValue::from_string(raw.to_owned()).map_err(|e| JsonError::Syntax(e.to_string()).into()))
            .collect()
    }

    /// The upstream's `next-page-token`; absent and `null` are both none.
    pub fn next_page_token(&self) -> Option<&str> {
        self.next_page_token.as_deref()
    }

    /// Entries removed: the ones the caller may not see and the ones without a valid name.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    pub fn len(&self) -> usize {
        self.pages.iter().map(|page| page.entries.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.iter().all(|page| page.entries.is_empty())
    }

    /// Adds the next upstream page of the same list: its entries after these, its token in
    /// place of this one; the other fields stay this page's.
    pub fn append(&mut self, next: ListPage<'a>) {
        self.pages.extend(next.pages);
        self.hidden += next.hidden;
        self.next_page_token = next.next_page_token;
    }

    /// A field's raw value.
    fn other(&self, at: &Range<usize>) -> &[u8] {
        self.pages.first().and_then(|page| page.body.as_bytes().get(at.clone())).unwrap_or_default()
    }

    /// The response to send: the kept entries, the other fields unchanged, and
    /// `next-page-token` replaced by `next_page_token` (`null` when `None`, and added only when
    /// there is a token: an upstream that wrote no field gets none written).
    pub fn render(&self, kind: ListKind, next_page_token: Option<&str>) -> Vec<u8> {
        let entries: usize = self.pages.iter().flat_map(|page| &page.entries).map(|at| at.len() + 1).sum();
        let others: usize = self.fields.iter().map(|field| self.len_hint(field)).sum();
        let mut out = Vec::with_capacity(entries + others + 64);
        let mut sep = Separator::default();
        out.push(b'{');
        let mut token_written = false;
        for field in &self.fields {
            match field {
                Field::List => {
                    sep.key(&mut out, kind.list_key());
                    out.push(b'[');
                    let mut first = true;
                    for page in &self.pages {
                        push_entries(&mut out, page.body.as_bytes(), &page.entries, &mut first);
                    }
                    out.push(b']');
                }
                // The spec asks for `null` in the last page: where the upstream wrote the
                // field, it stays, as `null` when there is no token to give back.
                Field::Token => {
                    sep.key(&mut out, TOKEN_KEY);
                    match next_page_token {
                        Some(token) => push_string(&mut out, token),
                        None => out.extend_from_slice(b"null"),
                    }
                    token_written = true;
                }
                Field::Other(key, at) => {
                    sep.key(&mut out, key);
                    out.extend_from_slice(self.other(at));
                }
            }
        }
        if let (false, Some(token)) = (token_written, next_page_token) {
            sep.key(&mut out, TOKEN_KEY);
            push_string(&mut out, token);
        }
        out.push(b'}');
        out
    }

    fn len_hint(&self, field: &Field) -> usize {
        match field {
            Field::Other(key, at) => key.len() + at.len() + 4,
            Field::List | Field::Token => 24,
        }
    }
}

/// Writes `entries` of `body` joined by `,`. Entries that stood next to each other, separated
/// by a bare `,`, are copied as one slice: the same bytes, in far fewer copies.
fn push_entries(out: &mut Vec<u8>, body: &[u8], entries: &[Range<usize>], first: &mut bool) {
    let mut push = |out: &mut Vec<u8>, run: Range<usize>| {
        if !std::mem::take(first) {
            out.push(b',');
        }
        out.extend_from_slice(body.get(run).unwrap_or_default());
    };
    let mut run: Option<Range<usize>> = None;
    for at in entries {
        match &mut run {
            Some(r) if r.end + 1 == at.start && body.get(r.end) == Some(&b',') => r.end = at.end,
            _ => {
                if let Some(done) = run.replace(at.clone()) {
                    push(out, done);
                }
            }
        }
    }
    if let Some(done) = run {
        push(out, done);
    }
}

/// Writes `,` before every key but the first.
#[derive(Default)]
struct Separator {
    started: bool,
}

impl Separator {
    fn key(&mut self, out: &mut Vec<u8>, key: &str) {
        if self.started {
            out.push(b',');
        }
        self.started = true;
        push_string(out, key);
        out.push(b':');
    }
}

/// A JSON string literal; written by hand since writing to a `Vec` cannot fail, and
/// serde_json's writer would make that a `Result`.
fn push_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if c < ' ' => out.extend_from_slice(format!("\\u{:04x}", u32::from(c)).as_bytes()),
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out.push(b'"');
}

/// Reads an upstream list response of `kind` and keeps the entries `keep` accepts. An entry
/// without a name icegate could authorize (wrong shape, a level with `.`) is hidden without
/// asking `keep`. The response is held to [`json::check_strict`](super::json::check_strict) as
/// a whole, checked piece by piece as it streams by, so that the document is not walked twice.
/// `keep` is asked once per entry, in order, whichever reading takes the response.
pub fn filter<'a>(
    kind: ListKind,
    body: impl Into<ListBytes<'a>>,
    separators: &[String],
    mut keep: impl FnMut(&Entry) -> bool,
) -> Result<ListPage<'a>, ListError> {
    let body = body.into();
    let read = {
        let text = crate::core::iceberg::json::text(body.as_bytes())?;
        if text.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
            return Err(JsonError::Empty.into());
        }
        match scan::scan(kind, text, separators, &mut keep) {
            Ok(read) => read,
            Err(replay) => general::read(kind, text, separators, &mut keep, &replay)?,
        }
    };
    Ok(ListPage {
        fields: read.fields,
        pages: vec![Kept { body, entries: read.kept }],
        next_page_token: read.next_page_token,
        hidden: read.hidden,
    })
}

#[cfg(test)]
mod tests;
