#!/usr/bin/env bash
# Builds icegate's container image, and the dev catalog's, with podman and no registry
# (docs/deploy.md "Building the image without Docker"). `bash scripts/image.sh --help` says more.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

usage() {
  cat <<'HELP'
usage: bash scripts/image.sh [all | icegate | dev-catalog | postgres | --help]

Builds, from this checkout, the images the sidecar manifests (deploy/kubernetes/sidecar) run:
  localhost/icegate:VERSION              the release binary, the libraries `ldd` names, CA
                                         certificates, /etc/passwd and /etc/group with the user
                                         65532, and nothing else; the configuration of
                                         deploy/Dockerfile's runtime stage (user, ports,
                                         entrypoint, command, environment, volume, labels)
  localhost/icegate-dev-catalog:VERSION  deploy/dev-catalog (Iceberg's own REST server code) on a
                                         Java runtime that jlink cuts from Debian's JDK 17
and, only when asked for by name (`all` leaves it out), a test-only image for
tests/pod/gateway.sh, which runs the gateway manifests (deploy/kubernetes/gateway):
  localhost/icegate-test-postgres:15     Debian's PostgreSQL 15 server (initdb and postgres, the
                                         modules the server core loads, the libraries `ldd`
                                         names, dash for initdb and the entrypoint
                                         tests/pod/gateway/postgres-entrypoint.sh); user 999
VERSION is Cargo.toml's. Each root filesystem is packed with fixed timestamps and owners, so
the same inputs give the same layer (its digest is printed).

When missing it installs, as root or with sudo: podman and runc (Debian; postgresql-15 too for
the PostgreSQL image), and writes the settings these machines need into
/etc/containers/containers.conf (runc, cgroupfs, ulimits within the allowed ones;
docs/design.md §13). It never changes a containers.conf it did not write: it says which
settings to add instead. Running it again rebuilds only what changed.
HELP
}

what="${1:-all}"
case "$what" in
  -h | --help) usage; exit 0 ;;
  all | icegate | dev-catalog | postgres) ;;
  *) echo "unknown argument \`$what\`" >&2; usage >&2; exit 2 ;;
esac

VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
OUT="$ROOT/target/image"
# Timestamps inside the images: the last commit's, so a rebuild of the same commit is the same.
EPOCH="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
log() { echo "[image] $*" >&2; }
quietly() { # a command's output, shown only when it fails
  local out; out="$(mktemp)"
  if ! "$@" >"$out" 2>&1; then cat "$out" >&2; rm -f "$out"; return 1; fi
  rm -f "$out"
}

# The image's configuration, as `podman import --change` takes it (one port, one label, one
# variable a line). tests/integration/deploy reads this list and compares it with
# deploy/Dockerfile's runtime stage: change both together.
ICEGATE_CONFIG=(
  'USER 65532:65532'
  'ENV XDG_STATE_HOME=/var/lib'
  'VOLUME /var/lib/icegate'
  'EXPOSE 8181'
  'EXPOSE 9181'
  'LABEL org.opencontainers.image.title="icegate"'
  'LABEL org.opencontainers.image.version="0.1.0"'
  'LABEL org.opencontainers.image.licenses="Apache-2.0"'
  'LABEL org.opencontainers.image.description="An authorizing reverse proxy for Apache Iceberg REST catalogs"'
  'ENTRYPOINT ["/usr/local/bin/icegate"]'
  'CMD ["serve", "--config", "/etc/icegate/config/icegate.toml"]'
)
# The user's entries, as distroless `nonroot` has them (the Dockerfile's base).
PASSWD='root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin'
GROUP='root:x:0:
nonroot:x:65532:'

# The dev catalog: the modules its classpath uses (a missing one shows as NoClassDefFoundError
# at start-up or on the first request of a kind: tests/pod/run.sh exercises them all).
JAVA_MODULES=java.base,java.logging,java.management,java.naming,java.sql,java.xml,jdk.httpserver,jdk.unsupported
CATALOG_CONFIG=(
  'USER 1000:1000'
  'ENV CATALOG_REST_PORT=8181'
  'ENV CATALOG_WAREHOUSE=file:///tmp/warehouse'
  'EXPOSE 8181'
  'LABEL org.opencontainers.image.title="icegate-dev-catalog"'
  'LABEL org.opencontainers.image.description="Apache Iceberg 1.10.2 REST catalog handlers on the JDK HTTP server, for trying icegate"'
  'ENTRYPOINT ["/opt/java/bin/java", "-Xss1m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-Dsun.net.httpserver.nodelay=true", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", "/opt/dev-catalog/classes:/opt/dev-catalog/lib/*", "org.apache.iceberg.rest.DevCatalog", "--host", "0.0.0.0"]'
)

