#!/usr/bin/env bash
# Credential vending and remote signing end to end (docs/design.md §8): two dev catalogs with
# `--vend` (tests/e2e/vend.json as it is, `always: false`, and a copy with `always: true`) and
# four icegates on tests/e2e/credentials-policy.yaml in front of them (strip-broader twice,
# strip, passthrough; see tests/e2e/credentials.py), all started once and in parallel; then
# tests/e2e/credentials.py checks every credential-bearing operation and signRequest.
# Exits non-zero on failure. Called by tests/e2e/run.sh; runs on its own too.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
DEV="$ROOT/deploy/dev-catalog"
. "$E2E/lib.sh"
"$DEV/build.sh" >&2
VENV="$ROOT/target/e2e-venv"
venv "$VENV" "$E2E/requirements.txt"
(cd "$ROOT" && cargo build --locked --quiet)
ICEGATE="$ROOT/target/debug/icegate"
"$ICEGATE" check --policy "$E2E/credentials-policy.yaml" >/dev/null

start_work credentials

python3 - "$E2E/vend.json" "$WORK/vend-always.json" <<'EOF'
import json, sys
vend = json.load(open(sys.argv[1]))
vend["always"] = True
json.dump(vend, open(sys.argv[2], "w"), indent=1)
EOF
"$DEV/run.sh" 0 "$WORK/warehouse0" --vend "$E2E/vend.json" --quiet >"$WORK/catalog0.log" 2>&1 &
PIDS+=($!)
"$DEV/run.sh" 0 "$WORK/warehouse1" --vend "$WORK/vend-always.json" --quiet >"$WORK/catalog1.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/catalog0.log" "dev-catalog listening on"
wait_for "$WORK/catalog1.log" "dev-catalog listening on"
CATALOG0="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog0.log" | head -1)"
CATALOG1="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog1.log" | head -1)"

# name  catalog  [credentials] lines
GATES=(
  "A|$CATALOG0|mode = \"strip-broader\"
[credentials.signing]
endpoints = [{ url = \"http://127.0.0.1:9000\", path_style = true }]"
  "B|$CATALOG1|mode = \"strip-broader\"
public_url = \"https://icegate.example/lake\""
  "C|$CATALOG1|mode = \"strip\""
  "D|$CATALOG1|mode = \"passthrough\""
)
ARGS=(--catalog0 "$CATALOG0" --catalog1 "$CATALOG1")
for spec in "${GATES[@]}"; do
  IFS='|' read -r -d '' name upstream credentials <<<"$spec" || true
  credentials="${credentials%$'\n'}"
  port="$(free_port)"
  conf="$WORK/icegate-$name.toml"
  if [ "$name" = B ]; then
    # B takes everything from its file; the others take flags plus the file.
    cat >"$conf" <<EOF
listen = "127.0.0.1:$port"
admin_listen = "127.0.0.1:0"
policy = "$E2E/credentials-policy.yaml"

[upstream]
url = "$upstream"

EOF
    flags=()
  else
    : >"$conf"
    flags=(--upstream "$upstream" --policy "$E2E/credentials-policy.yaml" --listen "127.0.0.1:$port"
      --admin-listen 127.0.0.1:0)
  fi
  # The gate's own lines last: they may open a subsection (A's [credentials.signing]).
  printf '[credentials]\nallowed_config_keys = ["e2e.public.extra"]\n%s\n' "$credentials" >>"$conf"
  "$ICEGATE" serve --config "$conf" "${flags[@]}" >"$WORK/icegate-$name.log" 2>&1 &
  PIDS+=($!)
  ARGS+=(--gate "$name=http://127.0.0.1:$port" --log "$name=$WORK/icegate-$name.log")
done
for spec in "${GATES[@]}"; do
  wait_for "$WORK/icegate-${spec%%|*}.log" "icegate listening"
done
echo "credentials e2e: catalogs $CATALOG0 (always: false), $CATALOG1 (always: true)" >&2
if ! "$VENV/bin/python" "$E2E/credentials.py" "${ARGS[@]}"; then
  for spec in "${GATES[@]}"; do
    # Its log lines, without the audit records (one JSON object per request).
    echo "--- icegate ${spec%%|*} log" >&2; grep -av '^{' "$WORK/icegate-${spec%%|*}.log" | tail -20 >&2
  done
  exit 1
fi
