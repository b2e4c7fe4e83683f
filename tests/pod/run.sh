#!/usr/bin/env bash
# The sidecar manifests (deploy/kubernetes/sidecar) run as a pod with podman, driven from the
# host with PyIceberg through the pod's published port (docs/deploy.md "Running the manifests
# with podman"). Builds both images first (scripts/image.sh). Exits non-zero on any failure;
# removes the pod and the volumes it made on exit, also after a failure, and clears what an
# interrupted earlier run left.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/pod"
SIDECAR="$ROOT/deploy/kubernetes/sidecar"
. "$ROOT/tests/e2e/lib.sh"
log() { echo "[pod] $*" >&2; }
fail() { echo "[pod] FAIL $*" >&2; exit 1; }
ok() { echo "[pod] ok   $*" >&2; }

bash "$ROOT/scripts/image.sh"
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/Cargo.toml" | head -1)"
VENV="$ROOT/target/e2e-venv"
venv "$VENV" "$ROOT/tests/e2e/requirements.txt"
python3 -c 'import yaml' 2>/dev/null || {
  log "apt-get install python3-yaml (to render the manifests)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-yaml >/dev/null
}

POD=iceberg-catalog-pod-0                  # podman's name for the Deployment's pod
ICEGATE_CTR="$POD-icegate" CATALOG_CTR="$POD-catalog"
VOLUMES=(iceberg-catalog-icegate-owners iceberg-catalog-icegate-config iceberg-catalog-icegate-policy catalog-tmp)
HTTP=8181 ADMIN=9181                       # published as the containerPorts say
URL="http://127.0.0.1:$HTTP" READYZ="http://127.0.0.1:$ADMIN/readyz"
GRACE="$(python3 -c 'import sys,yaml; d=[x for x in yaml.safe_load_all(open(sys.argv[1])) if x["kind"]=="Deployment"][0]; print(d["spec"]["template"]["spec"]["terminationGracePeriodSeconds"])' "$SIDECAR/deployment.yaml")"

# Everything this script starts goes when it ends: the pod, then the volumes it made.
down() {
  [ -f "${RENDERED:-/nonexistent}" ] && podman kube down "$RENDERED" >/dev/null 2>&1
  podman pod rm -f -t 0 "$POD" >/dev/null 2>&1 || true
}
teardown() {
  local rc=$?
  if [ "$rc" != 0 ] && podman container exists "$ICEGATE_CTR" 2>/dev/null; then
    echo "--- icegate's log" >&2; podman logs --tail 30 "$ICEGATE_CTR" >&2 || true
    echo "--- the catalog's log" >&2; podman logs --tail 30 "$CATALOG_CTR" >&2 || true
  fi
  down
  podman volume rm -f "${VOLUMES[@]}" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
WORK="$(mktemp -d "${TMPDIR:-/tmp}/icegate-pod.XXXXXX")"
trap teardown EXIT
down
podman volume rm -f "${VOLUMES[@]}" >/dev/null 2>&1 || true
for port in "$HTTP" "$ADMIN"; do
  if ss -Hltn "sport = :$port" | grep -q .; then fail "port $port is in use on this machine; podman publishes the pod's ports there"; fi
done
# The catalog (user 1000) and the host's PyIceberg share this warehouse (tests/pod/render.py).
WAREHOUSE="$WORK/warehouse"
mkdir -p "$WAREHOUSE" && chmod 1777 "$WAREHOUSE"
RENDERED="$WORK/pod.yaml"

# play [POLICY_FILE]: renders and plays the manifests, then waits for /readyz 200; prints seconds.
play() {
  python3 "$HERE/render.py" "$SIDECAR" "localhost/icegate-dev-catalog:$VERSION" "$WAREHOUSE" "$@" >"$RENDERED"
  local started; started=$(date +%s.%N)
  # podman cannot start the kube YAML's healthchecks without systemd and says so on stderr.
  podman kube play "$RENDERED" >"$WORK/play.log" 2>&1 || { cat "$WORK/play.log" >&2; return 1; }
  until_ready 60
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$started" "$(date +%s.%N)"
}
until_ready() {
  for _ in $(seq $(($1 * 10))); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$READYZ")" = 200 ] && return 0
    sleep 0.1
  done
  fail "/readyz did not answer 200 within $1 s: $(curl -s "$READYZ")"
}
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
pyiceberg() { "$VENV/bin/python" "$HERE/pod.py" "$URL" "$1" || fail "pod.py $1"; }

# --- 0. the image is the Dockerfile's -------------------------------------------------------
python3 "$HERE/image_config.py" "$ROOT/deploy/Dockerfile" "localhost/icegate:$VERSION" >&2

