#!/usr/bin/env bash
# The load harness (README "Performance"): direct access, nginx, a bare hyper pass-through
# built like icegate's server, and icegate, under the same wrk load on loopback, interleaved;
# prints the ratios and the policy-load figures (`icegate check` on generated policies of
# 100,000 and 1,000,000 grants) and writes benches/load/results.md (and .json). Not part of the test
# command: it takes about 10 minutes with the defaults (5 s × 3 rounds per target and scenario).
#
#   bash benches/load/run.sh [--seconds N] [--rounds N] [--only a b ...] [--out FILE]
#
# Installs wrk and nginx from Debian's packages when they are missing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v taskset >/dev/null || missing+=(util-linux)
command -v curl >/dev/null || missing+=(curl)
[ -x /usr/bin/time ] || missing+=(time)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "load: installing ${missing[*]} from Debian's packages" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi
if [ "$(nproc)" -lt 2 ]; then
  echo "load: needs 2 cores (the load generator on one, the servers on the other)" >&2
  exit 1
fi
(cd "$ROOT" && cargo build --locked --release --quiet --bin icegate --example passthrough --example policy_gen)
args=("$@")
case " ${args[*]-} " in
  *" --out "*) ;;
  *) args+=(--out "$ROOT/benches/load/results.md") ;;
esac
exec python3 "$ROOT/benches/load/harness.py" \
  --icegate "$ROOT/target/release/icegate" \
  --control "$ROOT/target/release/examples/passthrough" \
  --policy-gen "$ROOT/target/release/examples/policy_gen" \
  "${args[@]}"
