#!/usr/bin/env bash
# install.sh: everything Spark needs for tests/e2e/spark.sh, pinned and cached, so a second run
# does nothing. Prints the value for `spark.jars` on stdout.
#
# 1. target/spark/venv: PySpark 3.5, exactly as tests/e2e/requirements-spark.txt pins it (hashes,
#    no dependency resolution, no unpinned build tools).
# 2. Iceberg 1.10.2's Spark runtime jar, `org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.2`
#    from Maven Central (with its own shaded Jackson and httpclient5/httpcore5), SHA-256 pinned and
#    kept in ~/.m2: deploy/dev-catalog/iceberg-jar.sh, the dev catalog's own jar.
# Usage: tests/e2e/spark/install.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
CACHE="$ROOT/target/spark"
VENV="$CACHE/venv"
REQS="$ROOT/tests/e2e/requirements-spark.txt"

log() { echo "[spark install] $*" >&2; }
mkdir -p "$CACHE"
# What installs before Maven Central's jar was used left here (Debian's debs, the relocated jar).
rm -rf "$CACHE/lib" "$CACHE/debs"

# 1. The venv. setuptools first (pyspark is an sdist, built without build isolation so that no
#    unpinned build dependency is fetched), then everything else.
if [ ! -x "$VENV/bin/python" ] || ! cmp -s "$REQS" "$VENV/.requirements"; then
  log "installing $(grep -Eo '^[a-z0-9-]+==[^ ]+' "$REQS" | tr '\n' ' ')into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  PIP=("$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes)
  "${PIP[@]}" -r <(grep -E '^setuptools==' "$REQS") >&2
  "${PIP[@]}" --no-build-isolation -r "$REQS" >&2
  cp "$REQS" "$VENV/.requirements"
fi

# 2. The runtime jar.
"$ROOT/deploy/dev-catalog/iceberg-jar.sh"
