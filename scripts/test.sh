#!/usr/bin/env bash
# Runs every test icegate has: lints; unit tests and the integration binary (the conformance
# cases of ../shared/conformance, OpenAPI route coverage, property and differential tests, the
# serving path against an in-process fake upstream, the adversarial suite, ownership by creation,
# CLI); the PostgreSQL ownership store against a real server (installed from Debian's packages
# when missing); the dev catalog's smoke test; the name-parsing differential against Iceberg's
# Java RESTUtil; the end to end tests with real clients through icegate (credential vending
# against the dev catalog and moto, ownership by creation with PyIceberg); a build of the
# benchmarks; the README's demo command in a fresh clone; and a short run of each fuzz target.
# Long benchmarks and long fuzzing are separate commands (see the README).
set -euo pipefail
cd "$(dirname "$0")/.."
# One full build per run: incremental artefacts would only take disk (they were 12 GB of 20).
export CARGO_INCREMENTAL=0
cargo clippy --locked --all-targets -- -D warnings
cargo test --locked
# the example policy's decision tests, run as a policy repository's CI runs them (docs/policy-ci.md)
cargo run --locked --quiet -- test --policy policies/example.yaml policies/example.tests.yaml
bash tests/postgres.sh
cargo bench --locked --no-run
bash deploy/dev-catalog/smoke.sh
# name parsing against Iceberg's Java RESTUtil, with the jar smoke.sh just built
bash tests/names/run.sh
bash tests/e2e/run.sh
bash tests/readme/follow.sh
# each fuzz target for 20 s on its committed corpus (--long for a real run)
bash scripts/fuzz.sh
