#!/usr/bin/env bash
# The decision core on the example policy: validate it, then explain allowed and denied requests.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --locked --quiet
icegate=target/debug/icegate
policy=policies/example.yaml
run() { echo "\$ icegate $*" | sed "s|$policy|policies/example.yaml|"; "$icegate" "$@"; echo; }
run check --policy "$policy"
run explain --policy "$policy" --user alice GET /v1/prod/namespaces/sales/tables/orders
run explain --policy "$policy" --user alice --active-roles engineer --body policies/requests/commit.json POST /v1/prod/namespaces/sales/tables/orders
run explain --policy "$policy" --user alice --body policies/requests/commit.json POST /v1/prod/namespaces/sales/tables/orders
run explain --policy "$policy" --user alice --active-roles analyst GET /v1/prod/namespaces/sales/tables/salaries
run explain --policy "$policy" --user bi-service --active-roles engineer GET /v1/prod/namespaces/sales/tables/orders
run explain --policy "$policy" --user bob --active-roles etl DELETE /v1/prod/namespaces/sales/tables/orders
run explain --policy "$policy" --user carol DELETE /v1/prod/namespaces/hr/tables/payroll
run explain --policy "$policy" --user alice GET '/v1/prod/namespaces/sales/tables/../../hr/tables/payroll'
