//! Rewriting a credential-bearing loadTable response with 5 MB (and 20 KB) of metadata: icegate's
//! structural scan with slices of the upstream's bytes, beside the baseline of a full parse
//! and re-serialization (`serde_json::Value`), in one run. Peak memory is measured by
//! `cargo bench --bench credentials_peak`. Run with `cargo bench --bench credentials`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::string_slice,
    reason = "a test or benchmark that fails panics"
)]

#[path = "common/load_table.rs"]
mod load_table;

use bytes::Bytes;
use criterion::{Criterion, Throughput};
use icegate::core::credentials::Action;
use icegate::core::credentials::clean::{Endpoints, Rules};
use icegate::core::credentials::response::Parsed;
use std::hint::black_box;

const METADATA_BYTES: usize = 5 * 1024 * 1024;

fn rewrite(body: &Bytes, action: Action) -> usize {
    let endpoints = Endpoints { credentials: "v1/c".into(), sign: "v1/s".into(), signer_uri: None };
    let rules = Rules { action, extra_allowed: &[], endpoints: &endpoints, minted: None, read_headers: &[] };
    let parsed = Parsed::read(body).unwrap();
    let locations = parsed.locations.clone().unwrap_or_default();
    parsed.render(&rules, &locations).unwrap().len()
}

/// What the issue rules out: the whole response as a tree, then written back.
fn full_reserialize(body: &Bytes) -> usize {
    let mut v: serde_json::Value = serde_json::from_slice(body).unwrap();
    let top = v.as_object_mut().unwrap();
    top.insert("storage-credentials".into(), serde_json::json!([]));
    if let Some(config) = top.get_mut("config").and_then(|c| c.as_object_mut()) {
        config.retain(|k, _| k == "client.region" || k == "s3.endpoint");
    }
    serde_json::to_vec(&v).unwrap().len()
}

fn main() {
    let body = Bytes::from(load_table::response(METADATA_BYTES));
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("credentials");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.sample_size(30);
    group.bench_function("rewrite_strip_5MB", |b| b.iter(|| black_box(rewrite(&body, Action::Strip))));
    group.bench_function("rewrite_keep_5MB", |b| b.iter(|| black_box(rewrite(&body, Action::Keep))));
    group.bench_function("baseline_full_reserialize_5MB", |b| b.iter(|| black_box(full_reserialize(&body))));
    group.finish();
    // The size of a typical loadTable (the load harness's scenario (a)): here the fixed costs
    // of a response (buffers, `config` and `storage-credentials` parsed and written) count.
    let small = Bytes::from(load_table::response(20 * 1024));
    let mut group = c.benchmark_group("credentials");
    group.throughput(Throughput::Bytes(small.len() as u64));
    group.bench_function("rewrite_strip_20KB", |b| b.iter(|| black_box(rewrite(&small, Action::Strip))));
    group.bench_function("baseline_full_reserialize_20KB", |b| b.iter(|| black_box(full_reserialize(&small))));
    group.finish();
    c.final_summary();
}
