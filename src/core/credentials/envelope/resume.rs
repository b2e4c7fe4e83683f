//! What a scan of one answer learned up to the end of its `metadata`, kept so that the next
//! answer for the same table, when it starts with the same bytes, is not scanned again: a
//! catalog answers loadTable for an unchanged table with the same metadata, and the scan of it
//! is most of what a credential rewrite costs.
//!
//! Sound because the scan reads left to right and what it finds in a prefix depends on the
//! prefix's bytes alone (`blocks` and `marks` carry state forward only, and the prefix ends
//! with the closing bracket of `metadata`, so no token crosses its end): equal bytes, equal
//! members, equal spans, and the same duplicate checks passed. The bytes decide, never the
//! table's name or the metadata's location, so a stale or wrongly chosen `Prefix` only costs a
//! comparison.

use super::member::Member;
use std::borrow::Cow;
use std::ops::Range;

/// An answer's bytes up to the end of its `metadata` member, and the members found in them.
#[derive(Debug)]
pub struct Prefix {
    bytes: Vec<u8>,
    /// The decoded keys of `spans`, one after another: one allocation for all of them.
    keys: String,
    /// The top-level members up to and including `metadata`, in order, then the metadata's.
    spans: Vec<Spans>,
    /// How many of `spans` are top-level members.
    top: usize,
    /// The table's locations as the reader derived them from `metadata`'s `location` and
    /// `properties`, which lie inside `bytes`: an answer that resumes from this prefix has the
    /// same ones, so they are not parsed again.
    locations: Option<Vec<String>>,
}

#[derive(Debug)]
struct Spans {
    /// In `keys`.
    key: Range<usize>,
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

/// Room for the members that follow `metadata` in a table's answer (`config`,
/// `storage-credentials` and a few more), so that they cost no reallocation.
const MEMBERS_AFTER: usize = 8;

impl Prefix {
    /// What the scan of `bytes` learned (its top-level `members` and the `metadata` object's
    /// members), when `metadata` is an object ending within `max_bytes`.
    pub(super) fn of(bytes: &[u8], members: &[Member<'_>], metadata: &[Member<'_>], max_bytes: usize) -> Option<Self> {
        let at = members.iter().position(|m| m.key == "metadata")?;
        let member = members.get(at)?;
        let end = member.span.end;
        if end > max_bytes || bytes.get(member.value.start) != Some(&b'{') {
            return None;
        }
        let kept = members.get(..=at)?;
        let mut keys = String::with_capacity(kept.iter().chain(metadata).map(|m| m.key.len()).sum());
        let mut spans = Vec::with_capacity(kept.len() + metadata.len());
        for m in kept.iter().chain(metadata) {
            let from = keys.len();
            keys.push_str(&m.key);
            spans.push(Spans { key: from..keys.len(), span: m.span.clone(), value: m.value.clone() });
        }
        Some(Self { bytes: bytes.get(..end)?.to_vec(), keys, spans, top: kept.len(), locations: None })
    }

    /// This prefix with the locations read from its `metadata`.
    pub fn with_locations(self, locations: Vec<String>) -> Self {
        Self { locations: Some(locations), ..self }
    }

    /// The locations read from this prefix's `metadata`, when they were kept with it.
    pub fn locations(&self) -> Option<&[String]> {
        self.locations.as_deref()
    }

    /// About how many bytes keeping the prefix takes.
    pub fn cost(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.bytes.len()
            + self.keys.len()
            + self.spans.len() * std::mem::size_of::<Spans>()
            + self.locations.iter().flatten().map(|l| l.len() + std::mem::size_of::<String>()).sum::<usize>()
    }

