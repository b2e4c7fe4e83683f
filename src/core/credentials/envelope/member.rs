//! One member of a scanned object: its decoded key and where it and its value lie in the
//! response. Its own module so that what the scan learns can be kept (`resume`) without that
//! module importing the scanner's.

use std::borrow::Cow;
use std::ops::Range;

/// One member of an object: its decoded key (borrowed from the response unless it had
/// escapes, so a scan allocates no key), the span of the whole member (key through value) and
/// of its value alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member<'a> {
    pub key: Cow<'a, str>,
    pub span: Range<usize>,
    pub value: Range<usize>,
}

impl Member<'_> {
    /// The member without its borrow of the response.
    pub fn into_owned(self) -> Member<'static> {
        Member { key: Cow::Owned(self.key.into_owned()), span: self.span, value: self.value }
    }
}
