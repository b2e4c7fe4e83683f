//! The grammar of a JSON container, 64 bytes at a time: each block's quotes, backslashes,
//! whitespace, scalar characters, brackets and separators found sixteen bytes at a time (SIMD
//! through `wide`, whose `unsafe` is its own, with SSE2's comparisons only), then, in u64
//! arithmetic, which characters are escaped, which lie inside strings (simdjson's stage 1),
//! where tokens start and which of them break the grammar.
//!
//! A token is a string's opening quote, the first character of a scalar, a bracket, a
//! separator, or a byte of class `OTHER`; whitespace, a string's content and closing quote and
//! the rest of a scalar are not. The grammar is the `reference` scanner's: after a value or a
//! closing bracket comes a separator or a closing bracket, after an opening bracket or a
//! separator a value, an opening or a closing bracket. Only the matching of brackets needs an
//! order, a stack: the scanner walks the brackets' bits for it.
//!
//! This executes more instructions than a loop over tokens (SSE2 has no byte shuffle for a
//! class table, and its two-operand form copies registers) but is faster in time: it has no
//! branch per token to mispredict. docs/performance.md has the measurements.

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
    /// 1 if the next block's first token follows a value or a closing bracket.
    after_value: u64,
    /// 1 if the next block's first token follows an opening bracket or a separator.
    after_open: u64,
    /// Where the last string read so far opens.
    last_string: usize,
}

/// What the scanner's walk needs of one block: where its brackets are, and where the grammar
/// is broken (a byte of class `OTHER`, a value or an opening bracket after a value, a
/// separator where a value belongs). Brackets are matched by the walk, in order, up to the
/// first error.
#[derive(Debug)]
pub(super) struct Block {
    pub brackets: u64,
    pub errors: u64,
}

impl<'a> Blocks<'a> {
    /// Blocks of `bytes` read from a point outside any string.
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, escaped: 0, in_string: 0, scalar: 0, after_value: 0, after_open: 0, last_string: 0 }
    }

    /// Where the string that the input ends inside opens, if it does (after the last block
    /// read).
    pub(super) fn open_string(&self) -> Option<usize> {
        (self.in_string != 0).then_some(self.last_string)
    }

    /// The block starting at `at` (a multiple of [`BLOCK`]), ignoring its bytes before bit
    /// `from` (the container's opening bracket); `None` past the input's end. The input's
    /// last, shorter block reads as if zeros followed it: outside a string a zero is of class
    /// `OTHER`, an error at the input's end.
    #[inline(always)]
    pub(super) fn read(&mut self, at: usize, from: usize) -> Option<Block> {
        let c = match self.bytes.get(at..at + BLOCK).and_then(|whole| <&[u8; BLOCK]>::try_from(whole).ok()) {
            Some(whole) => Classes::of(whole),
            None => Classes::of(&padded(self.bytes.get(at..).filter(|tail| !tail.is_empty())?)),
        };
        let live = u64::MAX << (from % BLOCK);
        let quotes = c.quotes & live & !self.escapes(c.backslashes & live);
        let in_string = prefix_xor(quotes) ^ self.in_string;
        self.in_string = 0u64.wrapping_sub(in_string >> 63);
        let opening = quotes & in_string;
        if opening != 0 {
            self.last_string = at + (63 - opening.leading_zeros() as usize);
        }
        let scalar_rest = c.scalars & (c.scalars << 1 | self.scalar);
        self.scalar = c.scalars >> 63;
        // Outside strings, and not a string's closing quote.
        let outside = !(in_string | quotes) & live;
        let tokens = opening | (outside & !(c.whitespace | scalar_rest));
        let values = opening | (outside & c.scalars & !scalar_rest);
        let (open, close, separators) = (c.open & outside, c.close & outside, c.separators & outside);
        let other = tokens & !(values | open | close | separators);
        let after_value = follow(values | close, &mut self.after_value, tokens);
        let after_open = follow(open | separators, &mut self.after_open, tokens);
        let errors = other | (after_value & (values | open)) | (after_open & separators);
        Some(Block { brackets: open | close, errors })
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

/// The tokens that come next after each token of `these`: a bit moved one up and carried
/// through the run of non-tokens above it lands on the next token. `carry` is 1 where the
/// next token lies in a later block.
fn follow(these: u64, carry: &mut u64, tokens: u64) -> u64 {
    let (landed, overflow) = (these << 1 | *carry).overflowing_add(!tokens);
    *carry = these >> 63 | u64::from(overflow);
    landed & tokens
}

/// The input's last, shorter block, with zeros after it.
#[cold]
pub(super) fn padded(tail: &[u8]) -> [u8; BLOCK] {
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
    open: u64,
    close: u64,
    separators: u64,
}

impl Classes {
    #[inline(always)]
    fn of(block: &[u8; BLOCK]) -> Self {
        let mut c = Self { quotes: 0, backslashes: 0, whitespace: 0, scalars: 0, open: 0, close: 0, separators: 0 };
        for (k, lane) in block.chunks_exact(16).enumerate() {
            let v = i8x16::from_ne_bytes(<[u8; 16]>::try_from(lane).unwrap_or_default());
            let eq = |v: i8x16, b: u8| v.simd_eq(i8x16::splat(b as i8));
            // `lo..=hi` as one signed comparison: the range moved to the bottom of i8.
            let within = |v: i8x16, lo: u8, hi: u8| {
                (v + i8x16::splat(0x80u8.wrapping_sub(lo) as i8)).simd_lt(i8x16::splat(i8::MIN + (hi - lo + 1) as i8))
            };
            // With bit 5 set, upper case letters are lower case, `[` is `{` and `]` is `}`.
            let folded = v | i8x16::splat(0x20);
            let comma = eq(v, b',');
            // `+` `,` `-` `.` less the separator `,`.
            let scalars = within(v, b'0', b'9') | within(folded, b'a', b'z') | (within(v, b'+', b'.') & !comma);
            let bits = |m: i8x16| u64::from(m.to_bitmask()) << (16 * k);
            c.quotes |= bits(eq(v, b'"'));
            c.backslashes |= bits(eq(v, b'\\'));
            c.whitespace |= bits(eq(v, b' ') | eq(v, b'\r') | within(v, b'\t', b'\n'));
            c.scalars |= bits(scalars);
            c.open |= bits(eq(folded, b'{'));
            c.close |= bits(eq(folded, b'}'));
            c.separators |= bits(comma | eq(v, b':'));
        }
        c
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
                assert_eq!(bit(classes.open), class == super::super::OPEN, "{b:#x}");
                assert_eq!(bit(classes.close), class == super::super::CLOSE, "{b:#x}");
                assert_eq!(bit(classes.separators), class == super::super::SEPARATOR, "{b:#x}");
            }
        }
    }
}
