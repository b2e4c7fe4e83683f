#!/usr/bin/env bash
# Spark's own S3 client through icegate's signer, live: PySpark 3.5.9 with Iceberg's Spark runtime
# and `iceberg-aws-bundle` (the AWS SDK for Java v2), both from Maven Central at one version, so
# that Iceberg's `S3FileIO` reads and writes a table's data on S3, every request signed by icegate
# (`credentials.signing.signer = "local"`, docs/signing.md "icegate as the signer"). moto checks
# every signature (tests/e2e/signing_moto.py); the dev catalog (Iceberg's own server code, no
# vending, no signing) keeps metadata on a file:// warehouse; icegate signs with the role it
# assumes at moto's STS. Then tests/live/spark_s3fileio.py: CREATE TABLE AS, INSERT, SELECT, a
# row-level DELETE, expire_snapshots deleting the files (S3FileIO's batch delete, its body
# checked and bound by icegate), and a narrowed reader's INSERT refused.
# On success the tested versions are written into docs/signing.md (its `tested: s3fileio` line).
# Exits non-zero on failure. Usage: tests/live/spark_s3fileio.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
LIVE="$ROOT/tests/live"
DEV="$ROOT/deploy/dev-catalog"
. "$LIVE/lib.sh"
# Iceberg 1.10.2 (the dev catalog's and tests/e2e/spark.sh's) has no iceberg-aws-bundle on Maven
# Central as served here; 1.10.1 has both jars.
ICEBERG_VERSION=1.10.1
START=$SECONDS
"$DEV/build.sh" >&2
RUNTIME_JAR="$(maven_artifact "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:$ICEBERG_VERSION" \
  39ea09e6c03550a300b9d9ab498949836d2d434e441da4c12a943a086e396940)"
AWS_JAR="$(maven_artifact "org.apache.iceberg:iceberg-aws-bundle:$ICEBERG_VERSION" \
  86bf20892ea5b4c17688f19b075399885f6aa5303f6b2dc9f491e76ceef9633b)"
SPARK_VENV="$(spark_venv)"
MOTO_VENV="$ROOT/target/e2e-moto-venv"
venv "$MOTO_VENV" "$E2E/requirements-moto.txt"
(cd "$ROOT" && cargo build --locked --quiet)
ICEGATE="$ROOT/target/debug/icegate"
"$ICEGATE" check --policy "$LIVE/spark-s3fileio-policy.yaml" >/dev/null
echo "spark s3fileio: installed in $((SECONDS - START)) s" >&2

start_work spark-s3fileio
trap 'exit 130' INT TERM
BUCKET=icegate-spark
T0=$SECONDS
local_signer_stack "$LIVE/spark-s3fileio-policy.yaml" "$BUCKET"
echo "spark s3fileio: moto $MOTO, catalog $CATALOG, icegate http://127.0.0.1:$PORT (up in $((SECONDS - T0)) s)" >&2

export SPARK_LOCAL_IP=127.0.0.1 SPARK_LOCAL_DIRS="$WORK/spark-local" PYSPARK_PYTHON="$SPARK_VENV/bin/python"
unset SPARK_HOME PYSPARK_SUBMIT_ARGS
PY=("$SPARK_VENV/bin/python" "$LIVE/spark_s3fileio.py" --gate "http://127.0.0.1:$PORT" --catalog "$CATALOG"
  --moto "$MOTO" --bucket "$BUCKET" --jars "$RUNTIME_JAR,$AWS_JAR" --work "$WORK"
  --icegate-log "$WORK/icegate.log" --moto-log "$WORK/moto.log")
# The timeout bounds a hung run.
ok=true
timeout --kill-after=10 400 "${PY[@]}" | tee "$WORK/checks.log" || ok=false
read -r PASSED FAILED < <(awk '/^spark s3fileio: [0-9]+ passed/ {p += $3; f += $5} END {print p + 0, f + 0}' \
  "$WORK/checks.log")
if ! $ok || [ "$FAILED" != 0 ]; then
  echo "--- icegate log (without audit records)" >&2; grep -av '^{' "$WORK/icegate.log" | tail -20 >&2
  echo "--- icegate audit (not allowed)" >&2; grep -a '^{' "$WORK/icegate.log" | grep -av '"decision":"allow"' | tail -20 >&2
  echo "--- moto log (refusals)" >&2; grep -a '" [45][0-9][0-9] ' "$WORK/moto.log" | tail -20 >&2
  echo "spark s3fileio: $PASSED passed, $((FAILED > 0 ? FAILED : 1)) failed"
  exit 1
fi
SPARK_VERSION="$("$SPARK_VENV/bin/python" -c 'import pyspark; print(pyspark.__version__)')"
MOTO_VERSION="$("$MOTO_VENV/bin/python" -c 'import moto; print(moto.__version__)')"
mark_tested "$ROOT/docs/signing.md" s3fileio \
  "Last run by \`tests/live/spark_s3fileio.sh\`: PySpark $SPARK_VERSION, Iceberg $ICEBERG_VERSION (\`iceberg-spark-runtime-3.5_2.12\` and \`iceberg-aws-bundle\` from Maven Central), moto $MOTO_VERSION."
echo "spark s3fileio: done in $((SECONDS - START)) s" >&2
echo "spark s3fileio: $PASSED passed, 0 failed"
