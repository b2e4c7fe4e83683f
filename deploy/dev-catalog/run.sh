#!/usr/bin/env bash
# run.sh PORT [WAREHOUSE_DIR] [extra flags: --prefix NAME, --jdbc FILE.db, --vend FILE.json,
#        --s3-endpoint URL,
#        --host ADDR, --quiet]
# Builds if needed, then runs the dev Iceberg REST catalog in the foreground on 127.0.0.1:PORT.
# It prints "dev-catalog listening on http://127.0.0.1:PORT ..." once it accepts requests.
# Without WAREHOUSE_DIR a fresh temporary directory is used. PORT 0 picks a free port.
# --s3-endpoint URL (with WAREHOUSE_DIR an s3://BUCKET/PATH) needs the AWS SDK v2 on the class
# path: env DEV_CATALOG_CLASSPATH (e.g. Maven Central's iceberg-aws-bundle jar) is appended.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -lt 1 ]; then
  echo "usage: $0 PORT [WAREHOUSE_DIR] [--prefix NAME] [--jdbc FILE.db] [--vend FILE.json] [--s3-endpoint URL] [--quiet]" >&2
  exit 2
fi
PORT="$1"; shift
if [ $# -ge 1 ] && [ "${1#--}" = "$1" ]; then
  WAREHOUSE="$1"; shift
else
  WAREHOUSE="$(mktemp -d "${TMPDIR:-/tmp}/dev-catalog-warehouse.XXXXXX")"
fi
"$HERE/build.sh"
exec java -Xss1m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dsun.net.httpserver.nodelay=true \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp "$(cat "$HERE/.build/classpath")${DEV_CATALOG_CLASSPATH:+:$DEV_CATALOG_CLASSPATH}" \
  org.apache.iceberg.rest.DevCatalog --host 127.0.0.1 --port "$PORT" --warehouse "$WAREHOUSE" "$@"
