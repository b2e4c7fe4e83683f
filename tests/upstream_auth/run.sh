#!/usr/bin/env bash
# icegate's upstream authentication end to end (docs/design.md §6, issue 29):
#  1. oauth2: oidc-provider (npm, pinned in package-lock.json, run on this machine's Node 20)
#     issues client-credentials JWTs that live TOKEN_TTL seconds; the fake catalog
#     (fake_catalog.py) accepts only those, checked by PyJWT against the provider's JWKS; icegate
#     in `oauth2` mode in front of it serves every request of a three-minute run by 8 workers across
#     the expiries, asks for about one token per lifetime, and recovers from a revoked token
#     with one retry (drive.py oauth2).
#  2. jwt identity on the same provider's JWKS with key rotation: a token of a new `kid` is
#     accepted once icegate fetches the set again, a token of the removed key is refused.
#  3. sigv4: the fake catalog verifies every request with botocore's own SigV4Auth; icegate in
#     `sigv4` mode (credentials from the environment) gets a GET, a create and a commit through,
#     bodies included; bad signatures are refused (drive.py sigv4).
#  4. egress proxies (egress.sh, issue 49): Debian's tinyproxy between icegate's side calls and the
#     identity providers, from the environment and from `[outbound] proxy`; a refusing or down
#     proxy; the proxy's credentials in no log.
# Installs into target/upstream-auth/ (npm ci from the lockfile; a pinned pip venv), and tinyproxy
# with apt-get when missing. Called by
# scripts/test.sh; runs on its own too. Exits non-zero on failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/upstream_auth"
. "$ROOT/tests/e2e/lib.sh"
OUT="$ROOT/target/upstream-auth"
SECONDS_RUN="${UPSTREAM_AUTH_SECONDS:-180}"
TOKEN_TTL=10

idp_install
venv "$OUT/venv" "$HERE/requirements.txt"
PY="$OUT/venv/bin/python"
(cd "$ROOT" && cargo build --locked --quiet)
ICEGATE="$ROOT/target/debug/icegate"
"$ICEGATE" check --policy "$HERE/policy.yaml" >/dev/null

start_work upstream-auth
unset AWS_PROFILE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_WEB_IDENTITY_TOKEN_FILE AWS_ROLE_ARN
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true
ICEGATE_SECRET="icegate-e2e-$RANDOM$RANDOM"
ETL_SECRET="etl-e2e-$RANDOM$RANDOM"
printf '%s\n' "$ICEGATE_SECRET" >"$WORK/client-secret"

