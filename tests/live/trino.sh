#!/usr/bin/env bash
# A real Trino in front of icegate (issue 46): Trino 483 assembled from Maven Central's jars
# (tests/live/trino/lib.sh), its Iceberg connector's catalogs written from the README's Trino
# recipe (tests/live/trino/recipe.py: lake_read narrowed to `analyst`, lake_write to
# `engineer; ownership=include`), `iceberg.rest-catalog.security=OAUTH2` with client-credentials
# tokens from a real Keycloak (tests/live/keycloak/: 26.7.3 from Maven Central, its realm, clients
# and groups made through its admin REST API by realm.py), icegate's `jwt` provider verifying them
# against Keycloak's JWKS with the roles coming from the token's `groups` claim (the policy
# grants them to Keycloak's group `lake-engineers`, not to the user), and vended credentials: icegate in `s3-downscope` mode mints them at moto's STS for each table
# and scope, Trino's native S3 file system writes and reads moto's S3 with them (the catalog
# files hold no S3 keys and no AWS settings reach the processes). Upstream: the dev catalog on
# an s3:// warehouse in moto (--s3-endpoint). Policy: tests/live/trino/policy.yaml.
#
# Checked over Trino's client protocol (tests/live/trino/sql.py): CREATE SCHEMA, CREATE TABLE,
# INSERT, SELECT and the creator's DROP TABLE through lake_write; through lake_read SHOW TABLES
# filtered to the one table `analyst` may read, its SELECT, and the refused SELECT, INSERT and
# DROP TABLE with icegate's message in Trino's error; the refused INSERT left no rows; every
# catalog call of lake_read and lake_write reached icegate as `trino`; icegate minted read
# credentials for lake_read and read-write ones for lake_write. A third catalog, lake_guest, is
# lake_read with Keycloak's client `trino-guest`, whose service account is in the group
# `lake-visitors` that the policy grants nothing: the SELECT that lake_read runs is refused to
# it, decided by the token's group. Prints Trino's and Keycloak's start-up times, and writes
# the Keycloak version into docs/identity.md's `tested: keycloak` line. Exits non-zero on failure.
# Standalone: bash tests/live/trino.sh (about 2 minutes once downloaded; the first run fetches
# about 700 MB into ~/.m2).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
LIVE="$ROOT/tests/live/trino"
DEV="$ROOT/deploy/dev-catalog"
. "$E2E/lib.sh"
. "$LIVE/lib.sh"
. "$ROOT/tests/live/lib.sh"
. "$ROOT/tests/live/keycloak/lib.sh"
START=$SECONDS

"$DEV/build.sh" >&2
MOTO_VENV="$ROOT/target/e2e-moto-venv"
venv "$MOTO_VENV" "$E2E/requirements-moto.txt"
(cd "$ROOT" && cargo build --locked --quiet)
ICEGATE="$ROOT/target/debug/icegate"
"$ICEGATE" check --policy "$LIVE/policy.yaml" >/dev/null
trino_install "$ROOT"
keycloak_install "$ROOT"
AWS_BUNDLE_JAR="$(m2_jar "$AWS_BUNDLE")"
echo "trino live: installed in $((SECONDS - START)) s" >&2

start_work trino-live
trap 'exit 130' INT TERM
fail() {
  echo "trino live: $*" >&2
  if [ -f "$WORK/icegate.log" ]; then
    echo "--- icegate log" >&2; grep -av '^{' "$WORK/icegate.log" | tail -15 >&2
    echo "--- icegate audit (not allowed)" >&2; grep -a '^{' "$WORK/icegate.log" | grep -av '"decision":"allow"' | tail -15 >&2
  fi
  if [ -f "$WORK/keycloak.log" ]; then echo "--- keycloak log (errors)" >&2; grep -a "ERROR" "$WORK/keycloak.log" | tail -5 >&2 || true; fi
  if [ -f "$WORK/trino.log" ]; then echo "--- trino log (errors)" >&2; grep -a "ERROR" "$WORK/trino.log" | tail -10 >&2 || true; fi
  if [ -n "${TRINO_KEEP:-}" ]; then cp -r "$WORK" "$TRINO_KEEP"; fi
  exit 1
}

