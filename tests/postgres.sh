#!/usr/bin/env bash
# The PostgreSQL ownership-store tests (issue 9): installs PostgreSQL from Debian's packages
# when it is missing (as root), then runs the ignored `owners_pg` integration tests, which start
# a server on loopback (initdb and the server run as the `postgres` user, a free port, a
# temporary data directory) and two icegate replicas against it; a second server accepts only
# TLS, with a certificate from a CA the test makes (the store over `sslmode=verify-full`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
BIN="$(find_bin || true)"
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  echo "installing PostgreSQL (Debian package postgresql; its output is shown only if it fails)" >&2
  export DEBIAN_FRONTEND=noninteractive
  out="$(mktemp)"
  if ! { apt-get update -qq && apt-get install -y -qq postgresql; } >"$out" 2>&1; then cat "$out" >&2; exit 1; fi
  rm -f "$out"
  BIN="$(find_bin)"
fi
# The Debian package starts a cluster of its own; the tests use their own on another port.
export ICEGATE_TEST_PG_BIN="$BIN"
cd "$ROOT"
cargo test --locked --test integration owners_pg -- --ignored --nocapture
