#!/usr/bin/env bash
# Starts the dev Iceberg REST catalog and icegate in front of it (policies/example.yaml), runs
# tests/e2e/clients.py with PyIceberg and DuckDB through icegate, and stops both (`--clients-only`,
# the demo, ends there). Then owners.sh (ownership by creation), credentials.sh (vending against the dev catalog), downscope.sh
# (s3-downscope against moto), signing.sh (remote signing against moto), local_signer.sh (icegate as the
# signer, against moto), restrictions.sh (read restrictions with a reference reader), spark.sh (Spark SQL),
# transparency.sh, trino_way.sh, many_upstreams.sh (two upstreams behind one icegate) and
# report.sh (the access report in headless Chromium), each with its own processes.
# Exits non-zero on any failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEV="$ROOT/deploy/dev-catalog"
. "$ROOT/tests/e2e/lib.sh"
"$DEV/build.sh" >&2
VENV="$ROOT/target/e2e-venv"
venv "$VENV" "$ROOT/tests/e2e/requirements.txt"
(cd "$ROOT" && cargo build --locked --quiet)
start_work clients
"$DEV/run.sh" 0 "$WORK/warehouse" --quiet >"$WORK/catalog.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/catalog.log" "dev-catalog listening on"
CATALOG="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog.log" | head -1)"
PORT="$(free_port)"
"$ROOT/target/debug/icegate" serve --upstream "$CATALOG" --policy "$ROOT/policies/example.yaml" \
  --listen "127.0.0.1:$PORT" --admin-listen 127.0.0.1:0 >"$WORK/icegate.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/icegate.log" "icegate listening"
echo "catalog $CATALOG, icegate http://127.0.0.1:$PORT" >&2
if ! "$VENV/bin/python" "$ROOT/tests/e2e/clients.py" "http://127.0.0.1:$PORT" "$CATALOG"; then
  echo "--- icegate log" >&2; tail -50 "$WORK/icegate.log" >&2
  exit 1
fi
# The demo (scripts/demo.sh) stops here; the test command goes on.
if [ "${1:-}" = "--clients-only" ]; then exit 0; fi
# Ownership by creation (issue 9): PyIceberg, an embedded store, icegate killed and restarted.
bash "$ROOT/tests/e2e/owners.sh"
# Credential vending and remote signing (docs/design.md §8): its own dev catalogs and icegates.
bash "$ROOT/tests/e2e/credentials.sh"
# s3-downscope against a local moto server (S3 and STS): its own moto, dev catalog and icegate.
bash "$ROOT/tests/e2e/downscope.sh"
# Remote signing against moto with signatures checked: its own moto, signing catalog and icegate.
bash "$ROOT/tests/e2e/signing.sh"
# icegate as the signer in front of the dev catalog (which neither vends nor signs), against moto:
# its own moto, dev catalog and icegate.
bash "$ROOT/tests/e2e/local_signer.sh"
# Read restrictions (docs/design.md §8): the enforcer's loadTable, a reference reader applying
# them, an exempt user, an untrusted client, and a schema evolution: its own catalog and icegates.
bash "$ROOT/tests/e2e/restrictions.sh"
# Spark SQL through icegate (PySpark 3.5, Iceberg 1.10.2 runtime): its own dev catalog and icegate.
bash "$ROOT/tests/e2e/spark.sh"
# Transparency (issue 29): with an allow-all policy, PyIceberg, DuckDB and Spark get the same
# results through icegate as directly, and every body is the upstream's but for §4/§8 rewrites.
bash "$ROOT/tests/e2e/transparency.sh"
# Trino's way of calling (the README's Trino recipe): Iceberg's Java RESTSessionCatalog built as
# Trino builds it, OAUTH2 through oidc-provider: its own provider, dev catalog and icegate.
bash "$ROOT/tests/e2e/trino_way.sh"
# Two upstreams behind one icegate (issue 29, docs/design.md §7): two dev catalogs, one policy,
# routing by catalog and by getConfig's warehouse, one upstream stopped: its own processes.
bash "$ROOT/tests/e2e/many_upstreams.sh"
# The fake Gravitino of the policy-source tests read by Gravitino's own Python client (issue 48).
bash "$ROOT/tests/e2e/gravitino_client.sh"
# The access report (`icegate report`) in headless Chromium: the DOM, its filters, a screenshot.
bash "$ROOT/tests/e2e/report.sh"
