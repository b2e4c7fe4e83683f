#!/usr/bin/env bash
# install.sh: everything Spark needs for tests/e2e/spark.sh, pinned and cached in target/spark/
# (git-ignored), so a second run does nothing. Prints the value for `spark.jars` on stdout.
#
# 1. target/spark/venv: PySpark 3.5 and the Iceberg 1.10.2 Spark runtime wheel, exactly as
#    tests/e2e/requirements-spark.txt pins them (hashes, no dependency resolution, no unpinned
#    build tools).
# 2. target/spark/debs: httpclient5 and httpcore5 from Debian `sid`, as tests/e2e/spark/debian.lock
#    pins them (name, version, SHA-256), fetched with `apt-get download` against a private
#    sources list and private lists in target/spark/apt: the system's apt is left alone.
# 3. target/spark/lib/iceberg-spark-shaded-deps.jar: the runtime jar references
#    org.apache.iceberg.shaded.{com.fasterxml.jackson,org.apache.hc}.* but its copies were
#    stripped; deploy/dev-catalog's relocator rewrites those Debian jars and PySpark's own
#    Jackson 2.15.2 into those names.
# Usage: tests/e2e/spark/install.sh   (deploy/dev-catalog/build.sh is run first if needed)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
DEV="$ROOT/deploy/dev-catalog"
CACHE="$ROOT/target/spark"
VENV="$CACHE/venv"
REQS="$ROOT/tests/e2e/requirements-spark.txt"
LOCK="$HERE/debian.lock"
RUNTIME_JAR_NAME="iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
JACKSON_VERSION="2.15.2" # PySpark 3.5's jars/; checked below
SHADED_JAR="$CACHE/lib/iceberg-spark-shaded-deps.jar"
J=/usr/share/java

log() { echo "[spark install] $*" >&2; }
die() { echo "[spark install] error: $*" >&2; exit 1; }
mkdir -p "$CACHE/lib" "$CACHE/debs"

# 0. The relocator (and its ASM) come with the dev catalog's build.
RELOCATOR="$DEV/.build/relocator"
ASM_CP="$J/asm.jar:$J/asm-commons.jar"
if [ ! -f "$RELOCATOR/Relocate.class" ] || [ ! -f "$J/asm-commons.jar" ]; then
  "$DEV/build.sh" >&2
fi

# 1. The venv. setuptools first (pyspark is an sdist, built without build isolation so that no
#    unpinned build dependency is fetched), then everything else.
if [ ! -x "$VENV/bin/python" ] || ! cmp -s "$REQS" "$VENV/.requirements"; then
  log "installing $(grep -Eo '^[a-z0-9-]+==[^ ]+' "$REQS" | tr '\n' ' ')into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  PIP=("$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes)
  "${PIP[@]}" -r <(grep -E '^setuptools==' "$REQS") >&2
  "${PIP[@]}" --no-build-isolation -r "$REQS" >&2
  cp "$REQS" "$VENV/.requirements"
fi
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
PYSPARK_JARS="$SITE/pyspark/jars"
RUNTIME_JAR="$SITE/snowpark_connect_deps_iceberg/jars/$RUNTIME_JAR_NAME"
[ -s "$RUNTIME_JAR" ] || die "$RUNTIME_JAR is missing"

# 2. The Debian packages, checked against the lock (name, version, SHA-256) whether fetched now
#    or cached.
deb_ok() { # deb_ok FILE PACKAGE VERSION SHA256
  [ -s "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$4" ] &&
    [ "$(dpkg-deb -f "$1" Package)" = "$2" ] && [ "$(dpkg-deb -f "$1" Version)" = "$3" ]
}
LOCKED=() # "package version sha256 jars"
while read -r pkg ver sha jars; do
  [ -z "$pkg" ] || [ "${pkg#\#}" != "$pkg" ] || LOCKED+=("$pkg $ver $sha $jars")
