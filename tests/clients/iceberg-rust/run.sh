#!/usr/bin/env bash
# iceberg-rust (crate iceberg-catalog-rest 0.10.1) through icegate, end to end: builds the small
# client of tests/clients/iceberg-rust/ (its own workspace and lockfile, target dir
# target/iceberg-rust-client; the first build compiles about 320 crates, see docs/testing.md),
# starts the dev catalog with a fixture made by PyIceberg, and icegate on policies/example.yaml
# (the `simple` provider), then checks as alice narrowed to `analyst` and bob narrowed to `etl`:
# filtered namespace and table lists, a table loaded and its rows read with iceberg's local file
# storage, and a refused loadTable surfacing icegate's message. Step 8 of scripts/test.sh (CI).
# Exits non-zero on failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
HERE="$ROOT/tests/clients/iceberg-rust"
DEV="$ROOT/deploy/dev-catalog"
. "$ROOT/tests/e2e/lib.sh"
START=$SECONDS

"$DEV/build.sh" >&2
VENV="$ROOT/target/e2e-venv"
venv "$VENV" "$ROOT/tests/e2e/requirements.txt"
(cd "$ROOT" && cargo build --locked --quiet)
CARGO_TARGET_DIR="$ROOT/target/iceberg-rust-client" cargo build --locked --quiet --manifest-path "$HERE/Cargo.toml"
CLIENT="$ROOT/target/iceberg-rust-client/debug/icegate-iceberg-rust-client"
echo "iceberg-rust: built in $((SECONDS - START)) s" >&2

start_work iceberg-rust
trap 'exit 130' INT TERM
"$DEV/run.sh" 0 "$WORK/warehouse" --quiet >"$WORK/catalog.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/catalog.log" "dev-catalog listening on" "${PIDS[-1]}"
CATALOG="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog.log" | head -1)"
"$VENV/bin/python" - "$CATALOG" <<'PY'
import sys
import pyarrow as pa
from pyiceberg.catalog import load_catalog
c = load_catalog("c", type="rest", uri=sys.argv[1])
schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("event", pa.string())])
for ns in ("sales", "staging", "hr"):
    c.create_namespace(ns)
for name in ("sales.events", "sales.salaries", "staging.events_raw", "hr.people"):
    c.create_table(name, schema=schema).append(pa.table({"id": [1, 2], "event": ["a", "b"]}, schema=schema))
PY
PORT="$(free_port)"
GATE="http://127.0.0.1:$PORT"
"$ROOT/target/debug/icegate" serve --upstream "$CATALOG" --policy "$ROOT/policies/example.yaml" \
  --listen "127.0.0.1:$PORT" --admin-listen 127.0.0.1:0 >"$WORK/icegate.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/icegate.log" "icegate listening" "${PIDS[-1]}"

fail() {
  echo "iceberg-rust: $*" >&2
  echo "--- icegate audit (not allowed)" >&2; grep -a '^{' "$WORK/icegate.log" | grep -av '"decision":"allow"' | tail -10 >&2
  exit 1
}
expect() { # expect OUTPUT CALL RESULT-START
  local got
  got="$(grep -aF -- "$2 => " <<<"$1" | head -1)"
  case "$got" in "$2 => $3"*) ;; *) fail "expected '$2 => $3...', got '${got:-nothing}'" ;; esac
}

ALICE="$("$CLIENT" "$GATE" alice analyst namespaces "tables sales" "rows sales.events" "load sales.salaries")" ||
  fail "alice's run failed"
echo "$ALICE" >&2
expect "$ALICE" "namespaces" "OK sales"
expect "$ALICE" "tables sales" "OK events"
expect "$ALICE" "rows sales.events" "OK rows 2"
expect "$ALICE" "load sales.salaries" "ERR "
grep -aF "load sales.salaries => " <<<"$ALICE" | grep -qF 'not authorized to loadTable `sales.salaries`' ||
  fail "alice's refused loadTable does not carry icegate's message"

BOB="$("$CLIENT" "$GATE" bob etl namespaces "tables staging" "load staging.events_raw" "load sales.events")" ||
  fail "bob's run failed"
echo "$BOB" >&2
expect "$BOB" "namespaces" "OK staging"
expect "$BOB" "tables staging" "OK events_raw"
expect "$BOB" "load staging.events_raw" "OK columns id,event"
grep -aF "load sales.events => " <<<"$BOB" | grep -qF 'not authorized to loadTable `sales.events`' ||
  fail "bob's refused loadTable does not carry icegate's message"
echo "iceberg-rust: done in $((SECONDS - START)) s" >&2
