#!/usr/bin/env bash
# Instructions per request of icegate and of the bare control, counted by callgrind over the
# load harness's fixtures: a figure that does not drift with machine noise, for profiling the
# per-request cost (README "Performance"). Not part of the test command.
#
#   bash benches/load/callgrind.sh [PATH] [REQUESTS]
#
# PATH defaults to the small list of scenario (b). Counters are zeroed after a warm-up, the
# requests are sent on one keep-alive connection, and the totals are divided by their number.
# The callgrind.out files stay in the printed work directory for callgrind_annotate.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
REQ_PATH="${1:-/v1/namespaces/db/tables}"
N="${2:-2000}"
missing=()
command -v valgrind >/dev/null || missing+=(valgrind)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi
(cd "$ROOT" && cargo build --locked --profile profiling --quiet --bin icegate --example passthrough)
BIN="$ROOT/target/profiling"
WORK="$(mktemp -d /tmp/icegate-callgrind.XXXXXX)"
chmod 755 "$WORK"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
UP=$(port)
python3 "$ROOT/benches/load/fixtures.py" "$WORK" "$UP"
"$(command -v nginx || echo /usr/sbin/nginx)" -p "$WORK" -c "$WORK/upstream.conf" & PIDS+=($!)

# Zeroes the counters of the process on PORT after a warm-up, sends N requests, dumps.
measure() {
  local name=$1 port=$2 pid=$3
  for _ in $(seq 200); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=0.2).close()" 2>/dev/null && break
    sleep 0.2
  done
  python3 "$ROOT/benches/load/requests.py" "$port" "$REQ_PATH" 50
  callgrind_control -z "$pid" >/dev/null
  python3 "$ROOT/benches/load/requests.py" "$port" "$REQ_PATH" "$N"
  callgrind_control -d "$pid" >/dev/null
  sleep 0.5
  local out
  out=$(ls -t "$WORK"/callgrind."$name".*.[0-9]* 2>/dev/null | head -1)
  local total
  total=$(grep -m1 '^summary:\|^totals:' "$out" | awk '{print $2}')
  echo "$name: $((total / N)) instructions per request ($out)"
}

CP=$(port)
valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.control.%p" \
  "$BIN/examples/passthrough" "127.0.0.1:$CP" "http://127.0.0.1:$UP" 2>"$WORK/control.log" & CPID=$!; PIDS+=($CPID)
measure control "$CP" "$CPID"

IP=$(port)
ICEGATE_LOG=warn valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.icegate.%p" \
  "$BIN/icegate" serve --config "$WORK/icegate.toml" --upstream "http://127.0.0.1:$UP" \
  --listen "127.0.0.1:$IP" --admin-listen 127.0.0.1:0 2>"$WORK/icegate.log" & IPID=$!; PIDS+=($IPID)
measure icegate "$IP" "$IPID"
echo "work directory: $WORK (callgrind_annotate FILE | head -60)"
