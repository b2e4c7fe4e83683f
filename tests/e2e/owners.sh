#!/usr/bin/env bash
# Ownership by creation end to end (issue 9): the dev Iceberg REST catalog, icegate with an
# embedded ownership store in front of it, and PyIceberg (tests/e2e/owners.py). icegate is
# killed with SIGKILL between the two phases and started again on the same store file.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
DEV="$ROOT/deploy/dev-catalog"
. "$E2E/lib.sh"
"$DEV/build.sh" >&2
VENV="$ROOT/target/e2e-venv"
venv "$VENV" "$E2E/requirements.txt"
(cd "$ROOT" && cargo build --locked --quiet)
ICEGATE="$ROOT/target/debug/icegate"
"$ICEGATE" check --policy "$E2E/owners-policy.yaml" >/dev/null

start_work owners
"$DEV/run.sh" 0 "$WORK/warehouse" --quiet >"$WORK/catalog.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/catalog.log" "dev-catalog listening on"
CATALOG="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog.log" | head -1)"
PORT="$(free_port)"
cat >"$WORK/icegate.toml" <<CONF
listen = "127.0.0.1:$PORT"
admin_listen = "127.0.0.1:0"
policy = "$E2E/owners-policy.yaml"

[upstream]
url = "$CATALOG"

[owners]
path = "$WORK/owners.db"
CONF

start_gate() {
  "$ICEGATE" serve --config "$WORK/icegate.toml" >"$WORK/icegate-$1.log" 2>&1 &
  GATE=$!
  PIDS+=("$GATE")
  wait_for "$WORK/icegate-$1.log" "icegate listening" "$GATE"
}
run_phase() {
  if ! "$VENV/bin/python" "$E2E/owners.py" "http://127.0.0.1:$PORT" "$CATALOG" "$1"; then
    echo "--- icegate log" >&2; tail -50 "$WORK/icegate-$1.log" >&2
    exit 1
  fi
}

start_gate before
run_phase before
kill -9 "$GATE"; wait "$GATE" 2>/dev/null || true
echo "--- icegate killed (SIGKILL); the store holds:" >&2
"$ICEGATE" owners list --config "$WORK/icegate.toml" >&2
start_gate after
run_phase after
if [ -n "$("$ICEGATE" owners list --config "$WORK/icegate.toml" | grep 'prod.lab2.t2' || true)" ]; then
  echo "FAIL the drop left carol's record in the store" >&2; exit 1
fi
echo "owners e2e: ok" >&2
