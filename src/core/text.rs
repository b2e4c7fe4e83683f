//! Small text helpers that several modules share: hexadecimal digits, RFC 3339 times, and an
//! error with its chain of causes.

use std::time::{SystemTime, UNIX_EPOCH};

/// The lower-case hexadecimal digit of the low four bits of `n`.
pub fn hex_lower(n: u8) -> char {
    let n = n & 0xf;
    char::from(if n < 10 { b'0' + n } else { b'a' + n - 10 })
}

/// The upper-case hexadecimal digit of the low four bits of `n`.
pub fn hex_upper(n: u8) -> char {
    hex_lower(n).to_ascii_uppercase()
}

/// Now, as RFC 3339 UTC with milliseconds.
pub fn rfc3339_now() -> String {
    rfc3339(SystemTime::now())
}

/// `t` as RFC 3339 UTC with milliseconds.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // civil-from-days (Howard Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    // Written digit by digit: every request's record starts here, and `format!` costs ten
    // times as much. Years outside 0..=9999 cannot come from a system clock.
    let mut out = String::with_capacity(24);
    push_digits(&mut out, year.clamp(0, 9999) as u64, 4);
    out.push('-');
    push_digits(&mut out, month as u64, 2);
    out.push('-');
    push_digits(&mut out, day as u64, 2);
    out.push('T');
    push_digits(&mut out, (rem / 3600) as u64, 2);
    out.push(':');
    push_digits(&mut out, (rem % 3600 / 60) as u64, 2);
    out.push(':');
    push_digits(&mut out, (rem % 60) as u64, 2);
    out.push('.');
    push_digits(&mut out, u64::from(d.subsec_millis()), 3);
    out.push('Z');
    out
}

/// `n` in decimal, zero-padded to `width` digits (the low `width` digits of a larger `n`).
fn push_digits(out: &mut String, n: u64, width: u32) {
    for i in (0..width).rev() {
        let digit = (n / 10u64.pow(i)) % 10;
        out.push(char::from(b'0' + digit as u8));
    }
}

/// `e` and its sources, joined with `: `.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
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

    #[test]
    fn timestamps_are_written_as_format_would() {
        for (secs, millis) in [(0u64, 0u32), (951_782_400, 7), (1_764_633_600, 999), (4_102_444_799, 123)] {
            let t = UNIX_EPOCH + std::time::Duration::from_secs(secs) + std::time::Duration::from_millis(millis.into());
            let ours = rfc3339(t);
            let d = t.duration_since(UNIX_EPOCH).unwrap();
            let rem = d.as_secs() % 86_400;
            let expected =
                format!("{}T{:02}:{:02}:{:02}.{millis:03}Z", &ours[..10], rem / 3600, rem % 3600 / 60, rem % 60);
            assert_eq!(ours, expected);
        }
        assert_eq!(rfc3339(UNIX_EPOCH + std::time::Duration::from_secs(951_782_400)), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(UNIX_EPOCH + std::time::Duration::from_secs(4_102_444_799)), "2099-12-31T23:59:59.000Z");
    }

    #[test]
    fn timestamps_are_rfc3339() {
        let ts = rfc3339_now();
        assert_eq!(ts.len(), 24, "{ts}");
        assert!(ts.starts_with("20") && ts.ends_with('Z') && &ts[10..11] == "T", "{ts}");
    }

    #[test]
    fn an_error_chain_names_every_cause() {
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] std::io::Error);
        assert_eq!(error_chain(&Outer(std::io::Error::other("inner"))), "outer: inner");
    }
}
