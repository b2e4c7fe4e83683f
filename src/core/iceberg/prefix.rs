//! Catalog prefixes that are not one plain segment (docs/design.md §2 "Prefixes of real catalogs"):
//! AWS Glue's and Unity Catalog's `catalogs/<id>` span two segments, and S3 Tables' bucket ARN
//! reaches icegate as one segment with `%2F`. A declared prefix holding `/` is matched against
//! the path before any other path rule; the rules of §7 then read the rest.

use super::path::{check_raw_segment, decode_path_part, decode_prefix_segment};
use smallvec::SmallVec;
use std::borrow::Cow;
use thiserror::Error;

/// A `catalogs` entry's prefix that no request path could carry.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PrefixError {
    #[error("catalog prefix must not be empty")]
    Empty,
    #[error("catalog prefix `{0}` has an empty segment (a leading, trailing or doubled `/`)")]
    EmptySegment(String),
    #[error("catalog prefix `{0}` has a dot segment (`.` or `..`), which no request path can carry")]
    DotSegment(String),
    #[error("catalog prefix `{}` contains a control character", .0.escape_debug())]
    Control(String),
    #[error(
        "catalog prefix `{0}` contains `{1}`, which no request path can carry; write the prefix decoded, as the \
         catalog's getConfig returns it (`%3A` as `:`, `%2F` as `/`)"
    )]
    Unreachable(String, char),
}

/// Checks a declared prefix, written decoded: each `/`-separated segment must be one a request
/// path can carry once decoded (docs/design.md §7), or the prefix could never be matched.
pub fn check_declared(prefix: &str) -> Result<(), PrefixError> {
    if prefix.is_empty() {
        return Err(PrefixError::Empty);
    }
    if prefix.chars().any(char::is_control) {
        return Err(PrefixError::Control(prefix.to_owned()));
    }
    // a path refuses `%25`, `%5C`, `%3B` and `%23`, and these raw
    if let Some(ch) = prefix.chars().find(|c| matches!(c, '%' | '\\' | ';' | '#')) {
        return Err(PrefixError::Unreachable(prefix.to_owned(), ch));
    }
    for segment in prefix.split('/') {
        if segment.is_empty() {
            return Err(PrefixError::EmptySegment(prefix.to_owned()));
        }
        if segment == "." || segment == ".." {
            return Err(PrefixError::DotSegment(prefix.to_owned()));
        }
    }
    Ok(())
}

/// One declared prefix that holds `/`.
#[derive(Clone, Debug)]
struct Declared {
    text: Box<str>,
    segments: usize,
}

/// The declared prefixes that hold `/`, longest (most segments) first. Empty for most
/// policies, whose requests are then read exactly as before.
#[derive(Clone, Debug, Default)]
pub struct Prefixes(Vec<Declared>);

/// A declared prefix found at the start of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Match<'p> {
    /// The prefix as declared (decoded).
    pub text: &'p str,
    /// How many path segments it took: as many as it has, or one when sent with `%2F`.
    pub segments: usize,
    /// Sent as one segment with `%2F`.
    pub whole: bool,
}

impl Prefixes {
    /// The prefixes among `declared` that hold `/`; each should have passed [`check_declared`].
    pub fn new<'a>(declared: impl IntoIterator<Item = &'a str>) -> Self {
        let mut long: Vec<Declared> = declared
            .into_iter()
            .filter(|p| p.contains('/'))
            .map(|p| Declared { text: p.into(), segments: p.split('/').count() })
            .collect();
        long.sort_by(|a, b| b.segments.cmp(&a.segments).then_with(|| a.text.cmp(&b.text)));
        Self(long)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The longest declared prefix that the path after `/v1/` starts with: its segments each
    /// decoded once equal the prefix's, or its first segment, decoded once with its `%2F`,
    /// equals the whole prefix. A segment that is not a valid path segment matches nothing
    /// (reading the path then refuses it).
    pub fn find(&self, after_v1: &str) -> Option<Match<'_>> {
        let longest = self.0.first()?.segments;
        let mut raws = after_v1.split('/');
        let first = raws.next()?;
        // `%2F` never decodes in a path segment but a prefix's: only then is the first read so
        let whole = if memchr::memmem::find(first.as_bytes(), b"%2F").is_some()
            || memchr::memmem::find(first.as_bytes(), b"%2f").is_some()
        {
            decode_prefix_segment(first).ok()
        } else {
            None
        };
        // borrowed unless escaped: reading the usual path allocates nothing here
        let leading: SmallVec<[Option<Cow<'_, str>>; 4]> =
            std::iter::once(first).chain(raws).take(longest).map(read_segment).collect();
        self.0.iter().find_map(|d| {
            let as_segments = leading.len() >= d.segments
                && d.text.split('/').zip(&leading).all(|(want, got)| got.as_deref() == Some(want));
            if as_segments {
                Some(Match { text: &d.text, segments: d.segments, whole: false })
            } else if whole.as_deref() == Some(&*d.text) {
                Some(Match { text: &d.text, segments: 1, whole: true })
            } else {
                None
            }
        })
    }
}

/// A path segment decoded once, or `None` when the path rules refuse it.
fn read_segment(raw: &str) -> Option<Cow<'_, str>> {
    check_raw_segment(raw).ok()?;
    decode_path_part(raw).ok()
}

#[cfg(test)]
mod tests;
