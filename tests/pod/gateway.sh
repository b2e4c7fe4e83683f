#!/usr/bin/env bash
# The gateway manifests (deploy/kubernetes/gateway) run with podman: two icegate replicas
# sharing one PostgreSQL ownership store over TLS (verify-full), clients identified by JWTs
# verified against a JWKS over HTTPS, as the manifests configure them (docs/deploy.md section 9
# says what the test changes for podman, and why). Builds the images it needs (scripts/image.sh;
# a no-op after tests/pod/run.sh but for PostgreSQL's). Exits non-zero on any failure; removes
# the pods, volumes and processes it made on exit, also after a failure.
#
# usage: bash tests/pod/gateway.sh [--unshared]
#   --unshared  replica B gets a database of its own: the replicas do not share the store, and
#               the test must fail (run by hand to see that it can)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/pod"
. "$ROOT/tests/e2e/lib.sh"
log() { echo "[gateway] $*" >&2; }
fail() { echo "[gateway] FAIL $*" >&2; exit 1; }
ok() { echo "[gateway] ok   $*" >&2; }
UNSHARED=()
case "${1:-}" in
  --unshared) UNSHARED=(--unshared) ;;
  "") ;;
  *) echo "unknown argument \`$1\`" >&2; exit 2 ;;
esac

started_all=$SECONDS
# ICEGATE_POD_IMAGES=built: tests/pod/run.sh has just built icegate's and the catalog's.
[ "${ICEGATE_POD_IMAGES:-}" = built ] || bash "$ROOT/scripts/image.sh" all
bash "$ROOT/scripts/image.sh" postgres
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/Cargo.toml" | head -1)"
VENV="$ROOT/target/e2e-venv"
venv "$VENV" "$ROOT/tests/e2e/requirements.txt"
python3 -c 'import yaml' 2>/dev/null || {
  log "apt-get install python3-yaml (to render the manifests)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-yaml >/dev/null
}

A_HTTP=18181 A_ADMIN=19181 B_HTTP=28181 B_ADMIN=29181   # tests/pod/render_gateway.py's PORTS
PODS=(icegate-a-pod-0 icegate-b-pod-0 gravitino-pod-0 postgres-pod-0)
# ConfigMaps (and the Secrets played as ConfigMaps) and the claim become named volumes.
VOLUMES=(postgres-server postgres-data icegate-config icegate-config-b icegate-policy icegate-postgres-ca icegate-test-trust)
WORK="$(mktemp -d "${TMPDIR:-/tmp}/icegate-gateway.XXXXXX")"
IDP_PID=""
down() {
  local f
  for f in "$WORK/gateway.yaml" "$WORK/store.yaml"; do
    [ -f "$f" ] && podman kube down "$f" >/dev/null 2>&1 || true
  done
  for f in "${PODS[@]}"; do podman pod rm -f -t 0 "$f" >/dev/null 2>&1 || true; done
  podman volume rm -f "${VOLUMES[@]}" >/dev/null 2>&1 || true
}
teardown() {
  local rc=$? c
  if [ "$rc" != 0 ]; then
    for c in icegate-a-pod-0-icegate icegate-b-pod-0-icegate postgres-pod-0-postgres gravitino-pod-0-catalog; do
      podman container exists "$c" 2>/dev/null || continue
      echo "--- $c's log" >&2; podman logs --tail 20 "$c" >&2 || true
    done
    [ -f "$WORK/idp.log" ] && { echo "--- the JWKS server's log" >&2; tail -20 "$WORK/idp.log" >&2; }
  fi
  [ -n "$IDP_PID" ] && { kill "$IDP_PID" 2>/dev/null; wait "$IDP_PID" 2>/dev/null || true; }
  down
  rm -rf "$WORK"
}
trap teardown EXIT
down
for port in "$A_HTTP" "$A_ADMIN" "$B_HTTP" "$B_ADMIN"; do
  if ss -Hltn "sport = :$port" | grep -q .; then fail "port $port is in use on this machine; the test publishes a replica's port there"; fi
done

# --- the test's secrets: a CA, PostgreSQL's and the IdP's certificates, the token key ---------
cert() { # cert NAME HOST: WORK/NAME.crt and .key, for HOST, issued by the test CA
  openssl req -newkey rsa:2048 -nodes -keyout "$WORK/$2.key" -out "$WORK/$2.csr" -subj "/CN=$1" 2>/dev/null
  openssl x509 -req -in "$WORK/$2.csr" -CA "$WORK/ca.crt" -CAkey "$WORK/ca.key" -CAcreateserial -days 1 \
    -extfile <(printf 'subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\n' "$1") -out "$WORK/$2.crt" 2>/dev/null
}
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/ca.key" -out "$WORK/ca.crt" -days 1 -subj "/CN=icegate pod test CA" 2>/dev/null
cert postgres.icegate.svc.cluster.local postgres
cert idp.example.com idp
openssl genrsa -out "$WORK/jwt.key" 2048 2>/dev/null
openssl genrsa -out "$WORK/other.key" 2048 2>/dev/null   # a key the JWKS does not hold
openssl rand -hex 16 >"$WORK/password"
openssl rand -hex 32 >"$WORK/page_token_key"

