//! The path canonicalizer and route classifier. Property: whatever is accepted as a route
//! re-encodes (canonical path and query) to a target that classifies to the same operation and
//! objects, and re-encoding that gives the same target again; accepted names hold no control
//! character.
#![no_main]

use icegate::core::iceberg::prefix::Prefixes;
use icegate::core::iceberg::routes::{Classified, RouteOptions, classify};
use libfuzzer_sys::fuzz_target;

const METHODS: [&str; 6] = ["GET", "HEAD", "POST", "DELETE", "PUT", "get"];

fuzz_target!(|data: &[u8]| {
    let Some((&m, rest)) = data.split_first() else { return };
    let Ok(target) = std::str::from_utf8(rest) else { return };
    let method = METHODS[usize::from(m) % METHODS.len()];
    let separators = if m & 0x80 != 0 { vec!["|".to_owned()] } else { Vec::new() };
    // declared prefixes of two and three segments, matched as segments or whole with `%2F`
    let declared = Prefixes::new(["a/b", "a/b/c", "arn:x/y"]);
    let prefixes = (m & 0x40 != 0).then_some(&declared);
    let options = RouteOptions { base_path: "", namespace_separators: &separators, folding: None, prefixes };
    let Ok(Classified::Route(route)) = classify(method, target, &options) else { return };
    if let Some(ns) = &route.namespace {
        for level in ns.levels() {
            assert!(!level.is_empty() && !level.chars().any(char::is_control), "{target:?}: level {level:?}");
            assert!(!level.contains('.') && !level.contains(':'), "{target:?}: level {level:?}");
        }
    }
    if let Some(name) = &route.name {
        assert!(!name.chars().any(char::is_control), "{target:?}: name {name:?}");
    }
    let query = route.query.canonical();
    let again =
        if query.is_empty() { route.canonical_path.clone() } else { format!("{}?{query}", route.canonical_path) };
    let reread = match classify(method, &again, &options) {
        Ok(Classified::Route(r)) => r,
        other => panic!("{target:?} is accepted but its canonical form {again:?} is not: {other:?}"),
    };
    assert_eq!(route.operation, reread.operation, "{target:?} -> {again:?}");
    assert_eq!(route.prefix, reread.prefix, "{target:?} -> {again:?}");
    assert_eq!(route.prefix_segments, reread.prefix_segments, "{target:?} -> {again:?}");
    assert_eq!(route.namespace, reread.namespace, "{target:?} -> {again:?}");
    assert_eq!(route.name, reread.name, "{target:?} -> {again:?}");
    assert_eq!(route.plan_id, reread.plan_id, "{target:?} -> {again:?}");
    assert_eq!(route.query, reread.query, "{target:?} -> {again:?}");
    assert_eq!(route.canonical_path, reread.canonical_path, "the canonical form is a fixed point: {again:?}");
});
