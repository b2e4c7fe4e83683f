#!/usr/bin/env bash
# Read restrictions end to end (docs/design.md §8, docs/restrictions.md): the dev Iceberg REST
# catalog, icegate with tests/e2e/restrictions-policy.yaml in front of it, and PyIceberg
# (tests/e2e/restrictions.py): the trusted engine's loadTable carries the restrictions by field
# id, a reference reader (PyIceberg + pyarrow, test code) applies them, an exempt user reads raw
# data and an untrusted client is refused. Then the table's restricted columns are renamed and
# reordered: icegate with the old policy fails closed, and with the policy naming the new
# columns issues the same field ids. Last, the table's owner tries to move data out from under
# the restrictions (a rename of the table, a restricted column's name given to a new column):
# refused, while an unrelated new column is accepted, and the field ids issued stay the same.
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
POLICY="$E2E/restrictions-policy.yaml"
"$ICEGATE" check --policy "$POLICY" >/dev/null

start_work restrictions
"$DEV/run.sh" 0 "$WORK/warehouse" --quiet >"$WORK/catalog.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/catalog.log" "dev-catalog listening on"
CATALOG="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog.log" | head -1)"

# start_gate LABEL POLICY: icegate on a fresh port (GATE_URL), its log in $WORK/icegate-LABEL.log
start_gate() {
  local port; port="$(free_port)"
  "$ICEGATE" serve --upstream "$CATALOG" --policy "$2" --listen "127.0.0.1:$port" \
    --admin-listen 127.0.0.1:0 >"$WORK/icegate-$1.log" 2>&1 &
  GATE=$!
  PIDS+=("$GATE")
  wait_for "$WORK/icegate-$1.log" "icegate listening" "$GATE"
  GATE_URL="http://127.0.0.1:$port"
}
run_phase() {
  if ! "$VENV/bin/python" "$E2E/restrictions.py" "$GATE_URL" "$CATALOG" "$1"; then
    echo "--- icegate log" >&2; tail -50 "$WORK/icegate-$1.log" >&2
    exit 1
  fi
}

start_gate before "$POLICY"
run_phase before
# the columns renamed upstream: the policy now names columns the table does not have
run_phase evolved-old-policy
if ! grep -aq "fix the policy" "$WORK/icegate-before.log"; then
  echo "FAIL icegate's log does not say the policy names what the table lacks" >&2
  tail -20 "$WORK/icegate-before.log" >&2; exit 1
fi
kill "$GATE"; wait "$GATE" 2>/dev/null || true
# the policy written for the new names
sed -e 's/term: region/term: area/' -e 's/email: mask-alphanum/contact: mask-alphanum/' \
  -e 's/ssn: replace-with-null/national_id: replace-with-null/' "$POLICY" >"$WORK/evolved.yaml"
"$ICEGATE" check --policy "$WORK/evolved.yaml" >/dev/null
start_gate evolved "$WORK/evolved.yaml"
run_phase evolved
run_phase cover
echo "restrictions e2e: ok" >&2