# --- 1. the pod as the manifests describe it ------------------------------------------------
seconds="$(play)"
log "pod played; /readyz 200 after $seconds s (both containers, from \`podman kube play\`)"
[ "$(status "http://127.0.0.1:$ADMIN/healthz")" = 200 ] || fail "/healthz"
curl -s "$READYZ" | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["ready"] and r["upstream"]["reachable"] and r["owners"]["writable"], r' \
  || fail "/readyz body"
ok "/healthz 200 and /readyz 200 (upstream reachable, ownership store writable) on the published admin port"
# The catalog's port is not published: only icegate's ports are (the catalog declares none).
[ "$(status -m 2 "http://127.0.0.1:8080/v1/config")" = 000 ] || fail "the catalog's port 8080 is reachable on the host"
ok "the catalog's port is not published on the host"

# The namespace is the catalog administrator's (made at the catalog, not through icegate), so
# that no user owns the schema and only table ownership decides drops below.
POD_IP="$(podman inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$(podman pod inspect -f '{{.InfraContainerID}}' "$POD")")"
[ "$(status -X POST -d '{"namespace":["sales"]}' "http://$POD_IP:8080/v1/namespaces")" = 200 ] || fail "creating the namespace at the catalog"
pyiceberg first

# --- 2. the container as its securityContext says -------------------------------------------
pid="$(podman inspect -f '{{.State.Pid}}' "$ICEGATE_CTR")"
uids="$(awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/$pid/status")"
[ "$uids" = "65532 65532 65532 65532" ] || fail "icegate runs as uid $uids"
[ "$(awk '/^CapEff:/ {print $2}' "/proc/$pid/status")" = 0000000000000000 ] || fail "icegate has capabilities"
[ "$(awk '/^NoNewPrivs:/ {print $2}' "/proc/$pid/status")" = 1 ] || fail "icegate may gain privileges"
[ "$(awk '/^Seccomp:/ {print $2}' "/proc/$pid/status")" = 2 ] || fail "icegate runs without a seccomp filter"
[ "$(awk '$2 == "/" {print $4}' "/proc/$pid/mounts" | cut -d, -f1)" = ro ] || fail "icegate's root filesystem is writable"
[ "$(podman inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$ICEGATE_CTR")" = true ] || fail "ReadonlyRootfs"
store="$(podman volume inspect -f '{{.Mountpoint}}' iceberg-catalog-icegate-owners)/owners.db"
[ "$(stat -c %u:%g "$store")" = 65532:65532 ] || fail "the ownership store is not icegate's: $(stat -c %u:%g "$store")"
owners="$(podman exec "$ICEGATE_CTR" /usr/local/bin/icegate owners list --config /etc/icegate/config/icegate.toml)"
grep -q 'events.*bob' <<<"$owners" && grep -q 'by_alice.*alice' <<<"$owners" || fail "icegate owners list: $owners"
ok "icegate runs as 65532 with no capabilities, no new privileges, seccomp, a read-only root; its store (owned by 65532) holds the creators"

# --- 3. readiness follows the catalog ----------------------------------------------------------
podman stop -t 10 "$CATALOG_CTR" >/dev/null
for _ in $(seq 200); do [ "$(status "$READYZ")" = 503 ] && break; sleep 0.1; done
[ "$(status "$READYZ")" = 503 ] || fail "/readyz stayed 200 with the catalog stopped"
[ "$(status "http://127.0.0.1:$ADMIN/healthz")" = 200 ] || fail "/healthz failed with the catalog stopped"
podman start "$CATALOG_CTR" >/dev/null
until_ready 60
ok "/readyz 503 while the catalog is stopped (/healthz stays 200), 200 once it is back"

# --- 4. graceful shutdown ------------------------------------------------------------------------
# What the kubelet does to icegate: SIGTERM (after its preStop pause) with the pod's grace period,
# while the catalog, whose preStop pause outlasts icegate's drain, still serves. podman 4.3 runs
# no preStop hook and stops a pod's containers together, 10 s each (terminationGracePeriodSeconds
# is not read), so the test stops icegate's container itself, with the manifest's grace period.
"$VENV/bin/python" "$HERE/inflight.py" "$HTTP" "$ICEGATE_CTR" "$GRACE" "$ADMIN" || fail "graceful shutdown"
ok "a request in flight at SIGTERM finished; new connections were refused; icegate exited 0 within ${GRACE}s"
started=$(date +%s.%N)
podman start "$ICEGATE_CTR" >/dev/null
until_ready 30
log "icegate alone: /readyz 200 $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$started" "$(date +%s.%N)") s after \`podman start\`"

# --- 5. stopped and played again: the store lived on the volume --------------------------------
podman kube down "$RENDERED" >/dev/null 2>&1
podman volume exists iceberg-catalog-icegate-owners || fail "the claim's volume went with the pod"
seconds="$(play)"
log "played again; /readyz 200 after $seconds s"
pyiceberg restarted

# --- 6. a new policy, with the pod replaced ------------------------------------------------------
# podman has no way to change a running pod's ConfigMap: played alone, it is refused.
python3 - "$SIDECAR/policy.yaml" "$WORK/cm.yaml" "$WORK/lake.yaml" <<'PY'
import sys, yaml
cm = yaml.safe_load(open(sys.argv[1]))
yaml.safe_dump(cm, open(sys.argv[2], "w"))
policy = yaml.safe_load(cm["data"]["lake.yaml"])
for role in policy["roles"]:
    if role["name"] == "analyst":  # analysts may now see salaries
        role["securableObjects"] = [o for o in role["securableObjects"] if o["fullName"] != "prod.sales.salaries"]
yaml.safe_dump(policy, open(sys.argv[3], "w"), sort_keys=False)
PY
if podman kube play "$WORK/cm.yaml" >/dev/null 2>&1; then fail "podman played a ConfigMap alone (docs/deploy.md says it cannot)"; fi
"$ROOT/target/release/icegate" check --policy "$WORK/lake.yaml" >/dev/null
before="$(curl -s "$READYZ" | python3 -c 'import json,sys; print(json.load(sys.stdin)["policy"]["hash"])')"
podman kube down "$RENDERED" >/dev/null 2>&1
seconds="$(play "$WORK/lake.yaml")"
after="$(curl -s "$READYZ" | python3 -c 'import json,sys; print(json.load(sys.stdin)["policy"]["hash"])')"
[ "$before" != "$after" ] || fail "the replaced pod serves the old policy ($after)"
log "replaced with the new policy; /readyz 200 after $seconds s, policy $after"
pyiceberg new-policy
ok "the sidecar pod passed"
