#!/usr/bin/env bash
# Runs every test icegate has: lints; unit tests and the integration binary (the conformance
# cases of ../shared/conformance, OpenAPI route coverage, property and differential tests, the
# serving path against an in-process fake upstream, CLI); the dev catalog's smoke test; the end
# to end tests with real clients through icegate (and credential vending against the dev catalog
# and moto); the PostgreSQL ownership store against a real server (installed from Debian's
# packages when missing); a build of the benchmarks; and the README's demo command in a fresh clone. Long benchmarks
# and fuzzing are separate commands (see the README).
set -euo pipefail
cd "$(dirname "$0")/.."
# One full build per run: incremental artefacts would only take disk (they were 12 GB of 20).
export CARGO_INCREMENTAL=0
cargo clippy --locked --all-targets -- -D warnings
cargo test --locked
bash tests/postgres.sh
cargo bench --locked --no-run
bash deploy/dev-catalog/smoke.sh
bash tests/e2e/run.sh
bash tests/readme/follow.sh