# No AWS settings of the machine reach moto, the catalog, icegate or Trino.
unset AWS_PROFILE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_WEB_IDENTITY_TOKEN_FILE AWS_ROLE_ARN
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true
BUCKET=icegate-trino
"$MOTO_VENV/bin/python" "$E2E/downscope_moto.py" "$BUCKET" >"$WORK/moto.log" 2>&1 &
PIDS+=($!)
MOTO_PID=$!

TRINO_SECRET="trino-live-$RANDOM$RANDOM"
GUEST_SECRET="trino-guest-$RANDOM$RANDOM"
KC_PORT="$(free_port)"
KC="http://127.0.0.1:$KC_PORT"
REALM=icegate
IDP="$KC/realms/$REALM"
keycloak_launch "$WORK/keycloak.log" "$KC_PORT"

# Trino starts meanwhile (it and Keycloak take the longest); its catalogs are written before,
# and it contacts them (and Keycloak) only on the first query.
mkdir -p "$WORK/trino/catalog"
wait_for "$WORK/moto.log" "moto listening on" "$MOTO_PID"
MOTO="$(grep -a 'moto listening on' "$WORK/moto.log" | grep -o 'http://127.0.0.1:[0-9]*' | head -1)"
RECORDER="$(grep -a 'moto listening on' "$WORK/moto.log" | grep -o 'http://127.0.0.1:[0-9]*' | tail -1)"
GATE_PORT="$(free_port)"
GATE="http://127.0.0.1:$GATE_PORT"
python3 "$LIVE/recipe.py" "$ROOT/README.md" "$WORK/trino/catalog" "$GATE" "$IDP/protocol/openid-connect/token" \
  "$TRINO_SECRET" "$MOTO" || fail "the README's Trino recipe could not be read"
# lake_guest: lake_read as Keycloak's client trino-guest (group lake-visitors).
grep -q "^iceberg.rest-catalog.oauth2.credential=trino:$TRINO_SECRET\$" "$WORK/trino/catalog/lake_read.properties" ||
  fail "lake_read.properties has no credential line for trino"
sed "s/^iceberg.rest-catalog.oauth2.credential=.*/iceberg.rest-catalog.oauth2.credential=trino-guest:$GUEST_SECRET/" \
  "$WORK/trino/catalog/lake_read.properties" >"$WORK/trino/catalog/lake_guest.properties"
TRINO_PORT="$(free_port)"
TRINO="http://127.0.0.1:$TRINO_PORT"
trino_launch "$WORK/trino" "$WORK/trino.log" "$TRINO_PORT"

keycloak_wait "$WORK/keycloak.log" || fail "Keycloak did not start"
echo "trino live: Keycloak $KEYCLOAK_VERSION started in $KEYCLOAK_STARTUP s" >&2
KC_ADMIN_PASSWORD="$KEYCLOAK_ADMIN_PASSWORD" python3 "$ROOT/tests/live/keycloak/realm.py" "$KC" "$REALM" \
  urn:icegate:catalog catalog "trino:$TRINO_SECRET:lake-engineers" "trino-guest:$GUEST_SECRET:lake-visitors" \
  >"$WORK/realm.log" 2>&1 || { cat "$WORK/realm.log" >&2; fail "Keycloak's realm could not be set up"; }
cat "$WORK/realm.log" >&2
DEV_CATALOG_CLASSPATH="$AWS_BUNDLE_JAR" AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \
  "$DEV/run.sh" 0 "s3://$BUCKET/wh" --s3-endpoint "$MOTO" --vend "$LIVE/vend.json" --quiet >"$WORK/catalog.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/catalog.log" "dev-catalog listening on" "${PIDS[-1]}"
