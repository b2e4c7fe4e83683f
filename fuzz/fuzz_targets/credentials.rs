//! The credential rewriter. Property: for a caller whose credentials are removed, no `config`
//! key outside the allow-list survives and `storage-credentials` is empty; for every caller,
//! `token` and `header.*` keys naming a header icegate reads are gone, and every kept storage
//! credential lies under one of the table's locations.
#![no_main]

use bytes::Bytes;
use icegate::core::credentials::Action;
use icegate::core::credentials::clean::{Endpoints, Rules, is_under, names_read_header};
use icegate::core::credentials::response::Parsed;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&a, bytes)) = data.split_first() else { return };
    let action = if a & 1 == 0 { Action::Strip } else { Action::Keep };
    // Members icegate does not rewrite pass as the upstream's bytes: only inputs serde can read
    // give outputs the checks below can read.
    if serde_json::from_slice::<Value>(bytes).is_err() {
        return;
    }
    let body = Bytes::copy_from_slice(bytes);
    let Ok(parsed) = Parsed::read(&body) else { return };
    let endpoints = Endpoints {
        credentials: "/v1/prod/namespaces/sales/tables/orders/credentials".into(),
        sign: "v1/prod/namespaces/sales/tables/orders/sign".into(),
        signer_uri: None,
    };
    let extra: Vec<String> = Vec::new();
    let read = ["authorization".to_owned(), "x-gravitino-active-roles".to_owned()];
    let rules = Rules { action, extra_allowed: &extra, endpoints: &endpoints, minted: None, read_headers: &read };
    let locations = parsed.locations.clone().unwrap_or_else(|| vec!["s3://lake/sales/orders".to_owned()]);
    let Ok(chunks) = parsed.render(&rules, &locations) else { return };
    let out = chunks.concat();
    let v: Value = serde_json::from_slice(&out).unwrap_or_else(|e| panic!("the output is not JSON ({e})"));
    let config = v.get("config").and_then(Value::as_object);
    if let Some(config) = config {
        assert!(!config.contains_key("token"), "token kept: {v}");
        assert!(!config.keys().any(|k| names_read_header(k, &read)), "a header icegate reads kept: {v}");
        if action == Action::Strip {
            for key in config.keys() {
                assert!(rules.allowed(key), "`{key}` survived removal: {v}");
            }
        }
    }
    if let Some(entries) = v.get("storage-credentials").and_then(Value::as_array) {
        if action == Action::Strip {
            assert!(entries.is_empty(), "storage credentials kept: {v}");
        }
        for e in entries {
            let prefix = e["prefix"].as_str().expect("prefix");
            assert!(locations.iter().any(|l| is_under(prefix, l)), "`{prefix}` is not under {locations:?}");
        }
    }
});
