//! The inspected-body extractor. Properties: an accepted body is strict JSON (serde reads it,
//! no duplicate key, nothing after it); and what authorization is told agrees with an
//! independent, naive reading of the same JSON where it matters for safety: every identifier of
//! a transaction or rename is the one in the body, a body the naive reading sees moving data
//! is reported as moving data, a namespace `location` set, changed or removed is reported, and
//! `assert-create` is reported only when it is there.
#![no_main]

use icegate::core::iceberg::body::{Body, LOCATION_PROPERTIES, inspect};
use icegate::core::iceberg::routes::{Query, Route};
use icegate::core::iceberg::{Namespace, OperationId};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const OPS: [OperationId; 12] = [
    OperationId::CreateNamespace,
    OperationId::UpdateProperties,
    OperationId::CreateTable,
    OperationId::RegisterTable,
    OperationId::UpdateTable,
    OperationId::RenameTable,
    OperationId::CommitTransaction,
    OperationId::SignRequest,
    OperationId::CreateView,
    OperationId::RegisterView,
    OperationId::ReplaceView,
    OperationId::RenameView,
];

fn route(op: OperationId) -> Route {
    Route {
        operation: op,
        prefix: Some("prod".into()),
        namespace: Some(Namespace::new(vec!["sales".into()], &[]).unwrap()),
        name: Some("orders".into()),
        plan_id: None,
        query: Query::default(),
        canonical_path: String::new(),
        prefix_segments: 1,
    }
}

/// `namespace.name` of a naive `TableIdentifier`, levels joined with `\u{1f}`; `Some("*")` for
/// the array form serde also reads a struct from (Jackson refuses it, so it never names a table
/// upstream).
fn ident(v: &Value) -> Option<String> {
    if v.is_array() {
        return Some("*".into());
    }
    let levels: Vec<&str> = v.get("namespace")?.as_array()?.iter().map(Value::as_str).collect::<Option<_>>()?;
    Some(format!("{}.{}", levels.join("\u{1f}"), v.get("name")?.as_str()?))
}

fn same(naive: &Value, t: &icegate::core::iceberg::TableIdent) -> bool {
    match ident(naive) {
        Some(s) if s == "*" => true,
        Some(s) => s == format!("{}.{}", t.namespace.levels().join("\u{1f}"), t.name),
        None => false,
    }
}

/// Whether a naive reading of one commit's `updates` sees data move.
fn naive_moves(change: &Value) -> bool {
    let Some(updates) = change.get("updates").and_then(Value::as_array) else { return false };
    updates.iter().any(|u| {
        let action = u.get("action").and_then(Value::as_str).unwrap_or_default().to_lowercase();
        let is_location = |k: &str| LOCATION_PROPERTIES.contains(&k.to_lowercase().as_str());
        match action.as_str() {
            "set-location" => true,
            "set-properties" => {
                u.get("updates").and_then(Value::as_object).is_some_and(|m| m.keys().any(|k| is_location(k)))
            }
            "remove-properties" => u
                .get("removals")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().filter_map(Value::as_str).any(is_location)),
            _ => false,
        }
    })
}

fn naive_asserts_create(change: &Value) -> bool {
    change.get("requirements").and_then(Value::as_array).is_some_and(|r| {
        r.iter().any(|q| q.get("type").and_then(Value::as_str).is_some_and(|t| t.eq_ignore_ascii_case("assert-create")))
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&o, bytes)) = data.split_first() else { return };
    let op = OPS[usize::from(o) % OPS.len()];
    let Ok(body) = inspect(&route(op), bytes, &Default::default()) else { return };
    icegate::core::iceberg::json::check_strict(bytes).unwrap_or_else(|e| panic!("accepted but not strict JSON ({e})"));
    let naive: Value = serde_json::from_slice(bytes).expect("accepted but serde refuses it");
    match body {
        Body::UpdateTable(u) => {
            if naive_moves(&naive) {
                assert!(u.moves_data(), "a move the extractor missed: {naive}");
            }
            if u.asserts_create {
                assert!(naive_asserts_create(&naive), "assert-create reported but absent: {naive}");
            }
        }
        Body::Rename { source, destination } => {
            assert!(same(&naive["source"], &source), "{naive}");
            assert!(same(&naive["destination"], &destination), "{naive}");
        }
        Body::CommitTransaction(changes) => {
            let listed = naive["table-changes"].as_array().expect("table-changes");
            assert_eq!(listed.len(), changes.len(), "{naive}");
            for (change, raw) in changes.iter().zip(listed) {
                if raw.is_array() {
                    continue;
                }
                assert!(same(&raw["identifier"], &change.identifier), "{naive}");
                if naive_moves(raw) {
                    assert!(change.update.moves_data(), "a move the extractor missed: {raw}");
                }
                if change.update.asserts_create {
                    assert!(naive_asserts_create(raw), "{raw}");
                }
            }
        }
        Body::CreateNamespace { location, .. } => {
            let naive_location = naive
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| p.keys().any(|k| k.eq_ignore_ascii_case("location")));
            assert!(location || !naive_location, "a namespace location the extractor missed: {naive}");
        }
        Body::UpdateProperties { location } => {
            let set = naive
                .get("updates")
                .and_then(Value::as_object)
                .is_some_and(|p| p.keys().any(|k| k.eq_ignore_ascii_case("location")));
            let removed = naive
                .get("removals")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().filter_map(Value::as_str).any(|k| k.eq_ignore_ascii_case("location")));
            assert!(location || !(set || removed), "a namespace location change the extractor missed: {naive}");
        }
        Body::CreateTable { name, explicit_location, .. } => {
            assert_eq!(naive["name"].as_str(), Some(name.as_str()), "{naive}");
            let located = naive.get("location").is_some_and(|l| !l.is_null());
            if located {
                assert!(explicit_location, "a location the extractor missed: {naive}");
            }
        }
        _ => {}
    }
});
