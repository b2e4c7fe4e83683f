#!/usr/bin/env bash
# iceberg-jar.sh: prints the path of Iceberg's Spark runtime jar in Maven's local repository
# (~/.m2), fetching it from Maven Central with `mvn dependency:get` the first time (Debian's
# `maven` is installed when mvn is missing). The jar must have the pinned SHA-256 whether fetched
# now or cached. The dev catalog (build.sh) and the Spark tests (tests/e2e/spark/install.sh) use
# this one jar: Iceberg's server-side REST code and its shaded Jackson and httpclient5/httpcore5.
# Usage: deploy/dev-catalog/iceberg-jar.sh
set -euo pipefail
GROUP=org.apache.iceberg
ARTIFACT=iceberg-spark-runtime-3.5_2.12
VERSION=1.10.2
SHA256=c562d482dcd16b666e808b755469fbc4b2604284b41622c9d87e2c02b7cc6c5f

log() { echo "[iceberg jar] $*" >&2; }
JAR="${MAVEN_REPO:-$HOME/.m2/repository}/${GROUP//.//}/$ARTIFACT/$VERSION/$ARTIFACT-$VERSION.jar"
if [ ! -s "$JAR" ]; then
  if ! command -v mvn >/dev/null; then
    log "apt-get install maven (its output is shown only if it fails)"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    out="$(mktemp)"
    if ! { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends maven; } >"$out" 2>&1; then
      cat "$out" >&2; rm -f "$out"; exit 1
    fi
    rm -f "$out"
  fi
  log "fetching $GROUP:$ARTIFACT:$VERSION from Maven Central (about 47 MB)"
  if ! out="$(mvn -B -q -C dependency:get -Dtransitive=false "-Dartifact=$GROUP:$ARTIFACT:$VERSION" 2>&1)"; then
    echo "$out" | grep -a ERROR | head -5 >&2
    exit 1
  fi
fi
[ -s "$JAR" ] || { log "fetched, but $JAR is missing (is Maven's local repository elsewhere? set MAVEN_REPO)"; exit 1; }
got="$(sha256sum "$JAR" | cut -d' ' -f1)"
[ "$got" = "$SHA256" ] || { log "$JAR has SHA-256 $got, not the pinned $SHA256"; exit 1; }
echo "$JAR"