# The test-only PostgreSQL (tests/pod/gateway.sh): Debian's server, the major version bookworm has.
PG_MAJOR=15
PG_CONFIG=(
  'USER 999:999'
  'ENV PGDATA=/var/lib/postgresql/data/pgdata'
  'ENV TZ=UTC'
  'VOLUME /var/lib/postgresql/data'
  'EXPOSE 5432'
  'LABEL org.opencontainers.image.title="icegate-test-postgres"'
  'LABEL org.opencontainers.image.description="Debian'"'"'s PostgreSQL server for icegate'"'"'s pod tests (tests/pod/gateway.sh), not for production"'
  'ENTRYPOINT ["/bin/sh", "/usr/local/bin/postgres-entrypoint"]'
)

# --- podman, runc and containers.conf ---------------------------------------------------------

ensure_podman() {
  local missing=() p
  for p in podman runc catatonit ca-certificates; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "apt-get install ${missing[*]} (its output is shown only if it fails)"
    quietly $SUDO apt-get update -qq
    quietly $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  containers_conf
}

# Checks /etc/containers/containers.conf holds the three settings; writes the file when it is
# missing or is the one this script wrote; leaves any other file alone and names what to add.
containers_conf() {
  local conf=/etc/containers/containers.conf marker="# Written by icegate's scripts/image.sh"
  local state
  state="$(python3 - "$conf" <<'PY'
import sys, tomllib
try:
    with open(sys.argv[1], "rb") as f:
        c = tomllib.load(f)
except FileNotFoundError:
    print("missing"); sys.exit()
except tomllib.TOMLDecodeError:
    print("differs"); sys.exit()
ok = (c.get("engine", {}).get("runtime") == "runc"
      and c.get("engine", {}).get("cgroup_manager") == "cgroupfs"
      and c.get("containers", {}).get("default_ulimits") == ["nofile=1024:1024", "nproc=1024:1024"])
print("set" if ok else "differs")
PY
)"
  if [ "$state" = set ]; then
    log "$conf already has runtime = runc, cgroup_manager = cgroupfs and the default ulimits"
    return
  fi
  if [ "$state" = differs ] && ! head -1 "$conf" | grep -qF "$marker"; then
    log "$conf exists and was not written by this script; add these settings to it, then run again:"
    log '  [containers] default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]'
    log '  [engine] runtime = "runc" and cgroup_manager = "cgroupfs"'
    exit 1
  fi
  log "writing $conf: runtime = runc, cgroup_manager = cgroupfs, default ulimits (docs/design.md §13)"
  $SUDO mkdir -p /etc/containers
  $SUDO tee "$conf.tmp" >/dev/null <<EOF
$marker (docs/deploy.md): these machines mount cgroup v1 in hybrid
# mode, which crun refuses, and do not permit raising resource limits.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
EOF
  $SUDO mv "$conf.tmp" "$conf"
}

# --- shared steps -----------------------------------------------------------------------------

