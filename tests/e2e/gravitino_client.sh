#!/usr/bin/env bash
# The fake Gravitino of tests/integration/gravitino.rs, checked against Gravitino's own Python
# client (apache-gravitino, pinned in tests/e2e/requirements-gravitino.txt, installed into
# target/e2e-gravitino-venv): the client reads the same roles, users, groups and owners from
# the fake as icegate's reader does, so the fake cannot drift from what a real server sends.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
. "$ROOT/tests/e2e/lib.sh"
venv "$ROOT/target/e2e-gravitino-venv" "$ROOT/tests/e2e/requirements-gravitino.txt"
cd "$ROOT"
out="$(ICEGATE_GRAVITINO_PYTHON="$ROOT/target/e2e-gravitino-venv/bin/python" \
  cargo test --locked --quiet --test integration -- --ignored --exact \
  gravitino::the_fake_reads_back_through_gravitinos_own_client 2>&1)" || { echo "$out" >&2; exit 1; }
# a renamed test would match nothing and pass: the run must have run exactly this one
grep -q "test result: ok. 1 passed" <<<"$out" || { echo "$out" >&2; echo "gravitino_client.sh: the test did not run" >&2; exit 1; }
echo "gravitino_client.sh: Gravitino's Python client reads the fake as icegate does" >&2
