//! Where the tokens of a JSON value start, 64 bytes at a time: each block's quotes,
//! backslashes, whitespace and scalar characters found sixteen bytes at a time (SIMD through
//! `wide`, whose `unsafe` is its own), then, in u64 arithmetic, which characters are escaped,
//! which lie inside strings, and so which bytes begin a token (simdjson's stage 1).
//!
//! A token is what the scanner's grammar steps over: a string's opening quote, the first
//! character of a scalar, a bracket, a separator, or a byte of class `OTHER` (which the grammar
//! refuses). Whitespace, a string's content and closing quote, and the rest of a scalar are not
//! tokens, so the walk over a block's token bits skips them without reading them.

use wide::i8x16;

pub(super) const BLOCK: usize = 64;

/// The state that crosses from one block to the next, read in order from a starting block.
#[derive(Debug)]
pub(super) struct Blocks<'a> {
    bytes: &'a [u8],
    /// 1 if the next block's first byte is escaped (an odd backslash run ends the block).
    escaped: u64,
    /// All ones if the next block starts inside a string.
    in_string: u64,
    /// 1 if the last block's last byte is a scalar character.
    scalar: u64,
}

/// One block: its bytes (zeros past the input's end) and where its tokens start.
#[derive(Debug)]
pub(super) struct Block {
    pub bytes: [u8; BLOCK],
    pub tokens: u64,
}

impl<'a> Blocks<'a> {
    /// Blocks of `bytes` read from a point outside any string.
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, escaped: 0, in_string: 0, scalar: 0 }
    }

    /// Whether the input ended inside a string (after the last block read).
    pub(super) fn in_string(&self) -> bool {
        self.in_string != 0
    }

    /// The block starting at `at` (a multiple of [`BLOCK`]), ignoring its bytes before bit
    /// `from`; `None` past the input's end. The input's last, shorter block reads as if zeros
    /// followed it: outside a string a zero is a token of class `OTHER` at the input's end.
    #[inline(always)]
    pub(super) fn read(&mut self, at: usize, from: usize) -> Option<Block> {
        let bytes = match self.bytes.get(at..at + BLOCK) {
            Some(whole) => <[u8; BLOCK]>::try_from(whole).unwrap_or([0; BLOCK]),
            None => padded(self.bytes.get(at..).filter(|tail| !tail.is_empty())?),
        };
        let classes = Classes::of(&bytes);
        let live = u64::MAX << (from % BLOCK);
        let quotes = classes.quotes & live & !self.escapes(classes.backslashes & live);
        let in_string = prefix_xor(quotes) ^ self.in_string;
        self.in_string = 0u64.wrapping_sub(in_string >> 63);
        let scalar_rest = classes.scalars & (classes.scalars << 1 | self.scalar);
        self.scalar = classes.scalars >> 63;
        let opening = quotes & in_string;
        let outside = !(in_string | quotes | classes.whitespace | scalar_rest);
        Some(Block { bytes, tokens: (opening | outside) & live })
    }

    /// The characters escaped by a backslash run of odd length (simdjson's branchless
    /// `find_escaped`): an even run escapes nothing after it, and runs cross blocks.
    fn escapes(&mut self, backslashes: u64) -> u64 {
        const EVEN: u64 = 0x5555_5555_5555_5555;
        let backslashes = backslashes & !self.escaped;
        let follows = backslashes << 1 | self.escaped;
        let odd_starts = backslashes & !EVEN & !follows;
        let (even_runs, carry) = odd_starts.overflowing_add(backslashes);
        self.escaped = u64::from(carry);
        (EVEN ^ (even_runs << 1)) & follows
    }
}

#[cold]
fn padded(tail: &[u8]) -> [u8; BLOCK] {
    let mut padded = [0u8; BLOCK];
    if let Some(head) = padded.get_mut(..tail.len()) {
        head.copy_from_slice(tail);
    }
    padded
}

