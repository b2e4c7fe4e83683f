#!/usr/bin/env bash
# The main job: starts the dev Iceberg REST catalog (Iceberg's own server code) and icegate in
# front of it with policies/example.yaml, drives it with PyIceberg as an engineer and as a
# narrowed analyst (allowed and denied requests), then shows `icegate explain` on the same
# policy, and exits. Installs what it needs on first run (Debian packages, a Python venv).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== PyIceberg through icegate (policies/example.yaml)"
bash tests/e2e/run.sh --clients-only
echo
echo "== why: icegate explain"
icegate=target/debug/icegate
policy=policies/example.yaml
run() { echo "\$ icegate $*"; "$icegate" "$@"; echo; }
run check --policy "$policy"
run explain --policy "$policy" --user alice --active-roles analyst --body policies/requests/commit.json POST /v1/prod/namespaces/sales/tables/events
run explain --policy "$policy" --user alice --active-roles analyst GET /v1/prod/namespaces/sales/tables/salaries
run explain --policy "$policy" --user carol DELETE /v1/prod/namespaces/hr/tables/payroll
run explain --policy "$policy" --user alice GET '/v1/prod/namespaces/sales/tables/../../hr/tables/payroll'
