# Shared by the live scripts (sourced, not run): tests/e2e/lib.sh (venvs, the work directory,
# waiting, free ports) plus components from Maven Central, fetched once into Maven's local
# repository (~/.m2) and reused.
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../e2e" && pwd)/lib.sh"

# maven_artifact G:A:V[:PACKAGING[:CLASSIFIER]] SHA256: prints the artifact's path in the local
# repository, fetching it (without its dependencies, checksums checked against Central's) the
# first time; the file must have SHA256 whether fetched now or cached. A coordinate Maven Central
# does not serve fails with Maven's own error.
maven_artifact() {
  local g a v p c file
  IFS=: read -r g a v p c <<<"$1"
  p="${p:-jar}"
  file="${MAVEN_REPO:-$HOME/.m2/repository}/${g//.//}/$a/$v/$a-$v${c:+-$c}.$p"
  if [ ! -s "$file" ]; then
    command -v mvn >/dev/null || {
      echo "[live] apt-get install maven" >&2
      apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends maven >&2
    }
    echo "[live] fetching $1 from Maven Central" >&2
    local out
    out="$(mvn -B -q -C dependency:get -Dtransitive=false "-Dartifact=$g:$a:$v:$p${c:+:$c}" 2>&1)" || {
      echo "$out" | grep -a 'ERROR' | head -3 >&2
      return 1
    }
  fi
  [ -s "$file" ] || { echo "[live] $1 fetched but $file is missing" >&2; return 1; }
  local got
  got="$(sha256sum "$file" | cut -d' ' -f1)"
  [ "$got" = "$2" ] || { echo "[live] $file has SHA-256 $got, not the pinned $2" >&2; return 1; }
  echo "$file"
}

# spark_venv: PySpark 3.5 as tests/e2e/requirements-spark.txt pins it, in target/spark/venv,
# shared with tests/e2e/spark/install.sh (the same file decides whether it is up to date).
spark_venv() {
  local venv="$ROOT/target/spark/venv" reqs="$ROOT/tests/e2e/requirements-spark.txt"
  if [ ! -x "$venv/bin/python" ] || ! cmp -s "$reqs" "$venv/.requirements"; then
    echo "[live] installing PySpark into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    local pip=("$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes)
    "${pip[@]}" -r <(grep -E '^setuptools==' "$reqs") >&2
    "${pip[@]}" --no-build-isolation -r "$reqs" >&2
    cp "$reqs" "$venv/.requirements"
  fi
  echo "$venv"
}

# mark_tested FILE KEY TEXT: rewrites the line of FILE marked `<!-- tested: KEY -->` so that it
# says TEXT (a run's record of what it ran against; never written by hand).
mark_tested() {
  local file="$1" key="$2" text="$3" tmp
  grep -q "<!-- tested: $key -->" "$file" || { echo "[live] $file has no line marked 'tested: $key'" >&2; return 1; }
  tmp="$(mktemp)"
  awk -v key="<!-- tested: $key -->" -v text="$text" \
    'index($0, key) { print text " " key; next } { print }' "$file" >"$tmp"
  cat "$tmp" >"$file" && rm -f "$tmp"
}