/// Bit `k` set where the number of set bits at or below `k` is odd: the bytes from an opening
/// quote up to (not including) its closing quote.
fn prefix_xor(mut x: u64) -> u64 {
    for shift in [1, 2, 4, 8, 16, 32] {
        x ^= x << shift;
    }
    x
}

/// The byte classes of one block, one bit per byte.
struct Classes {
    quotes: u64,
    backslashes: u64,
    whitespace: u64,
    scalars: u64,
}

impl Classes {
    #[inline(always)]
    fn of(block: &[u8; BLOCK]) -> Self {
        let mut classes = Self { quotes: 0, backslashes: 0, whitespace: 0, scalars: 0 };
        for (k, lane) in block.chunks_exact(16).enumerate() {
            let v = i8x16::from_ne_bytes(<[u8; 16]>::try_from(lane).unwrap_or_default());
            let eq = |b: u8| v.simd_eq(i8x16::splat(b as i8));
            // `lo..=hi` as one signed comparison: the range moved to the bottom of i8.
            let within = |v: i8x16, lo: u8, hi: u8| {
                (v + i8x16::splat(0x80u8.wrapping_sub(lo) as i8)).simd_le(i8x16::splat(i8::MIN + (hi - lo) as i8))
            };
            let whitespace = eq(b' ') | eq(b'\r') | within(v, b'\t', b'\n');
            // Upper and lower case letters, as one range once bit 5 is set.
            let letters = within(v | i8x16::splat(0x20), b'a', b'z');
            // `+` `,` `-` `.` less the separator `,`.
            let signs = within(v, b'+', b'.') & !eq(b',');
            let scalars = within(v, b'0', b'9') | letters | signs;
            let bits = |m: i8x16| u64::from(m.to_bitmask()) << (16 * k);
            classes.quotes |= bits(eq(b'"'));
            classes.backslashes |= bits(eq(b'\\'));
            classes.whitespace |= bits(whitespace);
            classes.scalars |= bits(scalars);
        }
        classes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The escaped characters of `bits` read one at a time, as a string is.
    fn escaped_by_loop(blocks: &[u64]) -> Vec<u64> {
        let mut escape_next = false;
        blocks
            .iter()
            .map(|&backslashes| {
                let mut escaped = 0;
                for k in 0..64 {
                    if escape_next {
                        escaped |= 1 << k;
                        escape_next = false;
                    } else if backslashes & (1 << k) != 0 {
                        escape_next = true;
                    }
                }
                escaped
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        #[test]
        fn escapes_are_found_as_a_byte_loop_finds_them(blocks in proptest::collection::vec(any::<u64>(), 1..4), runs in any::<bool>()) {
            // Long runs of backslashes are rare in random bits: OR-ing shifted copies makes them.
            let blocks: Vec<u64> = if runs { blocks.iter().map(|b| b | b << 1 | b << 2 | b << 5).collect() } else { blocks };
            let mut scanner = Blocks::new(&[]);
            let fast: Vec<u64> = blocks.iter().map(|&b| scanner.escapes(b)).collect();
            prop_assert_eq!(fast, escaped_by_loop(&blocks));
        }
    }

    #[test]
    fn classes_are_the_scanner_table_s() {
        let block: [u8; BLOCK] = std::array::from_fn(|k| k as u8);
        for offset in [0u8, 64, 128, 192] {
            let block = block.map(|b| b + offset);
            let classes = Classes::of(&block);
            for (k, &b) in block.iter().enumerate() {
                let class = super::super::CLASS[usize::from(b)];
                let bit = |mask: u64| mask & (1 << k) != 0;
                assert_eq!(bit(classes.whitespace), class == super::super::WS, "{b:#x}");
                assert_eq!(bit(classes.scalars), class == super::super::SCALAR, "{b:#x}");
                assert_eq!(bit(classes.quotes), b == b'"', "{b:#x}");
                assert_eq!(bit(classes.backslashes), b == b'\\', "{b:#x}");
            }
        }
    }
}
