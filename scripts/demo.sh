#!/usr/bin/env bash
# The demo: starts the dev Iceberg REST catalog (Iceberg's own server code) and icegate in front
# of it with policies/example.yaml and nothing else (`serve --upstream --policy`: the ownership
# store is on, at its default path), drives it with PyIceberg and DuckDB as an engineer, a
# narrowed analyst and a user who may only create tables (allowed and denied requests), then
# shows `icegate check` and `icegate explain` on the same policy, and exits.
#
# Takes about 4 minutes the first time (it installs Debian packages for the dev catalog and a
# Python venv with pinned pyiceberg, pyarrow and duckdb, and builds icegate), about a minute
# after that (1 min 18 s here with the packages installed and icegate built).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== icegate demo: about 4 minutes the first time (installs and builds), about a minute after"
echo "== PyIceberg and DuckDB through icegate (policies/example.yaml)"
bash tests/e2e/run.sh --clients-only
echo
echo "== why: icegate check and icegate explain"
icegate=target/debug/icegate
policy=policies/example.yaml
run() { echo "\$ icegate $*"; "$icegate" "$@"; echo; }
run check --policy "$policy"
run explain --policy "$policy" --user alice --active-roles analyst --body policies/requests/commit.json POST /v1/prod/namespaces/sales/tables/events
run explain --policy "$policy" --user alice --active-roles analyst GET /v1/prod/namespaces/sales/tables/salaries
# engineer holds MODIFY_TABLE on prod.sales, and loadTable accepts it: the policy denies both
run explain --policy "$policy" --user alice --active-roles engineer GET /v1/prod/namespaces/sales/tables/salaries
run explain --policy "$policy" --user carol DELETE /v1/prod/namespaces/hr/tables/payroll
# carol's group owns prod.hr, whose directory is s3://lake/hr: she may not move a table onto sales' files
run explain --policy "$policy" --user carol --namespace-location s3://lake/hr --body policies/requests/move.json POST /v1/prod/namespaces/hr/tables/payroll
run explain --policy "$policy" --user alice GET '/v1/prod/namespaces/sales/tables/../../hr/tables/payroll'
