//! Where a JSON string's plain run ends, whether a name is plain text, and whether two short
//! texts are equal, found eight bytes at a time: list filtering and audit lines pass over
//! strings that are most of their bytes.
//!
//! The word tests are the classic ones: `zero(v)` sets the high bit of a zero byte of `v`. They
//! mark a higher byte spuriously only above a byte they mark rightly (only such a byte starts a
//! borrow), so the lowest marked byte is always the first match.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = ONES * 0x80;

fn zero(v: u64) -> u64 {
    v.wrapping_sub(ONES) & !v & HIGHS
}

fn equal(word: u64, byte: u8) -> u64 {
    zero(word ^ (ONES * u64::from(byte)))
}

/// The offset of the first `"`, `\` or control byte (below 0x20): where a string's content
/// stops being text that decodes to itself.
pub fn string_stop(bytes: &[u8]) -> Option<usize> {
    first(
        bytes,
        |w| equal(w, b'"') | equal(w, b'\\') | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS),
        |b| b == b'"' || b == b'\\' || b < 0x20,
    )
}

/// The offset of the first `"` or `\`: where a string may end.
pub fn quote_or_backslash(bytes: &[u8]) -> Option<usize> {
    first(bytes, |w| equal(w, b'"') | equal(w, b'\\'), |b| b == b'"' || b == b'\\')
}

/// Whether every byte is printable ASCII (0x20 to 0x7e) other than a path separator (`/`,
/// `\`): the usual namespace level or table name. A yes or no, so the words' marks are only
/// gathered, and a name that is not a whole number of words ends with its last eight bytes
/// read again (one of under eight bytes is padded with a plain byte).
pub fn name_plain(bytes: &[u8]) -> bool {
    // 0x7f and up: adding one to a byte below 0x80 carries into its high bit only at 0x7f
    let marks = |w: u64| {
        equal(w, b'/')
            | equal(w, b'\\')
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS)
            | ((((w & !HIGHS) + ONES) | w) & HIGHS)
    };
    let word = |chunk: &[u8]| chunk.try_into().map_or(HIGHS, |c| marks(u64::from_le_bytes(c)));
    let mut chunks = bytes.chunks_exact(8);
    let mut found = 0;
    for chunk in &mut chunks {
        found |= word(chunk);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        found |= match bytes.len().checked_sub(8).and_then(|at| bytes.get(at..)) {
            Some(last) => word(last),
            None => {
                let mut padded = [b'a'; 8];
                padded.iter_mut().zip(tail).for_each(|(p, b)| *p = *b);
                word(&padded)
            }
        };
    }
    found == 0
}

/// Whether `a` and `b` are equal, compared in place for texts of up to 16 bytes. A list filter
/// compares each entry's namespace levels with the previous entry's (short texts, nearly always
/// equal): two overlapping words, or a few bytes, cost less than the call into `memcmp` that
/// slice equality makes.
pub fn same_text(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| s.get(at..at + 8).and_then(|w| w.try_into().ok()).map(u64::from_le_bytes);
    match n {
        0..8 => a.iter().zip(b).all(|(x, y)| x == y),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

/// Whether two lists of texts are equal, each pair compared by [`same_text`].
pub fn same_texts<A: AsRef<str>, B: AsRef<str>>(a: &[A], b: &[B]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_text(x.as_ref().as_bytes(), y.as_ref().as_bytes()))
}

fn first(bytes: &[u8], word_hits: impl Fn(u64) -> u64, byte_hits: impl Fn(u8) -> bool) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let hits = word_hits(u64::from_le_bytes(chunk.try_into().ok()?));
        if hits != 0 {
            return Some(offset + hits.trailing_zeros() as usize / 8);
        }
        offset += 8;
    }
    let tail = chunks.remainder().iter().position(|&b| byte_hits(b))?;
    Some(offset + tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn the_word_search_finds_what_a_byte_search_finds(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
            let stop = |b: &u8| *b == b'"' || *b == b'\\' || *b < 0x20;
            proptest::prop_assert_eq!(string_stop(&bytes), bytes.iter().position(stop));
            let quote = |b: &u8| *b == b'"' || *b == b'\\';
            proptest::prop_assert_eq!(quote_or_backslash(&bytes), bytes.iter().position(quote));
            let plain = |b: &u8| (0x20..0x7f).contains(b) && *b != b'/' && *b != b'\\';
            proptest::prop_assert_eq!(name_plain(&bytes), bytes.iter().all(plain));
        }

        #[test]
        fn the_word_comparison_says_what_slice_equality_says(a in proptest::collection::vec(0u8..4, 0..24), flip in proptest::prelude::any::<proptest::sample::Index>()) {
            // a copy with one byte changed, and the copy itself: unequal and equal texts of
            // every length, the first and last bytes of each word included
            let mut b = a.clone();
            proptest::prop_assert!(same_text(&a, &b));
            if !b.is_empty() {
                let i = flip.index(b.len());
                b[i] ^= 1;
            }
            proptest::prop_assert_eq!(same_text(&a, &b), a == b);
            proptest::prop_assert_eq!(same_text(&a, &a[..a.len() / 2]), a.is_empty());
        }
    }
}
