#!/usr/bin/env bash
# Trino's way of calling, end to end (issue 29; a real Trino runs in tests/live/trino.sh): its Iceberg connector
# is Iceberg's Java RESTSessionCatalog configured from the catalog file; tests/e2e/trino/
# TrinoWay.java builds it with exactly Trino's property map from a Trino catalog file and makes
# the calls behind SHOW SCHEMAS, SHOW TABLES, SELECT and INSERT (the Trino sources it follows
# are named in its header).
#
# Set-up: oidc-provider (tests/upstream_auth/idp.mjs, npm-pinned) issues the client-credentials
# JWTs of Trino's `iceberg.rest-catalog.security=OAUTH2` credential (`trino:SECRET`, sent to
# `iceberg.rest-catalog.oauth2.server-uri`); icegate's `jwt` identity provider verifies them on
# the provider's JWKS (user = the token's client_id); the dev catalog is upstream. Two catalog
# files, the README's recipe, differ only in `iceberg.rest-catalog.http-headers`
# (X-Gravitino-Active-Roles: analyst / engineer) for the one user `trino`
# (tests/e2e/trino-policy.yaml). Checked: each catalog's SHOW SCHEMAS and SHOW TABLES lists
# only what its role may see, SELECT reads rows where granted, a refused SELECT and the
# analyst's INSERT surface as org.apache.iceberg.exceptions.ForbiddenException with icegate's
# message, the engineer's INSERT commits and the analyst then reads its rows, and every call
# authenticated with a token of the provider. Called by tests/e2e/run.sh; runs on its own too.
# Exits non-zero on failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
DEV="$ROOT/deploy/dev-catalog"
. "$E2E/lib.sh"
START=$SECONDS

# Iceberg's Java client with Hadoop's local file system and Parquet: the Spark test's jars (the
# Iceberg 1.10.2 runtime from Maven Central, PySpark's jars/).
"$DEV/build.sh" >&2
JARS="$(bash "$E2E/spark/install.sh")"
SITE="$("$ROOT/target/spark/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
CP="${JARS//,/:}:$SITE/pyspark/jars/*"
CLASSES="$ROOT/target/trino-way/classes"
if [ ! -f "$CLASSES/TrinoWay.class" ] || [ "$E2E/trino/TrinoWay.java" -nt "$CLASSES/TrinoWay.class" ]; then
  rm -rf "$CLASSES"; mkdir -p "$CLASSES"
  javac -nowarn -encoding UTF-8 -d "$CLASSES" -cp "$CP" "$E2E/trino/TrinoWay.java"
fi
OUT="$ROOT/target/upstream-auth"
idp_install
(cd "$ROOT" && cargo build --locked --quiet)
ICEGATE="$ROOT/target/debug/icegate"
"$ICEGATE" check --policy "$E2E/trino-policy.yaml" >/dev/null
echo "trino way: installed in $((SECONDS - START)) s" >&2

start_work trino-way
trap 'exit 130' INT TERM
fail() {
  echo "trino way: $*" >&2
  if [ -f "$WORK/icegate.log" ]; then
    echo "--- icegate log" >&2; grep -av '^{' "$WORK/icegate.log" | tail -15 >&2
    echo "--- icegate audit (not allowed)" >&2; grep -a '^{' "$WORK/icegate.log" | grep -av '"decision":"allow"' | tail -15 >&2
  fi
  exit 1
}
java_run() { java -Dlog4j2.configurationFile="$E2E/spark/log4j2.properties" -cp "$CLASSES:$CP" TrinoWay "$@"; }

TRINO_SECRET="trino-e2e-$RANDOM$RANDOM"
IDP_PORT="$(free_port)"
IDP="http://127.0.0.1:$IDP_PORT"
(cd "$OUT/node" && PORT="$IDP_PORT" TOKEN_TTL=300 KEYS_FILE="$WORK/idp-keys.json" KID=trino-way-key \
  ICEGATE_SECRET="unused-$RANDOM" ETL_SECRET="unused-$RANDOM" TRINO_SECRET="$TRINO_SECRET" \
  exec node idp.mjs) >"$WORK/idp.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/idp.log" "idp listening" "${PIDS[-1]}"

"$DEV/run.sh" 0 "$WORK/warehouse" --quiet >"$WORK/catalog.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/catalog.log" "dev-catalog listening on" "${PIDS[-1]}"
CATALOG="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog.log" | head -1)"
java_run --setup "$CATALOG" >"$WORK/setup.log" 2>&1 || { cat "$WORK/setup.log" >&2; fail "the fixture could not be created"; }

PORT="$(free_port)"
GATE="http://127.0.0.1:$PORT"
cat >"$WORK/icegate.toml" <<EOF
listen = "127.0.0.1:$PORT"
admin_listen = "127.0.0.1:0"
policy = "$E2E/trino-policy.yaml"
[owners]
store = "off"
[identity]
providers = ["jwt"]
[identity.jwt]
issuer = "$IDP"
audience = "urn:icegate:catalog"
jwks_url = "$IDP/jwks"
user_claims = ["client_id"]
[upstream]
url = "$CATALOG"
EOF
"$ICEGATE" serve --config "$WORK/icegate.toml" >"$WORK/icegate.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/icegate.log" "icegate listening" "${PIDS[-1]}"
echo "trino way: idp $IDP, catalog $CATALOG, icegate $GATE" >&2

