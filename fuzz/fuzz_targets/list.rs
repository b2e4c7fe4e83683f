//! The list filter. Properties: the filtered output is a subset of the input, in order; every
//! entry in it is one the predicate accepted; and reading the output again with a predicate that
//! keeps everything gives exactly those entries (the rendering is a valid list response).
#![no_main]

use icegate::core::iceberg::list::{Entry, ListKind, filter};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::collections::HashSet;

const KINDS: [ListKind; 4] = [ListKind::Namespaces, ListKind::Tables, ListKind::Views, ListKind::Functions];

fn key(e: &Entry) -> String {
    format!("{e:?}")
}

fuzz_target!(|data: &[u8]| {
    let Some((&k, bytes)) = data.split_first() else { return };
    let kind = KINDS[usize::from(k & 3)];
    let seed = k >> 2;
    let mut accepted = HashSet::new();
    let keep = |e: &Entry| {
        let yes = key(e).bytes().fold(u32::from(seed), |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b))) % 3 != 0;
        if yes {
            accepted.insert(key(e));
        }
        yes
    };
    let Ok(page) = filter(kind, bytes, &[], keep) else { return };
    let out = page.render(kind, page.next_page_token());
    let input: Value = serde_json::from_slice(bytes).expect("a filtered input is JSON");
    let output: Value = serde_json::from_slice(&out).expect("the output is JSON");
    let list = kind.list_key();
    let inputs = input[list].as_array().expect("input list");
    let outputs = output[list].as_array().expect("output list");
    // a subsequence of the input
    let mut rest = inputs.iter();
    for o in outputs {
        assert!(rest.any(|i| i == o), "{o} is not in the input (in order): {input}");
    }
    // every kept entry was accepted, and the output reads back to the same entries
    let mut seen = Vec::new();
    let reread = filter(kind, out.as_slice(), &[], |e| {
        seen.push(key(e));
        true
    })
    .expect("the output is a valid list response");
    assert_eq!(reread.len(), outputs.len());
    for s in &seen {
        assert!(accepted.contains(s), "{s} was never accepted");
    }
});