CATALOG="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog.log" | head -1)"
cat >"$WORK/icegate.toml" <<EOF
listen = "127.0.0.1:$GATE_PORT"
admin_listen = "127.0.0.1:0"
policy = "$LIVE/policy.yaml"
[identity]
providers = ["jwt"]
[identity.jwt]
issuer = "$IDP"
audience = "urn:icegate:catalog"
jwks_url = "$IDP/protocol/openid-connect/certs"
user_claims = ["client_id"]
groups_claim = "groups"
[upstream]
url = "$CATALOG"
[narrowing]
ownership = "caller"
[credentials]
mode = "s3-downscope"
[credentials.sts]
role_arn = "arn:aws:iam::123456789012:role/icegate-trino"
region = "us-east-1"
endpoint = "$RECORDER"
EOF
# icegate's own AWS credentials (moto accepts any); they sign its AssumeRole calls.
AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing "$ICEGATE" serve --config "$WORK/icegate.toml" >"$WORK/icegate.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/icegate.log" "icegate listening" "${PIDS[-1]}"
trino_wait "$WORK/trino.log" || fail "Trino did not start"
echo "trino live: keycloak $KC, moto $MOTO, catalog $CATALOG, icegate $GATE, trino $TRINO" >&2

# sql CATALOG STATEMENT...: sql.py's lines (`STATEMENT => OK ...` / `=> ERR ...`).
sql() { local c="$1"; shift; python3 "$LIVE/sql.py" "$TRINO" ana "$c" "$@"; }
expect() { # expect OUTPUT STATEMENT RESULT: sql.py printed exactly `STATEMENT => RESULT`
  local got
  got="$(grep -aF -- "$2 => " <<<"$1" | head -1)"
  [ "$got" = "$2 => $3" ] || fail "expected '$2 => $3', got '${got:-nothing}'"
}
expect_refused() { # expect_refused OUTPUT STATEMENT MESSAGE: an error whose text holds icegate's MESSAGE
  local got
  got="$(grep -aF -- "$2 => " <<<"$1" | head -1)"
  case "$got" in
    "$2 => ERR "*"$3"*) ;;
    *) fail "expected '$2' to be refused with '$3', got '${got:-nothing}'" ;;
  esac
}

W="$(sql lake_write \
  "CREATE SCHEMA lake_write.sales" \
  "CREATE TABLE lake_write.sales.events (id BIGINT, event VARCHAR)" \
  "INSERT INTO lake_write.sales.events VALUES (1, 'open'), (2, 'close')" \
  "CREATE TABLE lake_write.sales.salaries (name VARCHAR, pay BIGINT)" \
  "INSERT INTO lake_write.sales.salaries VALUES ('ana', 100)" \
  "CREATE TABLE lake_write.sales.scratch (id BIGINT)" \
  "SELECT id, event FROM lake_write.sales.events ORDER BY id" \
  "DROP TABLE lake_write.sales.scratch" \
  "CALL lake_write.system.unregister_table(schema_name => 'sales', table_name => 'scratch')" \
  "SHOW TABLES FROM lake_write.sales")" || fail "lake_write's statements could not run"
echo "$W" >&2
expect "$W" "CREATE SCHEMA lake_write.sales" "OK "
expect "$W" "CREATE TABLE lake_write.sales.events (id BIGINT, event VARCHAR)" "OK "
expect "$W" "INSERT INTO lake_write.sales.events VALUES (1, 'open'), (2, 'close')" "OK 2"
expect "$W" "INSERT INTO lake_write.sales.salaries VALUES ('ana', 100)" "OK 1"
expect "$W" "SELECT id, event FROM lake_write.sales.events ORDER BY id" "OK 1,open;2,close"
# Trino's DROP TABLE always asks the catalog to purge, which icegate leaves to the catalog's
# owner (docs/security.md); the creator drops it without purging through unregister_table.
expect_refused "$W" "DROP TABLE lake_write.sales.scratch" "not authorized to purge \`sales.scratch\`"
expect "$W" "CALL lake_write.system.unregister_table(schema_name => 'sales', table_name => 'scratch')" "OK "
expect "$W" "SHOW TABLES FROM lake_write.sales" "OK events;salaries"

R="$(sql lake_read \
  "SHOW TABLES FROM lake_read.sales" \
  "SELECT id, event FROM lake_read.sales.events ORDER BY id" \
  "SELECT * FROM lake_read.sales.salaries" \
  "INSERT INTO lake_read.sales.events VALUES (3, 'refused')" \
  "DROP TABLE lake_read.sales.events" \
  "CREATE SCHEMA lake_read.staging")" || fail "lake_read's statements could not run"