    /// The members of `bytes` up to the end of `metadata`, when `bytes` start with this
    /// prefix's bytes.
    pub(super) fn resume<'a>(&'a self, bytes: &[u8]) -> Option<Resumed<'a>> {
        if bytes.get(..self.bytes.len())? != self.bytes.as_slice() {
            return None;
        }
        let member = |s: &Spans| -> Option<Member<'a>> {
            Some(Member {
                key: Cow::Borrowed(self.keys.get(s.key.clone())?),
                span: s.span.clone(),
                value: s.value.clone(),
            })
        };
        let (top, inner) = self.spans.split_at_checked(self.top)?;
        let mut members = Vec::with_capacity(top.len() + MEMBERS_AFTER);
        for s in top {
            members.push(member(s)?);
        }
        let metadata = inner.iter().map(member).collect::<Option<Vec<_>>>()?;
        Some(Resumed { members, metadata, end: self.bytes.len() })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Envelope, EnvelopeError, reference, tests::jsonish_long};
    use super::*;
    use proptest::prelude::*;

    const MAX: usize = 1 << 20;

    fn answer(metadata: &str, rest: &str) -> Vec<u8> {
        format!(r#"{{"metadata-location":"s3://b/t/m.json","metadata":{metadata}{rest}}}"#).into_bytes()
    }

    fn kept(bytes: &[u8], max: usize) -> Option<Prefix> {
        Envelope::scan(bytes).unwrap().prefix(bytes, max)
    }

    type Scanned<'a> = Result<(Vec<Member<'a>>, Vec<Member<'a>>), EnvelopeError>;

    fn full(bytes: &[u8]) -> Scanned<'_> {
        Envelope::scan(bytes).map(|e| (e.members, e.metadata))
    }

    fn resumed<'a>(bytes: &'a [u8], prefix: &'a Prefix) -> Scanned<'a> {
        Envelope::scan_resuming(bytes, Some(prefix)).map(|e| (e.members, e.metadata))
    }

    /// The resumed scan of `second` finds, refuses and ends exactly as the full scan does, and
    /// accepts nothing the reference scanner refuses.
    fn assert_same(second: &[u8], prefix: &Prefix) -> Result<(), TestCaseError> {
        let resumed = resumed(second, prefix);
        prop_assert_eq!(&resumed, &full(second), "{}", String::from_utf8_lossy(second));
        if resumed.is_ok() {
            let start = second.iter().position(|b| !b" \t\r\n".contains(b)).unwrap_or(0);
            let end = second.len() - second.iter().rev().take_while(|b| b" \t\r\n".contains(b)).count();
            prop_assert_eq!(reference::value_end(second, start), Ok(end));
        }
        Ok(())
    }

    #[test]
    fn an_answer_with_the_same_metadata_resumes_with_the_members_a_full_scan_finds() {
        let meta = r#"{"location":"s3://b/t","properties":{"k":"v"},"snapshots":[{"id":1}]}"#;
        let first = answer(meta, r#","config":{"s3.access-key-id":"A"}"#);
        let prefix = kept(&first, MAX).unwrap();
        let second = answer(meta, r#","config":{"s3.access-key-id":"B","token":"t"},"storage-credentials":[]"#);
        assert!(prefix.resume(&second).is_some(), "the second answer starts with the first's metadata");
        assert!(Envelope::scan_resuming(&second, Some(&prefix)).unwrap().resumed);
        assert_eq!(resumed(&second, &prefix), full(&second));
    }

    #[test]
    fn changed_metadata_is_scanned_again() {
        let first = answer(r#"{"location":"s3://b/t"}"#, "");
        let prefix = kept(&first, MAX).unwrap();
        let moved = answer(r#"{"location":"s3://b/other"}"#, "");
        assert!(prefix.resume(&moved).is_none());
        let e = Envelope::scan_resuming(&moved, Some(&prefix)).unwrap();
        assert!(!e.resumed);
        assert_eq!(&moved[e.metadata_member("location").unwrap().value.clone()], br#""s3://b/other""#);
    }

    #[test]
    fn what_follows_a_resumed_prefix_is_checked_as_a_full_scan_checks_it() {
        let meta = r#"{"location":"s3://b/t"}"#;
        let first = answer(meta, "");
        let prefix = kept(&first, MAX).unwrap();
        for rest in [r#","metadata":{}"#, r#","config":{"a":1"#, r#" "config":{}"#, r#","config":{}} x"#, ","] {
            let bad = answer(meta, rest);
            assert!(prefix.resume(&bad).is_some(), "{rest}");
            assert!(full(&bad).is_err(), "{rest}");
            assert_eq!(resumed(&bad, &prefix), full(&bad), "{rest}");
        }
    }

    #[test]
    fn big_metadata_and_answers_without_a_metadata_object_are_not_kept() {
        let first = answer(r#"{"location":"s3://b/t"}"#, "");
        assert!(kept(&first, 10).is_none());
        assert!(kept(&first, MAX).is_some());
        let null = answer("null", "");
        assert!(kept(&null, MAX).is_none());
        let none = br#"{"config":{}}"#;
        assert!(kept(none, MAX).is_none());
    }

    /// A realistic answer (escaped keys, nested values, strings that cross 64-byte blocks, the
    /// metadata neither first nor last) with each byte from a little before the end of its
    /// metadata to its end replaced by, or preceded by, each byte that matters to JSON's grammar,
    /// and the answer cut at each of those points.
    #[test]
    fn every_one_byte_change_near_and_after_the_prefix_scans_as_a_full_scan() {
        let meta = r#"{"location":"s3://b/t","prop\u0065rties":{"a\"b":"c\\","n":[1,-2.5e3,true,null]}, "s":"a run of string content that is longer than one block of sixty-four bytes"}"#;
        let first = format!(
            r#"{{"metadata-location":"s3://b/t/m.json" , "metadata" : {meta} ,"config":{{"k":"v","t":"x\"y"}},"storage-credentials":[{{"prefix":"s3://b/","config":{{}}}}]}}"#
        )
        .into_bytes();
        let prefix = kept(&first, MAX).unwrap();
        let end = prefix.bytes.len();
        let mut resumes = 0;
        for at in end.saturating_sub(3)..first.len() {
            for byte in b"{}[]\",: \\a1\x00\xff-".iter().copied() {
                let mut second = first.clone();
                second[at] = byte;
                resumes += usize::from(prefix.resume(&second).is_some());
                assert_same(&second, &prefix).unwrap();
                let mut second = first.clone();
                second.insert(at, byte);
                assert_same(&second, &prefix).unwrap();
            }
            assert_same(&first[..at], &prefix).unwrap();
        }
        assert!(resumes > 1000, "{resumes}");
    }

    /// Table metadata as JSON: values nested a few levels, keys and strings with escapes.
    fn metadata() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            "[a-z\"\\\\/é\u{1}]{0,80}".prop_map(serde_json::Value::from),
        ];
        let value = leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                proptest::collection::btree_map("[a-z\"\\\\]{0,6}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        });
        proptest::collection::btree_map("[a-z\"\\\\]{0,6}", value, 0..6)
            .prop_map(|m| serde_json::Value::Object(m.into_iter().collect()))
    }

    /// How a second answer differs from the first: not at all, by a tail after a cut, by one
    /// byte, or by being cut short. Positions are fractions of the first answer's length
    /// after the point `near` (most of them after the end of its metadata).
    #[derive(Debug, Clone)]
    enum Change {
        Same,
        Tail(u16, Vec<u8>),
        Byte(u16, u8),
        Cut(u16),
    }

    fn change() -> impl Strategy<Value = Change> {
        prop_oneof![
            Just(Change::Same),
            (any::<u16>(), jsonish_long()).prop_map(|(at, tail)| Change::Tail(at, tail)),
            (any::<u16>(), any::<u8>()).prop_map(|(at, b)| Change::Byte(at, b)),
            any::<u16>().prop_map(Change::Cut),
        ]
    }

    fn changed(first: &[u8], near: usize, change: &Change) -> Vec<u8> {
        let at = |f: u16| near + (first.len() - near) * usize::from(f) / usize::from(u16::MAX);
        let mut second = first.to_vec();
        match change {
            Change::Same => {}
            Change::Tail(f, tail) => {
                second.truncate(at(*f));
                second.extend_from_slice(tail);
            }
            Change::Byte(f, b) => {
                if let Some(x) = second.get_mut(at(*f)) {
                    *x = *b;
                }
            }
            Change::Cut(f) => second.truncate(at(*f)),
        }
        second
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn a_resumed_scan_finds_and_refuses_exactly_what_a_full_scan_does(
            meta in metadata(),
            pretty in any::<bool>(),
            after in proptest::sample::select(vec!["", r#","config":{"k":"v"}"#, r#", "storage-credentials" : [ ]"#]),
            early in any::<bool>(),
            change in change(),
        ) {
            let meta = if pretty { serde_json::to_string_pretty(&meta) } else { serde_json::to_string(&meta) }.unwrap();
            let first = answer(&meta, after);
            let prefix = kept(&first, MAX).unwrap();
            // Some changes fall inside the metadata, which must then be scanned again.
            let near = if early { 0 } else { prefix.bytes.len().saturating_sub(2) };
            assert_same(&changed(&first, near, &change), &prefix)?;
        }
    }
}
