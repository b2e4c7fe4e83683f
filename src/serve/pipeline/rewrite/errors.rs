//! Upstream error answers as the caller sees them: without `stack` traces, replaced by an
//! Iceberg error of the same status when they cannot be read (a trace could hide in them), and
//! given one when they have no body (clients read the error's type and message).

use crate::core::iceberg::errors::upstream_type;
use bytes::Bytes;

/// An upstream error body without its `stack`, at any depth (JSON errors only), and whether it
/// was replaced: a non-empty body that is not JSON icegate can read (a plain-text Java stack
/// trace, or JSON serde refuses but Jackson writes, such as a lone surrogate escape) could carry
/// a trace that cannot be removed, so it becomes an Iceberg error of the same status instead.
pub fn strip_stack(bytes: Bytes, status: http::StatusCode) -> (Bytes, bool) {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return (Bytes::from(written_error(status, true)), true);
    }
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return (Bytes::from(written_error(status, false)), true);
    };
    if !remove_stacks(&mut value) {
        return (bytes, false);
    }
    match serde_json::to_vec(&value) {
        Ok(v) => (Bytes::from(v), false),
        Err(_) => (Bytes::from(written_error(status, false)), true),
    }
}

/// Removes every `stack` member; whether there was one.
fn remove_stacks(value: &mut serde_json::Value) -> bool {
    match value {
        serde_json::Value::Object(map) => {
            let mut changed = map.remove("stack").is_some();
            for v in map.values_mut() {
                changed |= remove_stacks(v);
            }
            changed
        }
        serde_json::Value::Array(items) => items.iter_mut().fold(false, |c, v| remove_stacks(v) | c),
        _ => false,
    }
}

/// The Iceberg error icegate writes in place of an upstream error body: without one
/// (`empty`: Lakekeeper 0.7's 404 of a route it does not serve reached clients as an empty 404),
/// or with one it could not read; the upstream's status, and a type clients can tell apart.
fn written_error(status: http::StatusCode, empty: bool) -> String {
    let code = status.as_u16();
    let message = match empty {
        true => format!("upstream answered {code} without an error body"),
        false => format!("upstream answered {code} with an error body icegate could not read"),
    };
    serde_json::json!({"error": {"message": message, "type": upstream_type(code, empty), "code": code}}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_traces_are_removed_from_errors() {
        let body = Bytes::from_static(br#"{"error":{"message":"m","type":"T","code":500,"stack":["at x"]}}"#);
        let out: serde_json::Value =
            serde_json::from_slice(&strip_stack(body, http::StatusCode::BAD_GATEWAY).0).unwrap();
        assert!(out["error"].get("stack").is_none());
        let (plain, replaced) =
            strip_stack(Bytes::from_static(b"plain\n\tat secret.Trace"), http::StatusCode::BAD_GATEWAY);
        assert!(replaced);
        let out: serde_json::Value = serde_json::from_slice(&plain).unwrap();
        assert_eq!(
            (out["error"]["code"].as_u64(), out["error"]["type"].as_str()),
            (Some(502), Some("ServiceFailureException"))
        );
        let (empty, replaced) = strip_stack(Bytes::new(), http::StatusCode::NOT_FOUND);
        let out: serde_json::Value = serde_json::from_slice(&empty).unwrap();
        assert!(replaced);
        assert_eq!(
            (out["error"]["code"].as_u64(), out["error"]["type"].as_str()),
            (Some(404), Some("NotFoundException"))
        );
        let nested = Bytes::from_static(br#"{"error":{"message":"m","cause":{"stack":["x"]}}}"#);
        assert!(!String::from_utf8_lossy(&strip_stack(nested, http::StatusCode::BAD_REQUEST).0).contains("stack"));
    }
}