# start_idp NAME PORT TTL KEYS KID
start_idp() {
  (cd "$OUT/node" && PORT="$2" TOKEN_TTL="$3" KEYS_FILE="$4" KID="$5" ICEGATE_SECRET="$ICEGATE_SECRET" \
    ETL_SECRET="$ETL_SECRET" exec node idp.mjs) >"$WORK/$1.log" 2>&1 &
  PIDS+=($!)
  wait_for "$WORK/$1.log" "idp listening" "${PIDS[-1]}"
}
# start_gate NAME CONFIG-TEXT: icegate on a free port; sets GATE and ADMIN
start_gate() {
  local port admin
  port="$(free_port)"; admin="$(free_port)"
  printf 'listen = "127.0.0.1:%s"\nadmin_listen = "127.0.0.1:%s"\npolicy = "%s"\n[owners]\nstore = "off"\n%s\n' \
    "$port" "$admin" "$HERE/policy.yaml" "$2" >"$WORK/$1.toml"
  ICEGATE_LOG=info,icegate=debug "$ICEGATE" serve --config "$WORK/$1.toml" >"$WORK/$1.log" 2>&1 &
  PIDS+=($!)
  wait_for "$WORK/$1.log" "icegate listening" "${PIDS[-1]}"
  GATE="http://127.0.0.1:$port"; ADMIN="http://127.0.0.1:$admin"
}
fail() {
  echo "upstream_auth: $*" >&2
  for log in "$WORK"/*.log; do echo "--- $log" >&2; grep -av '^{' "$log" | tail -15 >&2; done
  exit 1
}

# 1. oauth2 in front of a catalog that accepts only the provider's tokens
IDP_PORT="$(free_port)"
IDP="http://127.0.0.1:$IDP_PORT"
start_idp idp "$IDP_PORT" "$TOKEN_TTL" "$WORK/idp-keys.json" upstream-key-1
CATALOG_PORT="$(free_port)"
"$PY" "$HERE/fake_catalog.py" oauth2 "$CATALOG_PORT" "$IDP/jwks" "$IDP" urn:icegate:catalog >"$WORK/catalog.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/catalog.log" "fake catalog" "${PIDS[-1]}"
CATALOG="http://127.0.0.1:$CATALOG_PORT"
start_gate oauth2 "[upstream]
url = \"$CATALOG\"
auth = \"oauth2\"
[upstream.oauth2]
token_endpoint = \"$IDP/token\"
client_id = \"icegate\"
client_secret_file = \"$WORK/client-secret\"
scope = \"catalog\"
resource = \"urn:icegate:catalog\""
OAUTH_GATE="$GATE"
"$PY" "$HERE/drive.py" oauth2 --gate "$GATE" --catalog "$CATALOG" --idp "$IDP" --admin "$ADMIN" \
  --seconds "$SECONDS_RUN" --ttl "$TOKEN_TTL" || fail "the oauth2 run failed"
curl -fsS "$ADMIN/readyz" | grep -q '"held":true' || fail "/readyz does not say a token is held"
if grep -aqF -e "$ICEGATE_SECRET" -e "eyJ" "$WORK/oauth2.log"; then fail "a secret or a token is in icegate's log"; fi

# 2. the jwt identity provider on the JWKS of a provider whose key rotates (tokens for 300 s)
JWT_PORT="$(free_port)"
JWT_IDP="http://127.0.0.1:$JWT_PORT"
start_idp jwt-idp "$JWT_PORT" 300 "$WORK/jwt-keys-1.json" identity-key-1
start_gate jwt "[identity]
providers = [\"jwt\"]
[identity.jwt]
issuer = \"$JWT_IDP\"
audience = \"urn:icegate:catalog\"
jwks_url = \"$JWT_IDP/jwks\"
user_claims = [\"client_id\"]
jwks_refresh_cooldown_secs = 1
[upstream]
url = \"$CATALOG\"
auth = \"oauth2\"
[upstream.oauth2]
token_endpoint = \"$IDP/token\"
client_id = \"icegate\"
client_secret_file = \"$WORK/client-secret\"
scope = \"catalog\""
token() { curl -fsS -u "etl:$ETL_SECRET" -d grant_type=client_credentials -d scope=catalog "$JWT_IDP/token" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["access_token"])'; }
status() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "$GATE/v1/namespaces/db"; }
OLD="$(token)"
[ "$(status "$OLD")" = 200 ] || fail "a token of the first key is refused"
kill "${PIDS[-2]}"; wait "${PIDS[-2]}" 2>/dev/null || true
start_idp jwt-idp-2 "$JWT_PORT" 300 "$WORK/jwt-keys-2.json" identity-key-2
NEW="$(token)"
sleep 1.2  # the refetch cooldown since the last fetch
[ "$(status "$NEW")" = 200 ] || fail "a token of the new kid is refused after the key rotation"
sleep 1.2
[ "$(status "$OLD")" = 401 ] || fail "a token of the removed key is still accepted"
echo "jwt: a new kid accepted after the JWKS was fetched again, the removed key's token refused" >&2

# 3. sigv4 in front of a catalog that verifies with botocore
KEY=AKIDICEGATEE2E SECRET="aws-secret-$RANDOM$RANDOM" TOKEN="session-$RANDOM"
SIG_PORT="$(free_port)"
"$PY" "$HERE/fake_catalog.py" sigv4 "$SIG_PORT" "$KEY" "$SECRET" "$TOKEN" >"$WORK/sigv4-catalog.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/sigv4-catalog.log" "fake catalog" "${PIDS[-1]}"
SIG_CATALOG="http://127.0.0.1:$SIG_PORT"
export AWS_ACCESS_KEY_ID="$KEY" AWS_SECRET_ACCESS_KEY="$SECRET" AWS_SESSION_TOKEN="$TOKEN"
start_gate sigv4 "[upstream]
url = \"$SIG_CATALOG\"
auth = \"sigv4\"
[upstream.sigv4]
service = \"glue\"
region = \"eu-west-1\""
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
"$PY" "$HERE/drive.py" sigv4 --gate "$GATE" --catalog "$SIG_CATALOG" --key "$KEY" --secret "$SECRET" \
  --token "$TOKEN" --service glue --region eu-west-1 || fail "the sigv4 run failed"
if grep -aqF -e "$SECRET" -e "$TOKEN" "$WORK/sigv4.log"; then fail "an AWS secret is in icegate's log"; fi
. "$HERE/egress.sh"
echo "upstream_auth: all passed (oauth2 via $OAUTH_GATE for $SECONDS_RUN s)" >&2
