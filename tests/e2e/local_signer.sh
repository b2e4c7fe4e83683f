#!/usr/bin/env bash
# icegate as the signer (`credentials.signing.signer = "local"`, docs/design.md §8 "Signing without
# a catalog signer") end to end: moto with request authentication on (tests/e2e/signing_moto.py:
# S3 and STS, a user whose key icegate holds, the role `icegate-signer` it assumes), the dev
# catalog (Iceberg's own server code; it neither vends nor signs, its metadata on a file://
# warehouse) and icegate in front of it on tests/e2e/local-signer-policy.yaml, signing with the
# role's credentials (`credentials.sts.role_arn` at moto's STS). Then tests/e2e/local_signer.py:
# PyIceberg creates, writes and reads through icegate's signer, a reader's writes and requests
# outside the table get no signature, botocore-formed requests (a batch delete with its body)
# succeed on moto, and a batch delete replayed with another body is shown not to carry a
# valid signature. Exits non-zero on failure. Called by tests/e2e/run.sh; runs on its own too.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
DEV="$ROOT/deploy/dev-catalog"
. "$E2E/lib.sh"
"$DEV/build.sh" >&2
SIGN_VENV="$ROOT/target/e2e-sign-venv"
MOTO_VENV="$ROOT/target/e2e-moto-venv"
venv "$SIGN_VENV" "$E2E/requirements-sign.txt"
venv "$MOTO_VENV" "$E2E/requirements-moto.txt"
(cd "$ROOT" && cargo build --locked --quiet)
ICEGATE="$ROOT/target/debug/icegate"
"$ICEGATE" check --policy "$E2E/local-signer-policy.yaml" >/dev/null

start_work local-signer

BUCKET=icegate-local
local_signer_stack "$E2E/local-signer-policy.yaml" "$BUCKET"
echo "local signer e2e: moto $MOTO, catalog $CATALOG, icegate http://127.0.0.1:$PORT" >&2
if ! "$SIGN_VENV/bin/python" "$E2E/local_signer.py" --gate "http://127.0.0.1:$PORT" --catalog "$CATALOG" \
  --moto "$MOTO" --bucket "$BUCKET" --key-id "$KEY" --secret "$SECRET" --roles "$ROLES" --role "$ROLE"; then
  echo "--- icegate log (without audit records)" >&2; grep -av '^{' "$WORK/icegate.log" | tail -20 >&2
  echo "--- icegate audit (not allowed)" >&2; grep -a '^{' "$WORK/icegate.log" | grep -av '"decision":"allow"' | tail -20 >&2
  echo "--- moto log (refusals)" >&2; grep -a '" [45][0-9][0-9] ' "$WORK/moto.log" | tail -20 >&2
  exit 1
fi
