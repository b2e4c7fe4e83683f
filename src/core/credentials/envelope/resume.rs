//! What a scan of one answer learned up to the end of its `metadata`, kept so that the next
//! answer for the same table, when it starts with the same bytes, is not scanned again: a
//! catalog answers loadTable for an unchanged table with the same metadata, and the scan of it
//! is most of what a credential rewrite costs.
//!
//! Sound because the scan reads left to right and what it finds in a prefix depends on the
//! prefix's bytes alone: equal bytes, equal members, equal spans, and the same duplicate checks
//! passed. The bytes decide, never the table's name or the metadata's location, so a stale or
//! wrongly chosen `Prefix` only costs a comparison.

use super::{Envelope, Member};
use std::borrow::Cow;
use std::ops::Range;

/// An answer's bytes up to the end of its `metadata` member, and the members found in them.
#[derive(Debug)]
pub struct Prefix {
    bytes: Vec<u8>,
    /// The top-level members up to and including `metadata`, in order.
    members: Vec<Spans>,
    metadata: Vec<Spans>,
}

#[derive(Debug)]
struct Spans {
    key: Box<str>,
    span: Range<usize>,
    value: Range<usize>,
}

/// The part of a scan a [`Prefix`] gives back: the members, and where scanning goes on.
pub(super) struct Resumed<'a> {
    pub members: Vec<Member<'a>>,
    pub metadata: Vec<Member<'a>>,
    /// Just after the `metadata` member's value.
    pub end: usize,
}

impl Prefix {
    /// What the scan of `bytes` into `envelope` learned, when the answer has a `metadata`
    /// object ending within `max_bytes`.
    pub fn of(bytes: &[u8], envelope: &Envelope<'_>, max_bytes: usize) -> Option<Self> {
        let metadata = envelope.member("metadata")?;
        let end = metadata.span.end;
        if end > max_bytes || bytes.get(metadata.value.start) != Some(&b'{') {
            return None;
        }
        let spans = |members: &[Member<'_>]| -> Vec<Spans> {
            members
                .iter()
                .map(|m| Spans { key: m.key.as_ref().into(), span: m.span.clone(), value: m.value.clone() })
                .collect()
        };
        let before = envelope.members.iter().position(|m| m.key == "metadata")?;
        Some(Self {
            bytes: bytes.get(..end)?.to_vec(),
            members: spans(envelope.members.get(..=before)?),
            metadata: spans(&envelope.metadata),
        })
    }

    /// How many bytes the prefix holds (what keeping it costs).
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The members of `bytes` up to the end of `metadata`, when `bytes` start with this
    /// prefix's bytes.
    pub(super) fn resume<'a>(&'a self, bytes: &[u8]) -> Option<Resumed<'a>> {
        if bytes.get(..self.bytes.len())? != self.bytes.as_slice() {
            return None;
        }
        let members = |spans: &'a [Spans]| -> Vec<Member<'a>> {
            spans
                .iter()
                .map(|s| Member { key: Cow::Borrowed(&s.key), span: s.span.clone(), value: s.value.clone() })
                .collect()
        };
        Some(Resumed { members: members(&self.members), metadata: members(&self.metadata), end: self.bytes.len() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MAX: usize = 1 << 20;

    fn answer(metadata: &str, rest: &str) -> Vec<u8> {
        format!(r#"{{"metadata-location":"s3://b/t/m.json","metadata":{metadata}{rest}}}"#).into_bytes()
    }

    fn scanned(bytes: &[u8]) -> (Vec<Member<'_>>, Vec<Member<'_>>) {
        let e = Envelope::scan(bytes).unwrap();
        (e.members, e.metadata)
    }

    #[test]
    fn an_answer_with_the_same_metadata_resumes_with_the_members_a_full_scan_finds() {
        let meta = r#"{"location":"s3://b/t","properties":{"k":"v"},"snapshots":[{"id":1}]}"#;
        let first = answer(meta, r#","config":{"s3.access-key-id":"A"}"#);
        let prefix = Prefix::of(&first, &Envelope::scan(&first).unwrap(), MAX).unwrap();
        let second = answer(meta, r#","config":{"s3.access-key-id":"B","token":"t"},"storage-credentials":[]"#);
        let resumed = Envelope::scan_resuming(&second, Some(&prefix)).unwrap();
        assert!(prefix.resume(&second).is_some(), "the second answer starts with the first's metadata");
        assert_eq!((resumed.members, resumed.metadata), scanned(&second));
    }

    #[test]
    fn changed_metadata_is_scanned_again() {
        let first = answer(r#"{"location":"s3://b/t"}"#, "");
        let prefix = Prefix::of(&first, &Envelope::scan(&first).unwrap(), MAX).unwrap();
        let moved = answer(r#"{"location":"s3://b/other"}"#, "");
        assert!(prefix.resume(&moved).is_none());
        let e = Envelope::scan_resuming(&moved, Some(&prefix)).unwrap();
        assert_eq!(&moved[e.metadata_member("location").unwrap().value.clone()], br#""s3://b/other""#);
    }

    #[test]
    fn what_follows_a_resumed_prefix_is_checked_as_a_full_scan_checks_it() {
        let meta = r#"{"location":"s3://b/t"}"#;
        let first = answer(meta, "");
        let prefix = Prefix::of(&first, &Envelope::scan(&first).unwrap(), MAX).unwrap();
        for rest in [r#","metadata":{}"#, r#","config":{"a":1"#, r#" "config":{}"#, r#","config":{}} x"#, ","] {
            let bad = answer(meta, rest);
            assert!(prefix.resume(&bad).is_some(), "{rest}");
            assert_eq!(
                Envelope::scan_resuming(&bad, Some(&prefix)).map(|e| e.members).ok(),
                Envelope::scan(&bad).map(|e| e.members).ok(),
                "{rest}"
            );
            assert!(Envelope::scan(&bad).is_err(), "{rest}");
        }
    }

    #[test]
    fn big_metadata_and_answers_without_a_metadata_object_are_not_kept() {
        let first = answer(r#"{"location":"s3://b/t"}"#, "");
        let scan = Envelope::scan(&first).unwrap();
        assert!(Prefix::of(&first, &scan, 10).is_none());
        let null = answer("null", "");
        assert!(Prefix::of(&null, &Envelope::scan(&null).unwrap(), MAX).is_none());
        let none = br#"{"config":{}}"#;
        assert!(Prefix::of(none, &Envelope::scan(none).unwrap(), MAX).is_none());
    }

    proptest! {
        #[test]
        fn resuming_never_changes_what_a_scan_finds(
            location in "[a-z/:\"\\\\{}\\[\\],]{0,12}",
            other in "[a-z/:\"\\\\{}\\[\\],]{0,12}",
            tail in "[a-z:\"{}\\[\\], ]{0,24}",
        ) {
            let first = answer(&format!(r#"{{"location":{}}}"#, serde_json::to_string(&location).unwrap()), "");
            let Some(prefix) = Envelope::scan(&first).ok().and_then(|e| Prefix::of(&first, &e, MAX)) else {
                return Ok(());
            };
            let second = answer(&format!(r#"{{"location":{}}}"#, serde_json::to_string(&other).unwrap()), &tail);
            let full = Envelope::scan(&second).map(|e| (e.members, e.metadata));
            let resumed = Envelope::scan_resuming(&second, Some(&prefix)).map(|e| (e.members, e.metadata));
            prop_assert_eq!(full.ok(), resumed.ok());
        }
    }
}
