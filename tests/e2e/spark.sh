#!/usr/bin/env bash
# Spark through icegate, end to end: installs PySpark 3.5 and the Iceberg 1.10.2 Spark runtime
# (tests/e2e/spark/install.sh: PySpark pinned and cached in target/spark/, the runtime jar from
# Maven Central, pinned, in ~/.m2), starts its own dev catalog and an icegate on policies/example.yaml (the
# policy tests/e2e/clients.py checks PyIceberg and DuckDB on), and runs tests/e2e/spark.py.
# Exits non-zero on failure. Called by tests/e2e/run.sh; runs on its own too.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
DEV="$ROOT/deploy/dev-catalog"
. "$E2E/lib.sh"
START=$SECONDS
"$DEV/build.sh" >&2
JARS="$(bash "$E2E/spark/install.sh")"
(cd "$ROOT" && cargo build --locked --quiet)
echo "spark e2e: installed in $((SECONDS - START)) s" >&2

start_work spark
trap 'exit 130' INT TERM
"$DEV/run.sh" 0 "$WORK/warehouse" --quiet >"$WORK/catalog.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/catalog.log" "dev-catalog listening on"
CATALOG="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog.log" | head -1)"
PORT="$(free_port)"
"$ROOT/target/debug/icegate" serve --upstream "$CATALOG" --policy "$ROOT/policies/example.yaml" \
  --listen "127.0.0.1:$PORT" --admin-listen 127.0.0.1:0 >"$WORK/icegate.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/icegate.log" "icegate listening"
echo "spark e2e: catalog $CATALOG, icegate http://127.0.0.1:$PORT" >&2

# PySpark starts the driver JVM as its child; it exits with the Python process. The timeout
# bounds a hung run (a warm run takes well under a minute).
export SPARK_LOCAL_IP=127.0.0.1 SPARK_LOCAL_DIRS="$WORK/spark-local" PYSPARK_PYTHON="$ROOT/target/spark/venv/bin/python"
unset SPARK_HOME PYSPARK_SUBMIT_ARGS
PY=("$ROOT/target/spark/venv/bin/python" "$E2E/spark.py" "http://127.0.0.1:$PORT" "$CATALOG" "$JARS" "$WORK")
if ! timeout --kill-after=10 300 "${PY[@]}"; then
  # Its log lines, without the audit records (one JSON object per request), then the denials.
  echo "--- icegate log" >&2; grep -av '^{' "$WORK/icegate.log" | tail -20 >&2
  echo "--- icegate audit (not allowed)" >&2; grep -a '^{' "$WORK/icegate.log" | grep -av '"decision":"allow"' | tail -20 >&2
  exit 1
fi
echo "spark e2e: done in $((SECONDS - START)) s" >&2
