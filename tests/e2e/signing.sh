#!/usr/bin/env bash
# Remote signing end to end against a real S3 (docs/design.md §8): moto with request authentication
# on (tests/e2e/signing_moto.py, the moto venv target/e2e-moto-venv), the test's catalog and
# signer (tests/e2e/signing_catalog.py: prefix `lk` advertises a Lakekeeper-like signer, `tr`
# serves the table-scoped route, `alpha` and `beta` are two warehouses as Lakekeeper 0.7.3 serves
# them; the sign venv target/e2e-sign-venv, pinned in tests/e2e/requirements-sign.txt), and
# icegate in front of it on tests/e2e/signing-policy.yaml. Then tests/e2e/signing.py: PyIceberg
# and botocore-formed S3 requests signed through icegate succeed on moto, the shapes icegate
# refuses never reach the signer; icegate is restarted twice in between ($WORK/restart.sh CONFIG:
# without `warehouses`, then with them), as a rolling restart meets a long-running job. Also checks that
# tests/data/s3-urls.json is what the pinned botocore forms (tests/e2e/s3_urls.py --check).
# Exits non-zero on failure. Called by tests/e2e/run.sh; runs on its own too.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
. "$E2E/lib.sh"
SIGN_VENV="$ROOT/target/e2e-sign-venv"
MOTO_VENV="$ROOT/target/e2e-moto-venv"
venv "$SIGN_VENV" "$E2E/requirements-sign.txt"
venv "$MOTO_VENV" "$E2E/requirements-moto.txt"
(cd "$ROOT" && cargo build --locked --quiet)
ICEGATE="$ROOT/target/debug/icegate"
"$ICEGATE" check --policy "$E2E/signing-policy.yaml" >/dev/null
"$MOTO_VENV/bin/python" "$E2E/s3_urls.py" --check "$ROOT/tests/data/s3-urls.json"

start_work signing

BUCKET=icegate-sign
# No AWS settings of the machine reach moto, the catalog, the clients or icegate.
unset AWS_PROFILE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_WEB_IDENTITY_TOKEN_FILE AWS_ROLE_ARN
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true
"$MOTO_VENV/bin/python" "$E2E/signing_moto.py" "$BUCKET" >"$WORK/moto.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/moto.log" "moto listening on" "${PIDS[-1]}"
read -r MOTO KEY SECRET < <(grep -a 'moto listening on' "$WORK/moto.log" | awk '{print $4, $6, $8}')

"$SIGN_VENV/bin/python" "$E2E/signing_catalog.py" --moto "$MOTO" --bucket "$BUCKET" --key-id "$KEY" \
  --secret "$SECRET" >"$WORK/catalog.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/catalog.log" "signing catalog listening on" "${PIDS[-1]}"
CATALOG="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog.log" | head -1)"

PORT="$(free_port)"
# the clients' configuration names no signer: icegate's answers must offer all of it
for variant in plain warehouses; do
  cat >"$WORK/icegate-$variant.toml" <<EOF
listen = "127.0.0.1:$PORT"
admin_listen = "127.0.0.1:0"
policy = "$E2E/signing-policy.yaml"

[upstream]
url = "$CATALOG"
EOF
done
# the key that carries each Lakekeeper warehouse's getConfig query (docs/signing.md)
echo 'warehouses = ["alpha", "beta"]' >>"$WORK/icegate-warehouses.toml"

# icegate runs in the background under $WORK/icegate.pid; restart.sh CONFIG stops it (SIGTERM,
# until its port is free) and starts it again with CONFIG: a fresh process that has seen no
# client's getConfig.
cat >"$WORK/restart.sh" <<EOF
#!/usr/bin/env bash
set -euo pipefail
kill "\$(cat "$WORK/icegate.pid" 2>/dev/null)" 2>/dev/null || true
for _ in \$(seq 200); do
  python3 -c 'import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(("127.0.0.1", $PORT)) == 0)' && break
  sleep 0.1
done
n=\$(ls "$WORK" | grep -c '^icegate-run' || true)
"$ICEGATE" serve --config "\$1" >"$WORK/icegate-run\$n.log" 2>&1 &
echo \$! >"$WORK/icegate.pid"
for _ in \$(seq 600); do grep -aqs "icegate listening" "$WORK/icegate-run\$n.log" && exit 0; sleep 0.1; done
echo "icegate did not start again" >&2; cat "$WORK/icegate-run\$n.log" >&2; exit 1
EOF
chmod +x "$WORK/restart.sh"
trap 'kill "$(cat "$WORK/icegate.pid" 2>/dev/null)" 2>/dev/null || true; cleanup' EXIT
"$WORK/restart.sh" "$WORK/icegate-plain.toml"
echo "signing e2e: moto $MOTO, catalog $CATALOG, icegate http://127.0.0.1:$PORT" >&2
if ! "$SIGN_VENV/bin/python" "$E2E/signing.py" --gate "http://127.0.0.1:$PORT" --catalog "$CATALOG" \
  --moto "$MOTO" --bucket "$BUCKET" --restart "$WORK/restart.sh" \
  --configs "$WORK/icegate-plain.toml" "$WORK/icegate-warehouses.toml"; then
  echo "--- icegate logs (without audit records)" >&2; grep -av '^{' "$WORK"/icegate-run*.log | tail -20 >&2
  echo "--- catalog log" >&2; tail -20 "$WORK/catalog.log" >&2
  echo "--- moto log (refusals)" >&2; grep -a '" [45][0-9][0-9] ' "$WORK/moto.log" | tail -20 >&2
  exit 1
fi
