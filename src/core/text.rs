//! Small text helpers that several modules share: hexadecimal digits.

/// The lower-case hexadecimal digit of the low four bits of `n`.
pub fn hex_lower(n: u8) -> char {
    let n = n & 0xf;
    char::from(if n < 10 { b'0' + n } else { b'a' + n - 10 })
}

/// The upper-case hexadecimal digit of the low four bits of `n`.
pub fn hex_upper(n: u8) -> char {
    hex_lower(n).to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_digits_are_the_formatters() {
        for n in 0..=255u8 {
            assert_eq!(format!("{}{}", hex_lower(n >> 4), hex_lower(n)), format!("{n:02x}"));
            assert_eq!(format!("{}{}", hex_upper(n >> 4), hex_upper(n)), format!("{n:02X}"));
        }
    }
}
