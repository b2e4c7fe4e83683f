#!/usr/bin/env bash
# build.sh: installs what the dev catalog needs (Debian packages, the pinned Iceberg wheel),
# relocates Debian's Jackson and httpcore5 into the package names the Iceberg jar expects,
# compiles the server and writes .build/classpath. Idempotent: steps whose outputs are up to
# date are skipped. Usage: deploy/dev-catalog/build.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="$HERE/.build"
LIB="$BUILD/lib"
ICEBERG_JAR_NAME="iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
ICEBERG_JAR="$LIB/$ICEBERG_JAR_NAME"
SHADED_JAR="$LIB/iceberg-shaded-deps.jar"
J=/usr/share/java
DEBIAN_JARS=(
  "$J/jackson-annotations.jar" "$J/jackson-core.jar" "$J/jackson-databind.jar" "$J/httpcore5.jar"
)
RUNTIME_JARS=("$J/slf4j-api.jar" "$J/slf4j-simple.jar" "$J/sqlite-jdbc.jar")
APT_PACKAGES=(
  libjackson2-core-java libjackson2-databind-java libjackson2-annotations-java
  libhttpcore5-java libasm-java libslf4j-java libxerial-sqlite-jdbc-java
)

log() { echo "[dev-catalog build] $*" >&2; }
mkdir -p "$LIB"

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

# 2. The Iceberg jar, from the pinned (hash-checked) wheel; downloaded, not installed.
if [ ! -s "$ICEBERG_JAR" ]; then
  log "downloading snowpark-connect-deps-iceberg (Iceberg $ICEBERG_JAR_NAME)"
  python3 -m pip download --quiet --no-deps --require-hashes -r "$HERE/requirements-build.txt" -d "$BUILD/pip" >&2
  python3 - "$BUILD/pip" "$ICEBERG_JAR" "$ICEBERG_JAR_NAME" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/snowpark_connect_deps_iceberg-1.0.3-*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open("snowpark_connect_deps_iceberg/jars/" + sys.argv[3]) as src:
    with open(sys.argv[2] + ".tmp", "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
  mv "$ICEBERG_JAR.tmp" "$ICEBERG_JAR"
  rm -rf "$BUILD/pip"
fi

# 3. The relocator, then the shaded libraries the Iceberg jar references but does not contain.
ASM_CP="$J/asm.jar:$J/asm-commons.jar"
if [ ! -f "$BUILD/relocator/Relocate.class" ] || [ "$HERE/src/relocator/Relocate.java" -nt "$BUILD/relocator/Relocate.class" ]; then
  log "compiling the relocator"
  mkdir -p "$BUILD/relocator"
  javac -nowarn -d "$BUILD/relocator" -cp "$ASM_CP" "$HERE/src/relocator/Relocate.java"
fi
if [ ! -s "$SHADED_JAR" ] || [ "$BUILD/relocator/Relocate.class" -nt "$SHADED_JAR" ]; then
  log "relocating Jackson and httpcore5 into org.apache.iceberg.shaded.*"
  java -cp "$BUILD/relocator:$ASM_CP" Relocate "$SHADED_JAR.tmp" \
    com/fasterxml/jackson/=org/apache/iceberg/shaded/com/fasterxml/jackson/ \
    org/apache/hc/=org/apache/iceberg/shaded/org/apache/hc/ \
    -- "${DEBIAN_JARS[@]}" >&2
  mv "$SHADED_JAR.tmp" "$SHADED_JAR"
fi

# 4. The server.
DEPS_CP="$ICEBERG_JAR:$SHADED_JAR:$(IFS=:; echo "${RUNTIME_JARS[*]}")"
STAMP="$BUILD/classes/.stamp"
if [ ! -f "$STAMP" ] || [ -n "$(find "$HERE/src/server" -name '*.java' -newer "$STAMP")" ]; then
  log "compiling the server"
  rm -rf "$BUILD/classes"
  mkdir -p "$BUILD/classes"
  javac -nowarn -encoding UTF-8 -d "$BUILD/classes" -cp "$DEPS_CP" $(find "$HERE/src/server" -name '*.java')
  touch "$STAMP"
fi
# Written aside and renamed: catalogs started at once (tests/e2e/credentials.sh) each run this
# script, and a reader must never see the file truncated by another's write.
echo "$BUILD/classes:$DEPS_CP" > "$BUILD/classpath.$$"
mv -f "$BUILD/classpath.$$" "$BUILD/classpath"
log "ready: classpath in $BUILD/classpath"
