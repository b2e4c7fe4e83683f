#!/usr/bin/env bash
# Transparency (issue 29): with a policy that allows everything (tests/e2e/transparency-policy.yaml),
# clients get the same results through icegate as directly at the dev catalog, and every answer
# body icegate relays is the upstream's, byte for byte, except what docs/design.md §4 and §8
# rewrite. Two fresh dev catalogs (both with the --vend fixture tests/e2e/transparency-vend.json,
# so credential answers have something to rewrite) and three recording taps:
#
#   clients -> tap "direct"  -> catalog D
#   clients -> tap "client"  -> icegate -> tap "upstream" -> catalog G
#
# tests/e2e/transparency.py runs the PyIceberg workload and DuckDB's subset against both sides,
# tests/e2e/transparency_spark.py Spark's subset; each compares the two sides' results.
# tests/e2e/transparency_bodies.py then compares the taps' records: the same requests and
# statuses on both sides, and each body the client got through icegate against the upstream's.
# Exits non-zero on any difference. Called by tests/e2e/run.sh; runs on its own too
# (`--no-spark` skips Spark's subset).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
DEV="$ROOT/deploy/dev-catalog"
. "$E2E/lib.sh"
START=$SECONDS
"$DEV/build.sh" >&2
VENV="$ROOT/target/e2e-venv"
venv "$VENV" "$E2E/requirements.txt"
SPARK=1; [ "${1:-}" = "--no-spark" ] && SPARK=0
if [ "$SPARK" = 1 ]; then JARS="$(bash "$E2E/spark/install.sh")"; fi
(cd "$ROOT" && cargo build --locked --quiet)
ICEGATE="$ROOT/target/debug/icegate"
"$ICEGATE" check --policy "$E2E/transparency-policy.yaml" >/dev/null

start_work transparency
trap 'exit 130' INT TERM
for side in direct gate; do
  mkdir -p "$WORK/warehouse-$side"
  "$DEV/run.sh" 0 "$WORK/warehouse-$side" --vend "$E2E/transparency-vend.json" --quiet >"$WORK/catalog-$side.log" 2>&1 &
  PIDS+=($!)
done
for side in direct gate; do wait_for "$WORK/catalog-$side.log" "dev-catalog listening on"; done
catalog() { grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog-$1.log" | head -1; }
# tap NAME UPSTREAM [--number]: a recording tap, its URL in TAP
tap() {
  python3 "$E2E/transparency_tap.py" "$2" "$WORK/$1.jsonl" "${@:3}" >"$WORK/tap-$1.log" 2>&1 &
  PIDS+=($!)
  wait_for "$WORK/tap-$1.log" "tap listening on" $!
  TAP="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/tap-$1.log" | head -1)"
}
tap direct "$(catalog direct)"; DIRECT="$TAP"
tap upstream "$(catalog gate)"; UPSTREAM="$TAP"
PORT="$(free_port)"
"$ICEGATE" serve --upstream "$UPSTREAM" --policy "$E2E/transparency-policy.yaml" \
  --listen "127.0.0.1:$PORT" --admin-listen 127.0.0.1:0 >"$WORK/icegate.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/icegate.log" "icegate listening" $!
tap client "http://127.0.0.1:$PORT" --number; GATE="$TAP"
echo "transparency e2e: direct $DIRECT -> $(catalog direct); icegate $GATE -> :$PORT -> $UPSTREAM -> $(catalog gate)" >&2

status=0
"$VENV/bin/python" "$E2E/transparency.py" "$DIRECT" "$WORK/warehouse-direct" "$GATE" "$WORK/warehouse-gate" "$WORK" || status=1
if [ "$SPARK" = 1 ]; then
  export SPARK_LOCAL_IP=127.0.0.1 SPARK_LOCAL_DIRS="$WORK/spark-local" PYSPARK_PYTHON="$ROOT/target/spark/venv/bin/python"
  unset SPARK_HOME PYSPARK_SUBMIT_ARGS
  timeout --kill-after=10 300 "$ROOT/target/spark/venv/bin/python" "$E2E/transparency_spark.py" \
    "$DIRECT" "$WORK/warehouse-direct" "$GATE" "$WORK/warehouse-gate" "$JARS" "$WORK" || status=1
fi
"$VENV/bin/python" "$E2E/transparency_bodies.py" "$WORK/direct.jsonl" "$WORK/client.jsonl" "$WORK/upstream.jsonl" || status=1
# TRANSPARENCY_KEEP=DIR keeps the records and results (for a look at what differed).
if [ -n "${TRANSPARENCY_KEEP:-}" ]; then cp -r "$WORK" "$TRANSPARENCY_KEEP"; echo "records kept in $TRANSPARENCY_KEEP" >&2; fi
if [ "$status" != 0 ]; then
  echo "--- icegate log (without audit records)" >&2; grep -av '^{' "$WORK/icegate.log" | tail -20 >&2
  echo "--- icegate audit (not allowed)" >&2; grep -a '^{' "$WORK/icegate.log" | grep -av '"decision":"allow"' | tail -20 >&2
  exit 1
fi
echo "transparency e2e: done in $((SECONDS - START)) s" >&2
