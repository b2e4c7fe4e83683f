# Keycloak for the live tests (sourced, not run; needs tests/live/lib.sh first).
# keycloak_install ROOT: Keycloak $KEYCLOAK_VERSION's distribution (keycloak-quarkus-dist, a zip
# from Maven Central, SHA-256 pinned) fetched once into ~/.m2 and unpacked once into
# target/keycloak/$KEYCLOAK_VERSION (sets KEYCLOAK_HOME); its first start also writes Quarkus's
# build there (about 50 s), which later starts reuse.
# keycloak_launch LOG PORT: starts it in dev mode on 127.0.0.1:PORT with an in-memory database
# (nothing outlives the run), a small heap and a random bootstrap admin password
# (KEYCLOAK_ADMIN_PASSWORD), in the background (KEYCLOAK_PID, added to PIDS);
# keycloak_wait LOG waits until it listens (5 minutes at most) and sets KEYCLOAK_STARTUP
# (seconds since launch).
KEYCLOAK_VERSION=26.7.3
KEYCLOAK_SHA256=27a6535553c3cdcd083872ba40629efafb3475e3b758e0c6f691395561dd0f1f
# Keycloak 26 needs Java 21 or later; the machines have Temurin 25 beside the system's Java 17.
KEYCLOAK_JAVA_HOME="${KEYCLOAK_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
KEYCLOAK_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

keycloak_install() { # keycloak_install ROOT
  local root="$1" zip
  KEYCLOAK_HOME="$root/target/keycloak/keycloak-$KEYCLOAK_VERSION"
  if [ ! -x "$KEYCLOAK_JAVA_HOME/bin/java" ]; then
    echo "keycloak: no Java 21+ at $KEYCLOAK_JAVA_HOME (set KEYCLOAK_JAVA_HOME)" >&2
    return 1
  fi
  if [ ! -x "$KEYCLOAK_HOME/bin/kc.sh" ]; then
    zip="$(maven_artifact "org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION:zip" "$KEYCLOAK_SHA256")" || return 1
    command -v unzip >/dev/null || {
      echo "[live] apt-get install unzip" >&2
      apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends unzip >&2
    }
    rm -rf "$root/target/keycloak/unpack"
    mkdir -p "$root/target/keycloak/unpack"
    (cd "$root/target/keycloak/unpack" && unzip -q "$zip")
    rm -rf "$KEYCLOAK_HOME"
    mv "$root/target/keycloak/unpack/keycloak-$KEYCLOAK_VERSION" "$KEYCLOAK_HOME"
    rm -rf "$root/target/keycloak/unpack"
  fi
}

keycloak_launch() { # keycloak_launch LOG PORT
  local log="$1" port="$2"
  KEYCLOAK_ADMIN_PASSWORD="kc-$RANDOM$RANDOM$RANDOM"
  KEYCLOAK_T0=$SECONDS
  # kc.sh passes TERM on to the JVM and waits for it, so stopping KEYCLOAK_PID stops the server.
  JAVA_HOME="$KEYCLOAK_JAVA_HOME" JAVA_OPTS_KC_HEAP="-Xms64m -Xmx512m" \
    KC_BOOTSTRAP_ADMIN_USERNAME=admin KC_BOOTSTRAP_ADMIN_PASSWORD="$KEYCLOAK_ADMIN_PASSWORD" \
    "$KEYCLOAK_HOME/bin/kc.sh" start-dev --db=dev-mem --http-host=127.0.0.1 --http-port="$port" \
    --http-management-port="$(free_port)" >"$log" 2>&1 &
  KEYCLOAK_PID=$!
  PIDS+=("$KEYCLOAK_PID")
}

keycloak_wait() { # keycloak_wait LOG: until the server says it started (5 minutes at most)
  wait_for "$1" "Listening on: http" "$KEYCLOAK_PID" 300 && KEYCLOAK_STARTUP=$((SECONDS - KEYCLOAK_T0))
}
