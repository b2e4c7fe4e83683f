#!/usr/bin/env bash
# What icegate costs a Trino (issue 46): one Trino (tests/live/trino/lib.sh) with two catalogs
# on the same dev catalog (s3:// warehouse in moto, vending moto credentials): `direct` at the
# catalog's address and `gate` at icegate's, both with the README recipe's OAUTH2 credential
# (tokens from oidc-provider; the dev catalog ignores them, icegate verifies them) and header;
# icegate on benches/trino/policy.yaml (everything allowed, credentials passed on) with the
# README's `narrowing.ownership = "caller"`. Then benches/trino/bench.py runs its fixed query
# set (selects, a listing, an insert) on both, interleaved, and prints the ratio of wall times
# (goal: at most 1.02).
#
#   bash benches/trino/run.sh [ROUNDS]      (default 20)
#
# icegate is the release build (ICEGATE_PROFILE=debug for the debug one). Not part of the test
# command; the figure goes in docs/performance.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
LIVE="$ROOT/tests/live/trino"
DEV="$ROOT/deploy/dev-catalog"
. "$E2E/lib.sh"
. "$LIVE/lib.sh"
ROUNDS="${1:-20}"
PROFILE="${ICEGATE_PROFILE:-release}"

"$DEV/build.sh" >&2
MOTO_VENV="$ROOT/target/e2e-moto-venv"
venv "$MOTO_VENV" "$E2E/requirements-moto.txt"
OUT="$ROOT/target/upstream-auth"
idp_install
if [ "$PROFILE" = release ]; then
  (cd "$ROOT" && cargo build --locked --release --quiet --bin icegate)
else
  (cd "$ROOT" && cargo build --locked --quiet --bin icegate)
fi
ICEGATE="$ROOT/target/$PROFILE/icegate"
trino_install "$ROOT"
AWS_BUNDLE_JAR="$(m2_jar "$AWS_BUNDLE")"

start_work trino-bench
unset AWS_PROFILE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_WEB_IDENTITY_TOKEN_FILE AWS_ROLE_ARN
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true
BUCKET=icegate-trino-bench
"$MOTO_VENV/bin/python" "$E2E/downscope_moto.py" "$BUCKET" >"$WORK/moto.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/moto.log" "moto listening on" "${PIDS[-1]}"
MOTO="$(grep -a 'moto listening on' "$WORK/moto.log" | grep -o 'http://127.0.0.1:[0-9]*' | head -1)"
SECRET="trino-bench-$RANDOM$RANDOM"
IDP_PORT="$(free_port)"
IDP="http://127.0.0.1:$IDP_PORT"
(cd "$OUT/node" && PORT="$IDP_PORT" TOKEN_TTL=300 KEYS_FILE="$WORK/idp-keys.json" KID=trino-bench-key \
  ICEGATE_SECRET="unused-$RANDOM" ETL_SECRET="unused-$RANDOM" TRINO_SECRET="$SECRET" \
  exec node idp.mjs) >"$WORK/idp.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/idp.log" "idp listening" "${PIDS[-1]}"
DEV_CATALOG_CLASSPATH="$AWS_BUNDLE_JAR" AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \
  "$DEV/run.sh" 0 "s3://$BUCKET/wh" --s3-endpoint "$MOTO" --vend "$LIVE/vend.json" --quiet >"$WORK/catalog.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/catalog.log" "dev-catalog listening on" "${PIDS[-1]}"
CATALOG="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog.log" | head -1)"
GATE_PORT="$(free_port)"
GATE="http://127.0.0.1:$GATE_PORT"
cat >"$WORK/icegate.toml" <<EOF
listen = "127.0.0.1:$GATE_PORT"
admin_listen = "127.0.0.1:0"
policy = "$ROOT/benches/trino/policy.yaml"
[identity]
providers = ["jwt"]
[identity.jwt]
issuer = "$IDP"
audience = "urn:icegate:catalog"
jwks_url = "$IDP/jwks"
user_claims = ["client_id"]
[upstream]
url = "$CATALOG"
[narrowing]
ownership = "caller"
EOF
"$ICEGATE" serve --config "$WORK/icegate.toml" >"$WORK/icegate.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/icegate.log" "icegate listening" "${PIDS[-1]}"

# Both catalogs from the README's recipe (lake_write's header), differing only in the address.
mkdir -p "$WORK/trino/catalog" "$WORK/recipe"
python3 "$LIVE/recipe.py" "$ROOT/README.md" "$WORK/recipe" "@URI@" "$IDP/token" "$SECRET" "$MOTO"
sed "s|@URI@|$CATALOG|" "$WORK/recipe/lake_write.properties" >"$WORK/trino/catalog/direct.properties"
sed "s|@URI@|$GATE|" "$WORK/recipe/lake_write.properties" >"$WORK/trino/catalog/gate.properties"
TRINO_PORT="$(free_port)"
trino_launch "$WORK/trino" "$WORK/trino.log" "$TRINO_PORT"
trino_wait "$WORK/trino.log"
echo "trino bench: Trino $TRINO_VERSION started in $TRINO_STARTUP s; icegate ($PROFILE) $GATE in front of $CATALOG" >&2
python3 "$ROOT/benches/trino/bench.py" "http://127.0.0.1:$TRINO_PORT" "$ROUNDS"
