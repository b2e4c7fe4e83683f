#!/usr/bin/env bash
# `credentials.mode = "s3-downscope"` end to end (docs/design.md §8) against a local moto server:
# moto (S3 and STS on loopback, pinned in tests/e2e/requirements-moto.txt, its own venv
# target/e2e-moto-venv) with a recorder in front of its STS (tests/e2e/downscope_moto.py); two
# dev catalogs whose `--vend` files hand out broad upstream S3 keys (AKIA-UPSTREAM-BROAD) with
# `s3.endpoint` at moto, A on every load, B only when asked; in front of each an icegate in
# s3-downscope mode on tests/e2e/downscope-policy.yaml, assuming a role at moto's STS with its own
# credentials from the environment. Then tests/e2e/downscope.py checks the session policies
# icegate sent, the responses, and PyIceberg writing and reading tables' data on moto's S3
# through the minted credentials.
# Exits non-zero on failure. Called by tests/e2e/run.sh; runs on its own too.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
DEV="$ROOT/deploy/dev-catalog"
. "$E2E/lib.sh"
"$DEV/build.sh" >&2
VENV="$ROOT/target/e2e-venv"
MOTO_VENV="$ROOT/target/e2e-moto-venv"
venv "$VENV" "$E2E/requirements.txt"
venv "$MOTO_VENV" "$E2E/requirements-moto.txt"
(cd "$ROOT" && cargo build --locked --quiet)
ICEGATE="$ROOT/target/debug/icegate"
"$ICEGATE" check --policy "$E2E/downscope-policy.yaml" >/dev/null

start_work downscope

BUCKET=icegate-e2e
# No AWS settings of the machine reach moto, the catalogs or icegate; icegate gets its own below.
unset AWS_PROFILE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_WEB_IDENTITY_TOKEN_FILE AWS_ROLE_ARN
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true
"$MOTO_VENV/bin/python" "$E2E/downscope_moto.py" "$BUCKET" >"$WORK/moto.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/moto.log" "moto listening on" "${PIDS[-1]}"
MOTO="$(grep -a 'moto listening on' "$WORK/moto.log" | grep -o 'http://127.0.0.1:[0-9]*' | head -1)"
RECORDER="$(grep -a 'moto listening on' "$WORK/moto.log" | grep -o 'http://127.0.0.1:[0-9]*' | tail -1)"

# Two upstreams with the same broad keys (and s3.endpoint at moto) in their vend files:
#   a  `always: true`: vends on every load, so the upstream's credentials must be replaced;
#   b  `always: false`: vends only when asked; icegate removes `X-Iceberg-Access-Delegation` in
#      this mode, so b vends nothing (its allow-listed `s3.endpoint` never shows) and icegate's
#      minted credentials are all there is, as in front of a Gravitino that vends on request.
vend() { # vend ALWAYS FILE
  cat >"$2" <<EOF
{
  "always": $1,
  "config": {
    "s3.access-key-id": "AKIA-UPSTREAM-BROAD",
    "s3.secret-access-key": "upstream-broad-secret",
    "s3.session-token": "upstream-broad-session-token",
    "token": "upstream-catalog-token",
    "s3.endpoint": "$MOTO",
    "s3.path-style-access": "true",
    "client.region": "us-east-1",
    "client.refresh-credentials-endpoint": "http://upstream.invalid/v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"
  },
  "storage-credentials": [
    {"prefix": "s3://$BUCKET/",
     "config": {"s3.access-key-id": "AKIA-UPSTREAM-BUCKET", "s3.secret-access-key": "upstream-bucket-secret"}},
    {"prefix": "s3://$BUCKET/wh/{namespace}/{table}/data",
     "config": {"s3.access-key-id": "AKIA-UPSTREAM-DATA", "s3.secret-access-key": "upstream-data-secret"}},
    {"prefix": "{location}", "config": {"s3.access-key-id": "AKIA-UPSTREAM-TABLE"}}
  ]
}
EOF
}
GATES=(a b)
declare -A CATALOG_PID GATE_PID
vend true "$WORK/vend-a.json"
vend false "$WORK/vend-b.json"
for g in "${GATES[@]}"; do
  "$DEV/run.sh" 0 "$WORK/warehouse-$g" --vend "$WORK/vend-$g.json" --quiet >"$WORK/catalog-$g.log" 2>&1 &
  PIDS+=($!)
  CATALOG_PID[$g]=$!
done
ARGS=(--moto "$MOTO" --recorder "$RECORDER" --bucket "$BUCKET")
for g in "${GATES[@]}"; do
  wait_for "$WORK/catalog-$g.log" "dev-catalog listening on" "${CATALOG_PID[$g]}"
  catalog="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog-$g.log" | head -1)"
  port="$(free_port)"
  cat >"$WORK/icegate-$g.toml" <<EOF
listen = "127.0.0.1:$port"
admin_listen = "127.0.0.1:0"
policy = "$E2E/downscope-policy.yaml"

[upstream]
url = "$catalog"

[credentials]
mode = "s3-downscope"

[credentials.sts]
role_arn = "arn:aws:iam::123456789012:role/icegate-table-access-$g"
region = "us-east-1"
endpoint = "$RECORDER"
EOF
  # icegate's own AWS credentials (moto accepts any); they sign its AssumeRole calls.
  AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing "$ICEGATE" serve --config "$WORK/icegate-$g.toml" \
    >"$WORK/icegate-$g.log" 2>&1 &
  PIDS+=($!)
  GATE_PID[$g]=$!
  ARGS+=(--gate "$g=http://127.0.0.1:$port" --catalog "$g=$catalog" --warehouse "$g=$WORK/warehouse-$g"
    --log "$g=$WORK/icegate-$g.log")
  echo "downscope e2e: icegate $g http://127.0.0.1:$port in front of catalog $catalog" >&2
done
for g in "${GATES[@]}"; do wait_for "$WORK/icegate-$g.log" "icegate listening" "${GATE_PID[$g]}"; done
echo "downscope e2e: moto $MOTO (sts recorder $RECORDER)" >&2
if ! "$VENV/bin/python" "$E2E/downscope.py" "${ARGS[@]}"; then
  for g in "${GATES[@]}"; do
    echo "--- icegate $g log (without audit records)" >&2; grep -av '^{' "$WORK/icegate-$g.log" | tail -20 >&2
  done
  echo "--- moto log" >&2; tail -20 "$WORK/moto.log" >&2
  exit 1
fi
