#!/usr/bin/env bash
# Many upstreams (issue 29, docs/design.md §7 "One gate, many catalogs"): TWO dev catalogs behind
# ONE icegate with one policy (tests/e2e/many-upstreams-policy.yaml):
#
#   PyIceberg -> icegate -+-> upstream `rest` (dev catalog, --prefix prod):      catalog prod,      warehouse prod-wh, default
#                         +-> upstream `lake` (dev catalog, --prefix analytics): catalog analytics, warehouse analytics-wh
#
# tests/e2e/many_upstreams.py drives it: each catalog's requests reach only its upstream (what
# each catalog holds, on disk and through its own API, and the request log each one prints),
# getConfig picks the upstream by `warehouse`, a catalog no upstream serves (`orphan`) is 403
# with icegate's message, audit lines and metrics name the upstream; then it stops `lake` and
# checks `rest` still serves while /readyz shows `lake` unreachable. Called by tests/e2e/run.sh;
# runs on its own too.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
DEV="$ROOT/deploy/dev-catalog"
. "$E2E/lib.sh"
START=$SECONDS
"$DEV/build.sh" >&2
VENV="$ROOT/target/e2e-venv"
venv "$VENV" "$E2E/requirements.txt"
(cd "$ROOT" && cargo build --locked --quiet)
ICEGATE="$ROOT/target/debug/icegate"
POLICY="$E2E/many-upstreams-policy.yaml"

start_work many-upstreams
trap 'exit 130' INT TERM
# Not --quiet: each dev catalog prints one line per request it receives, the record of what
# reached it.
declare -A CATALOG_PID
for side in rest:prod lake:analytics; do
  name="${side%%:*}"
  mkdir -p "$WORK/warehouse-$name"
  "$DEV/run.sh" 0 "$WORK/warehouse-$name" --prefix "${side#*:}" >"$WORK/catalog-$name.log" 2>&1 &
  PIDS+=($!); CATALOG_PID[$name]=$!
done
for name in rest lake; do wait_for "$WORK/catalog-$name.log" "dev-catalog listening on" "${CATALOG_PID[$name]}"; done
catalog() { grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog-$1.log" | head -1; }
PORT="$(free_port)"; ADMIN="$(free_port)"
cat >"$WORK/icegate.toml" <<TOML
listen = "127.0.0.1:$PORT"
admin_listen = "127.0.0.1:$ADMIN"
policy = "$POLICY"

[[upstreams]]
name = "rest"
url = "$(catalog rest)"
catalogs = ["prod"]
warehouses = ["prod-wh"]
default = true

[[upstreams]]
name = "lake"
url = "$(catalog lake)"
catalogs = ["analytics"]
warehouses = ["analytics-wh"]
TOML
# the config and the policy agree: no warning about a served or unserved catalog but `orphan`
"$ICEGATE" check --config "$WORK/icegate.toml" --policy "$POLICY" >/dev/null 2>"$WORK/check.log"
if grep -v 'catalog `orphan` is served by no upstream' "$WORK/check.log" | grep -q warning \
  || ! grep -q 'catalog `orphan` is served by no upstream' "$WORK/check.log"; then
  echo "icegate check --config: unexpected warnings:" >&2; cat "$WORK/check.log" >&2; exit 1
fi
"$ICEGATE" serve --config "$WORK/icegate.toml" >"$WORK/icegate.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/icegate.log" "icegate listening" $!
echo "many-upstreams e2e: icegate :$PORT -> rest $(catalog rest) (prod), lake $(catalog lake) (analytics)" >&2

if ! "$VENV/bin/python" "$E2E/many_upstreams.py" --gate "http://127.0.0.1:$PORT" --admin "http://127.0.0.1:$ADMIN" \
  --rest "$(catalog rest)" --lake "$(catalog lake)" --lake-pid "${CATALOG_PID[lake]}" --work "$WORK"; then
  echo "--- icegate log (without audit records)" >&2; grep -av '^{' "$WORK/icegate.log" | tail -20 >&2
  echo "--- icegate audit (last 20)" >&2; grep -a '^{' "$WORK/icegate.log" | tail -20 >&2
  exit 1
fi
echo "many-upstreams e2e: done in $((SECONDS - START)) s" >&2
