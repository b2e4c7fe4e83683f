//! Read restrictions on the served path's answer (docs/design.md §8): the 20 KB loadTable of an
//! unrestricted caller (exactly the credentials rewrite, which is all its answer goes through),
//! beside a trusted reader's (the restrictions written in first: one more envelope scan, the
//! current schema parsed, the answer copied once), and the same at 5 MB of metadata. Run with
//! `cargo bench --bench restrictions`; the figures are in docs/performance.md.
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
use icegate::core::restrictions::answer::inject;
use icegate::core::restrictions::{Action as Mask, Applied, ColumnPath, Filter};
use std::hint::black_box;

fn rewrite(body: Bytes) -> usize {
    let endpoints = Endpoints { credentials: "v1/c".into(), sign: "v1/s".into(), signer_uri: None };
    let rules =
        Rules { action: Action::Keep, extra_allowed: &[], endpoints: &endpoints, minted: None, read_headers: &[] };
    let parsed = Parsed::read(&body).unwrap();
    let locations = parsed.locations.clone().unwrap_or_default();
    parsed.render(&rules, &locations).unwrap().len()
}

/// What the proxy does for an answer: restrictions written in when there are some, then the
/// credentials rewrite.
fn answer(body: &Bytes, restrictions: Option<&Applied>) -> usize {
    let body = match restrictions {
        Some(applied) => Bytes::from(inject(body, applied).unwrap()),
        None => body.clone(),
    };
    rewrite(body)
}

fn applied() -> Applied {
    let filter = serde_json::json!({"type": "and", "left": {"type": "eq", "term": "data", "value": "EU"},
        "right": {"type": "not-null", "term": "ts"}});
    Applied {
        table: "prod.db.t".into(),
        entries: Vec::new(),
        trusted: true,
        row_filter: Some(Filter::parse(&filter).unwrap()),
        columns: vec![
            (ColumnPath::parse("data").unwrap(), Mask::MaskAlphanum),
            (ColumnPath::parse("ts").unwrap(), Mask::TruncateToYear),
        ],
    }
}

fn main() {
    let restricted = applied();
    let mut c = Criterion::default().configure_from_args();
    for (label, size) in [("20KB", 20 * 1024), ("5MB", 5 * 1024 * 1024)] {
        let body = Bytes::from(load_table::response(size));
        let mut group = c.benchmark_group("restrictions");
        group.throughput(Throughput::Bytes(body.len() as u64));
        if size > 1024 * 1024 {
            group.sample_size(30);
        }
        group.bench_function(format!("unrestricted_{label}"), |b| b.iter(|| black_box(answer(&body, None))));
        group.bench_function(format!("restricted_{label}"), |b| b.iter(|| black_box(answer(&body, Some(&restricted)))));
        group.finish();
    }
    c.final_summary();
}
