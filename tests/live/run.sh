#!/usr/bin/env bash
# The live step of scripts/test.sh: real components from Maven Central in front of and behind
# icegate, each script standalone (docs/testing.md "Live components"): Spark's own S3 client
# (S3FileIO) signing through icegate's local signer, and a real Trino 483 reading the README's
# recipe with a real Keycloak as its identity provider. Components are fetched once into Maven's local repository (~/.m2) and reused.
set -euo pipefail
LIVE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for script in spark_s3fileio.sh trino.sh; do
  started=$SECONDS
  bash "$LIVE/$script"
  echo "== live: $script took $((SECONDS - started)) s" >&2
done
