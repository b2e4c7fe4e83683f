#!/usr/bin/env bash
# build.sh: installs what the dev catalog needs (Debian packages; Iceberg's Spark runtime jar from
# Maven Central, pinned, through iceberg-jar.sh), compiles the server and writes .build/classpath.
# Idempotent: steps whose outputs are up to date are skipped. Usage: deploy/dev-catalog/build.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="$HERE/.build"
J=/usr/share/java
RUNTIME_JARS=("$J/slf4j-api.jar" "$J/slf4j-simple.jar" "$J/sqlite-jdbc.jar")
APT_PACKAGES=(libslf4j-java libxerial-sqlite-jdbc-java)

log() { echo "[dev-catalog build] $*" >&2; }
mkdir -p "$BUILD"
# What builds before Maven Central's jar was used left here (the wheel's jar, the relocated one).
rm -rf "$BUILD/lib" "$BUILD/relocator"

# 1. Debian packages (and a JDK if javac is missing).
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless)
if ((${#missing[@]})); then
  log "apt-get install ${missing[*]} (about a minute; its output is shown only if it fails)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  quietly() { # run a command with its output kept aside, shown only when it fails
    local out; out="$(mktemp)"
    if ! "$@" >"$out" 2>&1; then cat "$out" >&2; rm -f "$out"; return 1; fi
    rm -f "$out"
  }
  quietly $SUDO apt-get update -qq
  quietly $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# 2. The Iceberg jar (Iceberg's server-side REST code with its shaded Jackson and httpcore5),
#    from Maven Central into ~/.m2 once.
ICEBERG_JAR="$("$HERE/iceberg-jar.sh")"

# 3. The server.
DEPS_CP="$ICEBERG_JAR:$(IFS=:; echo "${RUNTIME_JARS[*]}")"
STAMP="$BUILD/classes/.stamp"
if [ ! -f "$STAMP" ] || [ -n "$(find "$HERE/src/server" -name '*.java' -newer "$STAMP")" ] ||
  [ "$(cat "$STAMP")" != "$DEPS_CP" ]; then
  log "compiling the server"
  rm -rf "$BUILD/classes"
  mkdir -p "$BUILD/classes"
  javac -nowarn -encoding UTF-8 -d "$BUILD/classes" -cp "$DEPS_CP" $(find "$HERE/src/server" -name '*.java')
  echo "$DEPS_CP" >"$STAMP"
fi
# Written aside and renamed: catalogs started at once (tests/e2e/credentials.sh) each run this
# script, and a reader must never see the file truncated by another's write.
echo "$BUILD/classes:$DEPS_CP" > "$BUILD/classpath.$$"
mv -f "$BUILD/classpath.$$" "$BUILD/classpath"
log "ready: classpath in $BUILD/classpath"
