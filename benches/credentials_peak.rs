//! Peak heap memory of rewriting one loadTable response with 5 MB of metadata, beside the
//! baseline of a full parse and re-serialization, counted by dhat's allocator. The response
//! itself is allocated before counting starts, as it is buffered before icegate rewrites it.
//! Run with `cargo bench --bench credentials_peak`.
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
use icegate::core::credentials::Action;
use icegate::core::credentials::clean::{Endpoints, Rules};
use icegate::core::credentials::response::Parsed;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Peak bytes allocated by `f` above what was live when it started, and what it returned.
fn peak_of(f: impl FnOnce() -> usize) -> (u64, usize) {
    let _profiler = dhat::Profiler::builder().testing().build();
    let out = f();
    let stats = dhat::HeapStats::get();
    (stats.max_bytes as u64, out)
}

fn main() {
    let body = Bytes::from(load_table::response(5 * 1024 * 1024));
    let size = body.len() as f64;
    let endpoints = Endpoints { credentials: "v1/c".into(), sign: "v1/s".into(), signer_uri: None };
    let rules =
        Rules { action: Action::Strip, extra_allowed: &[], endpoints: &endpoints, minted: None, read_headers: &[] };
    let (ours, out_len) = peak_of(|| {
        let parsed = Parsed::read(&body).unwrap();
        let locations = parsed.locations.clone().unwrap_or_default();
        let chunks = parsed.render(&rules, &locations).unwrap();
        chunks.len()
    });
    let (baseline, _) = peak_of(|| {
        let mut v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        v.as_object_mut().unwrap().insert("storage-credentials".into(), serde_json::json!([]));
        serde_json::to_vec(&v).unwrap().len()
    });
    println!("response: {} bytes; rewritten: {out_len} bytes", body.len());
    println!(
        "peak heap while rewriting: icegate {ours} bytes ({:.3}x the response); baseline full re-serialize {baseline} bytes ({:.2}x)",
        ours as f64 / size,
        baseline as f64 / size
    );
}
