//! Where a JSON string's plain run ends, found eight bytes at a time: list filtering and audit
//! lines pass over strings that are most of their bytes.
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
        }
    }
}
