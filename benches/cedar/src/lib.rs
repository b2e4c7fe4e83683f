//! Nothing here: Cargo wants a library or binary target in every package, and this one exists
//! for its benchmark, `benches/cedar.rs` (run `cargo bench --manifest-path benches/cedar/Cargo.toml`).