# The README's Trino recipe, one file per Trino catalog (etc/catalog/NAME.properties).
catalog_file() { # catalog_file NAME ROLE
  cat >"$WORK/$1.properties" <<EOF
connector.name=iceberg
iceberg.catalog.type=rest
iceberg.rest-catalog.uri=$GATE
iceberg.rest-catalog.security=OAUTH2
iceberg.rest-catalog.oauth2.server-uri=$IDP/token
iceberg.rest-catalog.oauth2.credential=trino:$TRINO_SECRET
iceberg.rest-catalog.oauth2.scope=catalog
iceberg.rest-catalog.http-headers=X-Gravitino-Active-Roles: $2
EOF
}
catalog_file lake_read analyst
catalog_file lake_write engineer

# expect OUTPUT STATEMENT EXPECTED-RESULT: the line TrinoWay printed for STATEMENT is exactly it.
expect() {
  local got
  got="$(grep -aF -- "$2 => " <<<"$1" | head -1)"
  [ "$got" = "$2 => $3" ] || fail "expected '$2 => $3', got '${got:-nothing}'"
}
# expect_forbidden OUTPUT STATEMENT MESSAGE-START: refused with Iceberg's ForbiddenException, whose
# message is "Forbidden: " and icegate's (a HEAD's 403 has no body: "Forbidden: Forbidden").
expect_forbidden() {
  local got
  got="$(grep -aF -- "$2 => " <<<"$1" | head -1)"
  case "$got" in
    "$2 => ERR org.apache.iceberg.exceptions.ForbiddenException: Forbidden: $3"*) ;;
    *) fail "expected '$2' to be refused with ForbiddenException: $3..., got '${got:-nothing}'" ;;
  esac
}

READ="$(java_run "$WORK/lake_read.properties" "SHOW SCHEMAS" "SHOW TABLES sales" "SELECT sales.events" \
  "SELECT sales.daily" "SELECT sales.salaries" "INSERT sales.events 10,11" "SHOW TABLES staging" 2>"$WORK/read.err")" ||
  { cat "$WORK/read.err" >&2; fail "the analyst catalog's run failed"; }
echo "$READ" >&2
expect "$READ" "SHOW SCHEMAS" "OK sales"
expect "$READ" "SHOW TABLES sales" "OK daily,events"
expect "$READ" "SELECT sales.events" "OK rows 1,2"
expect "$READ" "SELECT sales.daily" "OK view SELECT id, event FROM events"
expect_forbidden "$READ" "SELECT sales.salaries" "not authorized to loadTable \`sales.salaries\`"
expect_forbidden "$READ" "INSERT sales.events 10,11" "not authorized to updateTable \`sales.events\`"
expect_forbidden "$READ" "SHOW TABLES staging" "Forbidden"

WRITE="$(java_run "$WORK/lake_write.properties" "SHOW SCHEMAS" "SHOW TABLES sales" "SHOW TABLES staging" \
  "INSERT sales.events 3,4" "SELECT sales.events" "SELECT hr.people" 2>"$WORK/write.err")" ||
  { cat "$WORK/write.err" >&2; fail "the engineer catalog's run failed"; }
echo "$WRITE" >&2
expect "$WRITE" "SHOW SCHEMAS" "OK sales,staging"
expect "$WRITE" "SHOW TABLES sales" "OK daily,events,payroll,salaries"
expect "$WRITE" "SHOW TABLES staging" "OK events_raw"
expect "$WRITE" "INSERT sales.events 3,4" "OK inserted 2"
expect "$WRITE" "SELECT sales.events" "OK rows 1,2,3,4"
expect_forbidden "$WRITE" "SELECT hr.people" "not authorized to loadTable \`hr.people\`"

# The analyst sees the engineer's rows, and not the rows its own refused INSERT wrote: their
# data file was never committed.
AGAIN="$(java_run "$WORK/lake_read.properties" "SELECT sales.events" 2>"$WORK/again.err")" ||
  { cat "$WORK/again.err" >&2; fail "the analyst catalog's second run failed"; }
expect "$AGAIN" "SELECT sales.events" "OK rows 1,2,3,4"

# Every catalog call carried one of the provider's tokens for `trino` (none was anonymous or
# refused at authentication), and the provider issued them (one per call: session type NONE).
if grep -a '^{' "$WORK/icegate.log" | grep -av '"user":"trino"' | grep -q .; then
  fail "a request reached icegate without the provider's token for trino"
fi
TOKENS="$(curl -fsS "$IDP/test/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token_requests"])')"
[ "$TOKENS" -ge 10 ] || fail "the provider answered $TOKENS token requests; Trino's way asks one per call"
echo "trino way: done in $((SECONDS - START)) s ($TOKENS tokens issued)" >&2
