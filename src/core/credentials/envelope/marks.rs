//! Where the strings of a response end: the quotes and backslashes of each 64-byte block,
//! found sixteen bytes at a time (SIMD through `wide`, whose `unsafe` is its own) and kept as
//! bit masks, so that a string's end is a bit search, not a loop over its bytes. It ends the
//! members' keys and string values; strings inside arrays and objects are `blocks`' work.
//!
//! A string-by-string loop mispredicts a branch at nearly every string's end, and its
//! instructions grow with each string's length; the masks cost a fixed few instructions per
//! block (docs/performance.md has the measurements).

use super::blocks::{BLOCK, padded};
use super::error::EnvelopeError;
use wide::u8x16;

/// The quotes and backslashes of the block of the input last asked about: bit `k` is byte
/// `block * 64 + k`. The scan moves forward, so each block is read once.
#[derive(Debug)]
pub(super) struct Marks {
    block: usize,
    quotes: u64,
    backslashes: u64,
}

impl Default for Marks {
    fn default() -> Self {
        Self { block: usize::MAX, quotes: 0, backslashes: 0 }
    }
}

impl Marks {
    /// Where the string whose opening quote is at `start` ends (the index after its closing
    /// quote). Escapes are skipped, not decoded: a backslash takes the byte after it, whatever
    /// it is, and only where the string ends matters here. `bytes` is the same input at every
    /// call.
    #[inline(always)]
    pub(super) fn string_end(&mut self, bytes: &[u8], start: usize) -> Result<usize, EnvelopeError> {
        let mut i = start + 1;
        loop {
            let block = i / BLOCK;
            if self.block != block {
                if block * BLOCK >= bytes.len() {
                    return Err(EnvelopeError::Malformed(start));
                }
                self.load(bytes, block);
            }
            let ahead = (self.quotes | self.backslashes) & (u64::MAX << (i % BLOCK));
            if ahead == 0 {
                i = (block + 1) * BLOCK;
                continue;
            }
            let bit = ahead.trailing_zeros();
            let at = block * BLOCK + bit as usize;
            if self.quotes & (1 << bit) != 0 {
                return Ok(at + 1);
            }
            i = at + 2;
        }
    }

    #[inline(never)]
    fn load(&mut self, bytes: &[u8], block: usize) {
        self.block = block;
        let at = block * BLOCK;
        match bytes.get(at..at + BLOCK) {
            Some(whole) => self.read(whole),
            None => self.read_last(bytes.get(at..).unwrap_or_default()),
        }
    }

    /// The input's last, shorter block, read as if zeros followed it (no quote, no backslash).
    #[cold]
    fn read_last(&mut self, tail: &[u8]) {
        self.read(&padded(tail));
    }

    #[inline(always)]
    fn read(&mut self, block: &[u8]) {
        let quote = u8x16::splat(b'"');
        let backslash = u8x16::splat(b'\\');
        let (mut quotes, mut backslashes) = (0u64, 0u64);
        for (k, lane) in block.chunks_exact(16).enumerate() {
            let v = u8x16::new(<[u8; 16]>::try_from(lane).unwrap_or_default());
            // One bit per byte, in the low 16 bits.
            quotes |= u64::from(v.simd_eq(quote).to_bitmask()) << (16 * k);
            backslashes |= u64::from(v.simd_eq(backslash).to_bitmask()) << (16 * k);
        }
        self.quotes = quotes;
        self.backslashes = backslashes;
    }
}
