#!/usr/bin/env bash
# The name-parsing differential against Iceberg's Java RESTUtil (issue 8), for scripts/test.sh:
# builds the dev catalog's Iceberg jar (idempotent, deploy/dev-catalog/build.sh), then runs the
# integration test that compares icegate's reading of tricky path segments with Java's, with the
# skip turned into a failure: here the jar must be there.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash deploy/dev-catalog/build.sh
ICEGATE_REQUIRE_JAVA_NAMES=1 cargo test --locked --test integration java_names -- --nocapture
