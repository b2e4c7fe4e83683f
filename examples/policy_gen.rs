//! Writes the benchmarks' generated policy (benches/common/policy_gen.rs) of about GRANTS
//! grants to OUT, for measuring `icegate check` and reloads on large policies (the load
//! harness's policy-load figures), in JSON when OUT ends in `.json`:
//!
//!     cargo run --release --example policy_gen -- 100000 target/load/policy-100000.yaml
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a generator run by hand and by the harness"
)]

#[path = "../benches/common/policy_gen.rs"]
mod policy_gen;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(grants), Some(out)) = (args.next(), args.next()) else {
        eprintln!("usage: policy_gen GRANTS OUT");
        std::process::exit(2);
    };
    let grants: u32 = grants.parse().unwrap_or_else(|_| panic!("GRANTS must be a number, got `{grants}`"));
    let shape = policy_gen::Shape::with_grants(grants);
    let generated = policy_gen::generate(&shape);
    let text = if out.ends_with(".json") { policy_gen::json(&generated.yaml) } else { generated.yaml };
    std::fs::write(&out, text.as_bytes()).unwrap_or_else(|e| panic!("cannot write `{out}`: {e}"));
    eprintln!("{out}: {} grants, {} bytes", shape.grants(), text.len());
}