echo "$R" >&2
expect "$R" "SHOW TABLES FROM lake_read.sales" "OK events"
expect "$R" "SELECT id, event FROM lake_read.sales.events ORDER BY id" "OK 1,open;2,close"
# Trino 483 asks for a view of the name first: a caller with no privilege on the name gets 403
# there already (icegate's answer does not tell whether a table of that name exists).
expect_refused "$R" "SELECT * FROM lake_read.sales.salaries" "Forbidden: not authorized to loadView \`sales.salaries\`"
expect_refused "$R" "INSERT INTO lake_read.sales.events VALUES (3, 'refused')" "Forbidden: not authorized to updateTable \`sales.events\`"
expect_refused "$R" "DROP TABLE lake_read.sales.events" "not authorized to purge \`sales.events\`"
# Trino checks the schema's existence first (a HEAD: its 403 has no body).
expect_refused "$R" "CREATE SCHEMA lake_read.staging" "Failed to check namespace 'staging' <- Forbidden: Forbidden"

# lake_guest is lake_read but for its Keycloak client, whose token says `groups:
# ["lake-visitors"]`: the policy gives that group no role, so the `analyst` its header asks for
# is not held, while the same statement through lake_read (group lake-engineers) ran above.
G="$(sql lake_guest "SELECT id, event FROM lake_guest.sales.events ORDER BY id")" ||
  fail "lake_guest's statement could not run"
echo "$G" >&2
expect_refused "$G" "SELECT id, event FROM lake_guest.sales.events ORDER BY id" \
  "user 'trino-guest' cannot assume active role(s) that are not held: analyst"

# The refused INSERT committed nothing.
A="$(sql lake_write "SELECT count(*) FROM lake_write.sales.events")"
expect "$A" "SELECT count(*) FROM lake_write.sales.events" "OK 2"

# Every catalog call reached icegate with a Keycloak token for `trino`, or for `trino-guest`,
# which was refused everything but the catalog's configuration.
if grep -a '^{' "$WORK/icegate.log" | grep -av '"user":"trino"' | grep -av '"user":"trino-guest"' | grep -q .; then
  fail "a request reached icegate without a Keycloak token for trino or trino-guest"
fi
GUEST_ALLOWED="$(grep -a '^{' "$WORK/icegate.log" | grep -a '"user":"trino-guest"' | grep -a '"decision":"allow"' |
  grep -av '"operation":"getConfig"' || true)"
[ -z "$GUEST_ALLOWED" ] || fail "trino-guest was allowed: $GUEST_ALLOWED"
grep -a '^{' "$WORK/icegate.log" | grep -a '"user":"trino-guest"' | grep -q . ||
  fail "no request of trino-guest reached icegate"
# icegate minted the credentials Trino used: read-only for lake_read (analyst), read-write for
# lake_write (the owner), each limited to its table.
curl -fsS "$RECORDER/recorded" | python3 -c '
import json, sys
calls = json.load(sys.stdin)
seen = {}
for c in calls:
    if c.get("Action") != "AssumeRole":
        continue
    policy = json.loads(c.get("Policy", "{}"))
    actions = sorted({a for s in policy.get("Statement", []) for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])})
    seen.setdefault(c.get("RoleSessionName"), []).append(actions)
print(json.dumps(seen))
if not any("s3:PutObject" not in a and "s3:GetObject" in a for a in sum(seen.values(), [])):
    sys.exit("no read-only credentials were minted")
if not any("s3:PutObject" in a for a in sum(seen.values(), [])):
    sys.exit("no read-write credentials were minted")
' >&2 || fail "icegate did not mint the expected credentials at moto's STS"
mark_tested "$ROOT/docs/identity.md" keycloak \
  "Last run by \`tests/live/trino.sh\`: Keycloak $KEYCLOAK_VERSION (\`org.keycloak:keycloak-quarkus-dist\` from Maven Central, dev mode), Trino $TRINO_VERSION."
echo "trino live: Trino $TRINO_VERSION started in ${TRINO_STARTUP:-?} s, Keycloak $KEYCLOAK_VERSION in ${KEYCLOAK_STARTUP:-?} s; done in $((SECONDS - START)) s" >&2
