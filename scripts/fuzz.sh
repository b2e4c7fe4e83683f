#!/usr/bin/env bash
# Runs icegate's fuzz targets (fuzz/, issue 8) on their committed corpora.
#
#   bash scripts/fuzz.sh              each target for FUZZ_SECONDS (default 20) — the test run
#   bash scripts/fuzz.sh --long       each target for FUZZ_LONG_SECONDS (default 1800)
#   bash scripts/fuzz.sh [--long] T   only target T (path, roles, auth, body, list, credentials, sign)
#
# Works on the stable toolchain: `-s none` builds with libFuzzer's coverage instrumentation but
# no sanitizer (the sanitizers need nightly; the targets are safe Rust and check properties with
# assertions). The committed corpus is only read: what a run finds goes to a temporary folder,
# and a failing input is saved under fuzz/artifacts/T/ (reproduce with
# `cd fuzz && cargo fuzz run -s none -O T artifacts/T/<file>`).
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION=0.13.1
seconds="${FUZZ_SECONDS:-20}"
if [[ "${1:-}" == "--long" ]]; then
    seconds="${FUZZ_LONG_SECONDS:-1800}"
    shift
fi
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    targets=(path roles auth body list credentials sign)
fi

if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
    echo "installing cargo-fuzz $CARGO_FUZZ_VERSION"
    cargo install --locked "cargo-fuzz@$CARGO_FUZZ_VERSION"
fi

cd fuzz
# `cargo fuzz build` takes no --locked: a fuzz/Cargo.lock that no longer matches the crate's
# dependencies stops the run here instead of being rewritten unseen.
if ! cargo metadata --locked --format-version 1 --filter-platform "$(rustc -vV | sed -n 's/^host: //p')" >/dev/null; then
    echo "fuzz/Cargo.lock is out of date: run \`cargo update -w\` in fuzz/ and commit it" >&2
    exit 1
fi
cargo fuzz build -s none -O
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=0
passed=0
for t in "${targets[@]}"; do
    mkdir -p "$scratch/$t"
    echo "fuzz: $t for ${seconds}s"
    if cargo fuzz run -s none -O "$t" "$scratch/$t" "corpus/$t" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
        >"$scratch/$t.log" 2>&1; then
        grep -E '^#[0-9]+[[:space:]]+DONE' "$scratch/$t.log" | tail -1 || true
        passed=$((passed + 1))
    else
        echo "fuzz: $t FAILED"
        tail -40 "$scratch/$t.log"
        failed=$((failed + 1))
    fi
done
echo "fuzz: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
