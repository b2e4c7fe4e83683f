#!/usr/bin/env bash
# smoke.sh: builds the dev catalog, then for each mode (in-memory, and JdbcCatalog on SQLite)
# starts it on a free port with a fresh warehouse, runs smoke_test.py (raw REST calls for every
# route family + PyIceberg end to end) and stops it. The JDBC run also restarts the catalog and
# checks that tables persist. Then --vend (FAKE credentials vended on request, then always via
# DEV_CATALOG_VEND; the planning and signing fixtures; a malformed file refused at startup), and
# --prefix. Exits non-zero on any failure. Python packages come from requirements-test.txt,
# installed into .build/venv.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="$HERE/.build"
"$HERE/build.sh"

VENV="$BUILD/venv"
if [ ! -x "$VENV/bin/python" ] || ! cmp -s "$HERE/requirements-test.txt" "$VENV/.requirements"; then
  echo "[dev-catalog smoke] installing $(grep -v '^#' "$HERE/requirements-test.txt" | xargs)" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$HERE/requirements-test.txt" >&2
  cp "$HERE/requirements-test.txt" "$VENV/.requirements"
fi
PY="$VENV/bin/python"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/dev-catalog-smoke.XXXXXX")"
PID=""
cleanup() {
  if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# start LOG WAREHOUSE [flags]: start the catalog on a free port; sets PID and URL.
start() {
  local log="$1"; shift
  "$HERE/run.sh" 0 "$@" --quiet >"$log" 2>&1 &
  PID=$!
  for _ in $(seq 100); do
    if grep -aq "dev-catalog listening on" "$log"; then
      URL="$(grep -ao 'http://127.0.0.1:[0-9]*' "$log" | head -1)"
      echo "[dev-catalog smoke] $(grep -a 'dev-catalog listening on' "$log")" >&2
      return 0
    fi
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "dev-catalog did not start:" >&2; cat "$log" >&2; return 1
}
stop() { kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""; }

status=0
echo "== in-memory catalog"
start "$WORK/mem.log" "$WORK/wh-mem"
"$PY" "$HERE/smoke_test.py" "$URL" || status=1
stop

echo "== JdbcCatalog on SQLite"
start "$WORK/jdbc.log" "$WORK/wh-jdbc" --jdbc "$WORK/catalog.db"
"$PY" "$HERE/smoke_test.py" "$URL" --jdbc || status=1
curl -fsS -XPOST "$URL/v1/namespaces" -d '{"namespace":["persist"]}' >/dev/null
curl -fsS -XPOST "$URL/v1/namespaces/persist/tables" \
  -d '{"name":"kept","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","type":"long","required":false}]}}' >/dev/null
stop
start "$WORK/jdbc2.log" "$WORK/wh-jdbc" --jdbc "$WORK/catalog.db"
if curl -fsS "$URL/v1/namespaces/persist/tables/kept" >/dev/null; then
  echo "ok   - jdbc: table persists across a restart"
else
  echo "FAIL - jdbc: table persists across a restart"; status=1
fi
stop

echo "== --vend FILE (credentials on request)"
# Every placeholder appears, in config and in storage-credentials (values and prefix).
cat >"$WORK/vend.json" <<'JSON'
{"always": false,
 "config": {"s3.access-key-id": "AKIA-UPSTREAM", "s3.secret-access-key": "upstream-secret",
            "token": "upstream-token",
            "client.refresh-credentials-endpoint": "v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"},
 "storage-credentials": [
   {"prefix": "{location}", "config": {"s3.access-key-id": "AKIA-TABLE", "s3.session-token": "{namespace}.{table}@{prefix}"}},
   {"prefix": "s3://bucket/", "config": {"s3.access-key-id": "AKIA-BUCKET"}}]}
JSON
start "$WORK/vend.log" "$WORK/wh-vend" --vend "$WORK/vend.json"
"$PY" "$HERE/smoke_test.py" "$URL" --vend "$WORK/vend.json" || status=1
stop

echo "== DEV_CATALOG_VEND (always: true)"
sed 's/"always": false/"always": true/' "$WORK/vend.json" >"$WORK/vend-always.json"
export DEV_CATALOG_VEND="$WORK/vend-always.json"
start "$WORK/vend-always.log" "$WORK/wh-vend-always"
unset DEV_CATALOG_VEND
"$PY" "$HERE/smoke_test.py" "$URL" --vend "$WORK/vend-always.json" || status=1
stop

echo '{"config": {}, "storage-credential": []}' >"$WORK/vend-typo.json"
if ! timeout 30 "$HERE/run.sh" 0 "$WORK/wh-typo" --vend "$WORK/vend-typo.json" --quiet >"$WORK/typo.log" 2>&1 \
  && grep -q "unknown key storage-credential" "$WORK/typo.log"; then
  echo "ok   - vend: a malformed --vend file stops the catalog at startup"
else
  echo "FAIL - vend: a malformed --vend file stops the catalog at startup"; cat "$WORK/typo.log"; status=1
fi

echo "== --prefix wh"
start "$WORK/prefix.log" "$WORK/wh-prefix" --prefix wh
if "$PY" - "$URL" <<'PY'
import json, sys, urllib.error, urllib.request
from pyiceberg.catalog import load_catalog
url = sys.argv[1]
cfg = json.load(urllib.request.urlopen(url + "/v1/config"))
assert cfg["overrides"] == {"prefix": "wh"}, cfg
try:
    urllib.request.urlopen(url + "/v1/other/namespaces")
    raise AssertionError("a foreign prefix must be refused")
except urllib.error.HTTPError as e:
    assert e.code == 400 and json.load(e)["error"]["type"] == "BadRequestException"
cat = load_catalog("dev", type="rest", uri=url)  # follows the advertised prefix
cat.create_namespace("p")
assert ("p",) in cat.list_namespaces()
assert json.load(urllib.request.urlopen(url + "/v1/wh/namespaces"))["namespaces"] == [["p"]]
assert json.load(urllib.request.urlopen(url + "/v1/namespaces"))["namespaces"] == [["p"]]
PY
then echo "ok   - prefix: advertised in overrides, followed by PyIceberg, foreign prefix refused"
else echo "FAIL - prefix: advertised in overrides, followed by PyIceberg, foreign prefix refused"; status=1
fi
stop

if [ "$status" = 0 ]; then echo "dev-catalog smoke: all passed"; else echo "dev-catalog smoke: FAILED"; fi
exit "$status"
