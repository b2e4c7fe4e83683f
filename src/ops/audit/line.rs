//! An audit record as its JSON line, written by hand: every request writes one, and going
//! through serde cost several times as much, most of it per-field dispatch and buffer growth
//! (docs/performance.md has the measurements). The output is byte for byte what `serde_json` writes
//! for the `Serialize` derive of [`Record`]; a test holds the two together.

use super::record::{Object, Record};

/// Most lines fit: room for one is made before a line is written, so that it grows its
/// buffer at most once.
const TYPICAL_LINE: usize = 768;

/// `record` as one JSON object and a newline, in a buffer of its own (tests).
#[cfg(test)]
pub fn write(record: &Record) -> Vec<u8> {
    let mut out = Vec::new();
    write_to(&mut out, record);
    out
}

/// `record` as one JSON object and a newline, appended to `out` (the writer's pending lines,
/// so that a line costs no buffer of its own).
pub fn write_to(out: &mut Vec<u8>, record: &Record) {
    out.reserve(TYPICAL_LINE);
    out.extend_from_slice(b"{\"ts\":");
    string(out, &record.ts);
    out.extend_from_slice(b",\"request_id\":");
    string(out, &record.request_id);
    out.extend_from_slice(b",\"user\":");
    optional(out, record.user.as_deref(), string);
    out.extend_from_slice(b",\"groups\":");
    optional(out, record.groups.as_deref(), strings);
    out.extend_from_slice(b",\"held_roles\":");
    optional(out, record.held_roles.as_deref(), strings);
    out.extend_from_slice(b",\"active_roles\":");
    optional(out, record.active_roles.as_deref(), strings);
    out.extend_from_slice(b",\"active_roles_header\":");
    optional(out, record.active_roles_header.as_deref(), string);
    out.extend_from_slice(b",\"operation\":");
    optional(out, record.operation, string);
    out.extend_from_slice(b",\"objects\":");
    objects(out, &record.objects);
    out.extend_from_slice(b",\"decision\":");
    string(out, record.decision);
    out.extend_from_slice(b",\"status\":");
    number(out, u64::from(record.status));
    out.extend_from_slice(b",\"reason\":");
    optional(out, record.reason.as_deref(), string);
    out.extend_from_slice(b",\"credential\":");
    optional(out, record.credential, string);
    out.extend_from_slice(b",\"policy_generation\":");
    number(out, record.policy_generation);
    out.extend_from_slice(b",\"policy_hash\":");
    string(out, &record.policy_hash);
    out.extend_from_slice(b",\"upstream\":");
    optional(out, record.upstream.as_deref(), string);
    out.extend_from_slice(b",\"upstream_status\":");
    optional(out, record.upstream_status.map(u64::from), number);
    out.extend_from_slice(b",\"duration_ms\":");
    float(out, record.duration_ms);
    out.extend_from_slice(b"}\n");
}

fn optional<T>(out: &mut Vec<u8>, value: Option<T>, write: impl FnOnce(&mut Vec<u8>, T)) {
    match value {
        Some(v) => write(out, v),
        None => out.extend_from_slice(b"null"),
    }
}

fn strings(out: &mut Vec<u8>, values: &[String]) {
    out.push(b'[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        string(out, v);
    }
    out.push(b']');
}

fn objects(out: &mut Vec<u8>, objects: &[Object]) {
    out.push(b'[');
    for (i, o) in objects.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"type\":");
        string(out, o.kind);
        out.extend_from_slice(b",\"fullName\":");
        string(out, &o.full_name);
        out.push(b'}');
    }
    out.push(b']');
}

fn number(out: &mut Vec<u8>, n: u64) {
    // u64::MAX has 20 digits
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    while let Some(slot) = at.checked_sub(1).and_then(|i| digits.get_mut(i)) {
        *slot = b'0' + (n % 10) as u8;
        at -= 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(digits.get(at..).unwrap_or_default());
}

/// serde_json's own float form (shortest round-trip; non-finite as `null`).
fn float(out: &mut Vec<u8>, f: f64) {
    if serde_json::to_writer(&mut *out, &f).is_err() {
        out.extend_from_slice(b"null");
    }
}

/// A JSON string as serde_json writes it: `"` and `\` escaped, control characters as their
/// short escapes or `\u00XX`, everything else (non-ASCII included) as it is.
fn string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    // Most of a line (its reason above all) is plain text: skipped eight bytes at a time.
    let clean = crate::core::wordscan::string_stop(bytes).unwrap_or(bytes.len());
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate().skip(clean) {
        let control;
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => {
                control = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    crate::core::text::hex_lower(b >> 4) as u8,
                    crate::core::text::hex_lower(b) as u8,
                ];
                &control
            }
            _ => continue,
        };
        out.extend_from_slice(bytes.get(start..i).unwrap_or_default());
        out.extend_from_slice(escape);
        start = i + 1;
    }
    out.extend_from_slice(bytes.get(start..).unwrap_or_default());
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serde_line(record: &Record) -> Vec<u8> {
        let mut line = serde_json::to_vec(record).unwrap();
        line.push(b'\n');
        line
    }

    #[test]
    fn the_hand_written_line_is_what_serde_writes() {
        let awkward = "quote \" backslash \\ newline \n tab \t nul \0 unit \u{1f} del \u{7f} é 🦀 \u{2028}";
        let full = Record {
            ts: "2026-12-02T13:45:00.123Z".into(),
            request_id: "0123456789abcdef-0000002a".into(),
            user: Some(awkward.into()),
            groups: Some(vec!["eng".into(), awkward.into()]),
            held_roles: Some(vec![]),
            active_roles: Some(vec!["analyst".into()]),
            active_roles_header: Some("analyst, \u{8}\u{c}".into()),
            operation: Some("loadTable"),
            objects: vec![
                Object { kind: "TABLE", full_name: "prod.sales.orders".into() },
                Object { kind: "SCHEMA", full_name: awkward.into() },
            ],
            decision: "allow",
            status: 200,
            reason: Some("allowed: SELECT_TABLE@ by role `analyst`".into()),
            credential: Some("stripped"),
            policy_generation: u64::MAX,
            policy_hash: "sha256:00ff".into(),
            upstream: Some("glue \" eu".into()),
            upstream_status: Some(200),
            duration_ms: 0.123_456_789,
        };
        assert_eq!(String::from_utf8(write(&full)).unwrap(), String::from_utf8(serde_line(&full)).unwrap());
        let empty = Record::default();
        assert_eq!(String::from_utf8(write(&empty)).unwrap(), String::from_utf8(serde_line(&empty)).unwrap());
        for duration_ms in [0.0, 1e-9, 12.5, 1e21, f64::NAN, f64::INFINITY] {
            let r = Record { duration_ms, status: 403, ..Record::default() };
            assert_eq!(write(&r), serde_line(&r), "{duration_ms}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_written_as_serde_writes_it(user in "\\PC*", reason in ".*", raw in proptest::collection::vec(0u8..0x80, 0..64)) {
            let raw = String::from_utf8(raw).unwrap();
            let r = Record { user: Some(user), reason: Some(reason), active_roles_header: Some(raw), ..Record::default() };
            proptest::prop_assert_eq!(write(&r), serde_line(&r));
        }
    }

    #[test]
    fn every_control_character_is_escaped_as_serde_escapes_it() {
        let all: String = (0u8..0x80).map(char::from).collect();
        let r = Record { reason: Some(all), ..Record::default() };
        assert_eq!(write(&r), serde_line(&r));
    }
}
