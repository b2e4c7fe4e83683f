#!/usr/bin/env bash
# Runs every test icegate has: lints, unit tests, the integration binary (conformance cases of
# ../shared/conformance, the OpenAPI route coverage, property and differential tests, CLI),
# and a compile check of the benchmarks. Long benchmarks and fuzzing are separate commands.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo clippy --locked --all-targets -- -D warnings
cargo test --locked
cargo bench --locked --no-run
