#!/usr/bin/env bash
# Starts the dev catalog and a release icegate in front of it and prints the added latency of
# a loadTable (benches/load/latency.py). Not part of the test command.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
"$ROOT/deploy/dev-catalog/build.sh" >&2
(cd "$ROOT" && cargo build --locked --release --quiet)
WORK="$(mktemp -d)"; PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
"$ROOT/deploy/dev-catalog/run.sh" 0 "$WORK/wh" --quiet >"$WORK/c.log" 2>&1 & PIDS+=($!)
for _ in $(seq 100); do grep -q "listening on" "$WORK/c.log" && break; sleep 0.1; done
CATALOG="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/c.log" | head -1)"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
ICEGATE_LOG=warn "$ROOT/target/release/icegate" serve --upstream "$CATALOG" --policy "$ROOT/policies/example.yaml" \
  --listen "127.0.0.1:$PORT" --admin-listen 127.0.0.1:0 >"$WORK/i.log" 2>&1 & PIDS+=($!)
sleep 0.5
python3 "$ROOT/benches/load/latency.py" "$CATALOG" "http://127.0.0.1:$PORT" "${1:-2000}"