done <"$LOCK"
((${#LOCKED[@]})) || die "no packages in $LOCK"
deb_file() { echo "$CACHE/debs/${1}_${2//:/%3a}_all.deb"; }
fetch=()
for entry in "${LOCKED[@]}"; do
  read -r pkg ver sha _ <<<"$entry"
  deb_ok "$(deb_file "$pkg" "$ver")" "$pkg" "$ver" "$sha" || fetch+=("$pkg=$ver")
done
if ((${#fetch[@]})); then
  APT="$CACHE/apt"
  mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/sources.list.d" "$APT/preferences.d" \
    "$APT/download"
  : >"$APT/preferences"
  KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
  [ -f "$KEYRING" ] || die "$KEYRING is missing (Debian's debian-archive-keyring package)"
  cat >"$APT/sources.list" <<EOF
deb [signed-by=$KEYRING] http://deb.debian.org/debian sid main
deb [signed-by=$KEYRING] http://deb.debian.org/debian forky main
EOF
  APT_OPTS=(
    -o "Dir::Etc::SourceList=$APT/sources.list" -o "Dir::Etc::SourceParts=$APT/sources.list.d"
    -o "Dir::Etc::Preferences=$APT/preferences" -o "Dir::Etc::PreferencesParts=$APT/preferences.d"
    -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache" -o Debug::NoLocking=1
    -o APT::Sandbox::User=root -o Acquire::Languages=none
    -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::CNF::DefaultEnabled=false
  )
  log "apt-get download ${fetch[*]} (Debian sid/forky, private lists in $APT)"
  apt-get "${APT_OPTS[@]}" -qq update >&2
  rm -f "$APT/download/"*.deb
  (cd "$APT/download" && apt-get "${APT_OPTS[@]}" -qq download "${fetch[@]}" >&2) ||
    die "apt-get download ${fetch[*]} failed: if Debian dropped these versions, update $LOCK"
  for entry in "${LOCKED[@]}"; do
    read -r pkg ver sha _ <<<"$entry"
    file="$(deb_file "$pkg" "$ver")"
    deb_ok "$file" "$pkg" "$ver" "$sha" && continue
    got="$APT/download/$(basename "$file")"
    deb_ok "$got" "$pkg" "$ver" "$sha" ||
      die "$got is not $pkg $ver with SHA-256 $sha (got $(sha256sum "$got" 2>/dev/null | cut -d' ' -f1))"
    mv "$got" "$file"
  done
  rm -rf "$APT" # the lists (about 40 MB) are needed again only for a new pin
fi

# 3. The shaded libraries: rebuilt when an input (or the relocator) changes.
INPUTS=()
for entry in "${LOCKED[@]}"; do
  read -r pkg ver sha jars <<<"$entry"
  root="$CACHE/debs/$pkg-$ver"
  if [ ! -d "$root" ]; then
    dpkg-deb -x "$(deb_file "$pkg" "$ver")" "$root.tmp"
    mv "$root.tmp" "$root"
  fi
  IFS=, read -r -a names <<<"$jars"
  for n in "${names[@]}"; do
    [ -s "$root/usr/share/java/$n" ] || die "$pkg $ver has no usr/share/java/$n"
    INPUTS+=("$root/usr/share/java/$n")
  done
done
for n in annotations core databind datatype-jsr310; do
  jar="$PYSPARK_JARS/jackson-$n-$JACKSON_VERSION.jar"
  [ -s "$jar" ] || die "$jar is missing (PySpark's Jackson is not $JACKSON_VERSION?)"
  INPUTS+=("$jar")
done
STAMP="$SHADED_JAR.inputs"
want="$(sha256sum "$RELOCATOR/Relocate.class" "${INPUTS[@]}")"
if [ ! -s "$SHADED_JAR" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  log "relocating httpclient5, httpcore5 and Jackson $JACKSON_VERSION into org.apache.iceberg.shaded.*"
  java -cp "$RELOCATOR:$ASM_CP" Relocate "$SHADED_JAR.tmp" \
    com/fasterxml/jackson/=org/apache/iceberg/shaded/com/fasterxml/jackson/ \
    org/apache/hc/=org/apache/iceberg/shaded/org/apache/hc/ \
    -- "${INPUTS[@]}" >&2
  mv "$SHADED_JAR.tmp" "$SHADED_JAR"
  echo "$want" >"$STAMP"
fi
echo "$RUNTIME_JAR,$SHADED_JAR"