# copy_libs STAGING FILE...: the shared libraries `ldd` names for each FILE, and the dynamic
# loader, at the paths ldd prints (symlinks resolved).
copy_libs() {
  local staging="$1" lib; shift
  # `NAME => PATH (ADDR)` lines, and the loader's `PATH (ADDR)`; not the `FILE:` headers ldd
  # prints when given several files
  for lib in $(ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && NF == 2 {print $1}' | sort -u); do
    case "$lib" in "$staging"/*) continue ;; esac
    install -D -m 0755 "$(readlink -f "$lib")" "$staging$lib"
  done
}

# import NAME TAR CONFIG...: imports the root filesystem TAR as NAME with CONFIG (Dockerfile
# instructions), unless NAME is still the image imported last time from the same layer and
# configuration (remembered beside TAR).
import() {
  local name="$1" tar="$2"; shift 2
  local changes=() c stamp id
  for c in "$@"; do changes+=(--change "$c"); done
  stamp="$(sha256sum "$tar" | cut -c1-64) $(printf '%s\n' "$@" | sha256sum | cut -c1-64)"
  id="$(podman image inspect --format '{{.Id}}' "$name" 2>/dev/null || true)"
  if [ -n "$id" ] && [ "$(cat "$tar.imported" 2>/dev/null)" = "$stamp $id" ]; then
    log "$name is up to date (layer sha256:${stamp%% *})"
    return
  fi
  id="$(podman import --quiet "${changes[@]}" "$tar" "$name")"
  echo "$stamp ${id#sha256:}" >"$tar.imported"
  log "$name: layer sha256:${stamp%% *}, $(du -m "$tar" | cut -f1) MB uncompressed"
}

# --- icegate ----------------------------------------------------------------------------------

build_icegate() {
  local started=$SECONDS staging="$OUT/icegate/rootfs" bin="$ROOT/target/release/icegate"
  log "cargo build --release --locked (fat LTO: minutes from a clean target)"
  cargo build --release --locked --quiet --bin icegate
  log "release build took $((SECONDS - started)) s"
  rm -rf "$staging"
  install -D -m 0755 "$bin" "$staging/usr/local/bin/icegate"
  copy_libs "$staging" "$bin"
  install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$staging/etc/ssl/certs/ca-certificates.crt"
  printf '%s\n' "$PASSWD" >"$staging/etc/passwd"
  printf '%s\n' "$GROUP" >"$staging/etc/group"
  # The ownership store's directory (XDG_STATE_HOME=/var/lib), icegate's own, as the
  # Dockerfile's `install -d -m 0700 -o 65532 -g 65532`.
  mkdir -p "$staging/var/lib/icegate"
  python3 "$ROOT/scripts/rootfs.py" "$staging" "$OUT/icegate/rootfs.tar" "$EPOCH" var/lib/icegate=65532:65532:0700
  import "localhost/icegate:$VERSION" "$OUT/icegate/rootfs.tar" "${ICEGATE_CONFIG[@]}"
  log "icegate image took $((SECONDS - started)) s"
}

# --- the test-only PostgreSQL ----------------------------------------------------------------

build_postgres() {
  local started=$SECONDS staging="$OUT/postgres/rootfs" bin="/usr/lib/postgresql/$PG_MAJOR/bin"
  local lib="/usr/lib/postgresql/$PG_MAJOR/lib" share="/usr/share/postgresql/$PG_MAJOR" f
  if ! dpkg-query -W -f='${Status}' "postgresql-$PG_MAJOR" 2>/dev/null | grep -q "install ok installed"; then
    log "apt-get install postgresql-$PG_MAJOR (its output is shown only if it fails)"
    quietly $SUDO apt-get update -qq
    quietly $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "postgresql-$PG_MAJOR"
  fi
  rm -rf "$staging"
  install -D -m 0755 "$bin/postgres" "$staging$bin/postgres"
  install -D -m 0755 "$bin/initdb" "$staging$bin/initdb"
  # The modules the server core loads: PL/pgSQL, the text-search dictionaries initdb creates,
  # the encoding conversions, logical replication's; not the contrib extensions nor LLVM's JIT.
  for f in "$lib"/plpgsql.so "$lib"/dict_snowball.so "$lib"/*_and_*.so "$lib"/libpqwalreceiver.so "$lib"/pgoutput.so; do
    install -D -m 0755 "$f" "$staging$f"
  done
  # What initdb reads (postgres.bki, the system views, the timezone sets, the dictionaries'
  # data), without the manual pages and the contrib extensions' scripts.
  mkdir -p "$staging$share"
  (cd "$share" && find . -path ./man -prune -o -path ./extension -prune -o -type f -print) |
    while read -r f; do install -D -m 0644 "$share/$f" "$staging$share/$f"; done
  install -D -m 0644 "$share/extension/plpgsql.control" "$staging$share/extension/plpgsql.control"
  for f in "$share"/extension/plpgsql--*.sql; do install -D -m 0644 "$f" "$staging$f"; done
  # Debian builds PostgreSQL against the system's time zone data; the image knows UTC only.
  install -D -m 0644 /usr/share/zoneinfo/Etc/UTC "$staging/usr/share/zoneinfo/UTC"
  install -D -m 0644 /usr/share/zoneinfo/Etc/UTC "$staging/usr/share/zoneinfo/Etc/UTC"
  # initdb runs its steps through popen(), so /bin/sh, which the entrypoint uses as well.
  install -D -m 0755 /usr/bin/dash "$staging/bin/sh"
  install -D -m 0644 "$ROOT/tests/pod/gateway/postgres-entrypoint.sh" "$staging/usr/local/bin/postgres-entrypoint"
  copy_libs "$staging" "$staging$bin/postgres" "$staging$bin/initdb" "$staging/bin/sh" "$staging$lib"/*.so
  mkdir -p "$staging/etc"
  printf 'root:x:0:0:root:/root:/sbin/nologin\npostgres:x:999:999:postgres:/var/lib/postgresql:/sbin/nologin\n' >"$staging/etc/passwd"
  printf 'root:x:0:\npostgres:x:999:\n' >"$staging/etc/group"
  mkdir -p "$staging/var/lib/postgresql/data"
  python3 "$ROOT/scripts/rootfs.py" "$staging" "$OUT/postgres/rootfs.tar" "$EPOCH" \
    var/lib/postgresql=999:999:0755 var/lib/postgresql/data=999:999:0700
  local version; version="$(dpkg-query -W -f='${Version}' "postgresql-$PG_MAJOR")"
  import "localhost/icegate-test-postgres:$PG_MAJOR" "$OUT/postgres/rootfs.tar" "${PG_CONFIG[@]}" \
    "LABEL org.opencontainers.image.version=\"$version\""
  log "PostgreSQL image took $((SECONDS - started)) s"
}

# --- the dev catalog --------------------------------------------------------------------------

build_dev_catalog() {
  local started=$SECONDS staging="$OUT/dev-catalog/rootfs" dev="$ROOT/deploy/dev-catalog"
  "$dev/build.sh"
  rm -rf "$staging"
  mkdir -p "$staging/opt/dev-catalog/lib" "$staging/etc" "$staging/tmp"
  # Debian's JDK 17 (installed by build.sh), cut to the modules the catalog uses.
  jlink --add-modules "$JAVA_MODULES" --strip-debug --no-header-files --no-man-pages \
    --compress=2 --output "$staging/opt/java"
  # The SQLite JDBC driver's native half (Debian's libxerial-sqlite-jdbc-jni, where the JDK's
  # java.library.path looks), for CATALOG_URI=jdbc:sqlite:FILE.
  local jni=/usr/lib/x86_64-linux-gnu/jni/libsqlitejdbc.so
  install -D -m 0755 "$jni" "$staging$jni"
  copy_libs "$staging" "$staging/opt/java/bin/java" $(find "$staging/opt/java/lib" -name '*.so') "$jni"
  local entry
  IFS=: read -ra entries <"$dev/.build/classpath"
  for entry in "${entries[@]}"; do
    if [ -d "$entry" ]; then
      cp -r "$entry" "$staging/opt/dev-catalog/classes"
    else
      cp "$(readlink -f "$entry")" "$staging/opt/dev-catalog/lib/$(basename "$entry")"
    fi
  done
  rm -f "$staging/opt/dev-catalog/classes/.stamp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\ncatalog:x:1000:1000:catalog:/tmp:/sbin/nologin\n' >"$staging/etc/passwd"
  printf 'root:x:0:\ncatalog:x:1000:\n' >"$staging/etc/group"
  python3 "$ROOT/scripts/rootfs.py" "$staging" "$OUT/dev-catalog/rootfs.tar" "$EPOCH" tmp=0:0:1777
  import "localhost/icegate-dev-catalog:$VERSION" "$OUT/dev-catalog/rootfs.tar" "${CATALOG_CONFIG[@]}"
  log "dev catalog image took $((SECONDS - started)) s"
}

ensure_podman
case "$what" in
  icegate) build_icegate ;;
  dev-catalog) build_dev_catalog ;;
  postgres) build_postgres ;;
  all) build_icegate; build_dev_catalog ;;
esac