ready() { # ready URL SECONDS: until URL answers 200
  for _ in $(seq $(($2 * 10))); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1")" = 200 ] && return 0
    sleep 0.1
  done
  fail "$1 did not answer 200 within $2 s: $(curl -s "$1")"
}
pod_ip() { podman inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$(podman pod inspect -f '{{.InfraContainerID}}' "$1")"; }

# --- 1. PostgreSQL and the catalog ---------------------------------------------------------------
t0=$(date +%s.%N)
python3 "$HERE/render_gateway.py" store "$WORK" "$VERSION" >"$WORK/store.yaml"
podman kube play "$WORK/store.yaml" >"$WORK/play.log" 2>&1 || { cat "$WORK/play.log" >&2; exit 1; }
PG_IP="$(pod_ip postgres-pod-0)" CATALOG_IP="$(pod_ip gravitino-pod-0)"
IDP_IP="$(podman network inspect -f '{{range .Subnets}}{{.Gateway}}{{end}}' podman-default-kube-network)"
# (the log is read whole before grep: `podman logs | grep -q` fails under pipefail when grep
# stops reading first)
pg_log() { local out; out="$(podman logs postgres-pod-0-postgres 2>&1)"; grep -Eq "$1" <<<"$out"; }
for _ in $(seq 300); do
  pg_log "ready to accept connections" && break
  sleep 0.1
done
pg_log "ready to accept connections" || fail "PostgreSQL did not start"
log "PostgreSQL (initdb, then the server) ready $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)") s after \`podman kube play\`, at $PG_IP"
ready "http://$CATALOG_IP:9001/v1/config" 60
# The namespace is the catalog administrator's (made at the catalog), so no user owns it and
# only table ownership decides the drops below.
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d '{"namespace":["sales"]}' "http://$CATALOG_IP:9001/v1/namespaces")" = 200 ] \
  || fail "creating the namespace at the catalog"

# --- 2. the identity provider's JWKS, over HTTPS on the host's side of the pods' bridge -------
"$VENV/bin/python" "$HERE/idp.py" serve "$WORK" "$IDP_IP" >"$WORK/idp.log" 2>&1 &
IDP_PID=$!
wait_for "$WORK/idp.log" serving "$IDP_PID"

# --- 3. the gateway: two replicas -------------------------------------------------------------
t0=$(date +%s.%N)
python3 "$HERE/render_gateway.py" gateway "$WORK" "$VERSION" "$PG_IP" "$CATALOG_IP" "$IDP_IP" "${UNSHARED[@]}" >"$WORK/gateway.yaml"
podman kube play "$WORK/gateway.yaml" >"$WORK/play.log" 2>&1 || { cat "$WORK/play.log" >&2; exit 1; }
ready "http://127.0.0.1:$A_ADMIN/readyz" 60
ready "http://127.0.0.1:$B_ADMIN/readyz" 60
log "both replicas ready $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)") s after \`podman kube play\`"
for port in "$A_ADMIN" "$B_ADMIN"; do
  curl -s "http://127.0.0.1:$port/readyz" | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["ready"] and r["upstream"]["reachable"] and r["owners"] == {"store": "postgres", "writable": True, "pending": 0}, r' \
    || fail "/readyz on :$port"
done
ok "/readyz 200 on both replicas' admin ports: upstream reachable, store postgres, writable"
# TLS with verify-full against the CA in icegate-postgres-ca: PostgreSQL logs each connection.
pg_log 'connection authorized: user=icegate database=icegate .*SSL enabled' \
  || fail "no TLS connection from icegate in PostgreSQL's log"
ok "icegate's connections to PostgreSQL are TLS (verify-full against the test CA, for postgres.icegate.svc.cluster.local)"
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(status "http://127.0.0.1:$A_HTTP/v1/namespaces")" = 401 ] || fail "a request without a token was not refused 401"
[ "$(status -H "Authorization: Bearer $("$VENV/bin/python" "$HERE/idp.py" token "$WORK" bob "$WORK/other.key")" "http://127.0.0.1:$A_HTTP/v1/namespaces")" = 401 ] \
  || fail "a token signed by a key not in the JWKS was not refused 401"
[ "$(status -H "Authorization: Bearer $("$VENV/bin/python" "$HERE/idp.py" token "$WORK" bob)" "http://127.0.0.1:$B_HTTP/v1/namespaces")" = 200 ] \
  || fail "bob's token was not accepted"
grep -q '"GET /realms/lake/protocol/openid-connect/certs HTTP/1.1" 200' "$WORK/idp.log" || fail "icegate did not fetch the JWKS"
ok "no token, or one signed by a key the JWKS lacks: 401; one signed by the key in the JWKS (fetched over HTTPS): 200"

A="http://127.0.0.1:$A_HTTP" B="http://127.0.0.1:$B_HTTP"
"$VENV/bin/python" "$HERE/gateway.py" "$WORK" "$A" "$B" shared || fail "gateway.py shared"
ok "a table created through replica A is its creator's through replica B, and no one else's"

# --- 4. one replica stopped, the other serves -------------------------------------------------
# (podman logs that it cannot reach systemd for the healthchecks: in podman.log)
podman pod stop -t 30 icegate-a-pod-0 >>"$WORK/podman.log" 2>&1
[ "$(status -m 2 "http://127.0.0.1:$A_ADMIN/healthz")" = 000 ] || fail "replica A still answers"
ready "http://127.0.0.1:$B_ADMIN/readyz" 5
"$VENV/bin/python" "$HERE/gateway.py" "$WORK" "$A" "$B" failover || fail "gateway.py failover"
t0=$(date +%s.%N)
podman pod start icegate-a-pod-0 >>"$WORK/podman.log" 2>&1
ready "http://127.0.0.1:$A_ADMIN/readyz" 30
log "replica A ready again $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$(date +%s.%N)") s after \`podman pod start\`"
"$VENV/bin/python" "$HERE/gateway.py" "$WORK" "$A" "$B" back || fail "gateway.py back"
ok "with replica A stopped, B served; A, started again, knows what B recorded"
log "the gateway manifests passed in $((SECONDS - started_all)) s"
