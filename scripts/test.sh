#!/usr/bin/env bash
# Runs icegate's tests. `bash scripts/test.sh --help` says what each tier runs and installs.
# Long benchmarks and long fuzzing are separate commands (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'HELP'
usage: bash scripts/test.sh [--quick | --help]

  (no option)  everything CI runs (.ci/run): about 20 minutes on an idle 2-core machine with the
               crates already built; about 30 from a fresh clone (crates, Debian packages,
               Python wheels, cargo-fuzz), plus step 8 (about 3.5 minutes from nothing),
               step 10 (about 2.5 minutes once downloaded; the first run fetches about 600 MB
               from Maven Central), step 11 (about 7 minutes: the optimized release build took
               6 at rest, 18 to 25 on a machine busy with other builds) and step 12 (about 1 minute)
  --quick      clippy, the unit tests and the integration binary; no end-to-end test, nothing
               installed: about 3 minutes once built
  --help       this text; runs nothing

What the full run does, in order:
  1. cargo clippy --all-targets -D warnings, cargo test (unit tests; the integration binary:
     conformance cases, OpenAPI route coverage, property and differential tests, the serving
     path against an in-process fake catalog, the adversarial suite, ownership by creation,
     the Kubernetes manifests, the CLI), then `icegate test` on the example policy's cases
  2. tests/postgres.sh: the PostgreSQL ownership store (two replicas, a server restart, TLS)
  3. cargo build --benches: the benchmarks build and link (in the dev profile, whose crates
     step 1 already built; `cargo bench` builds them optimized when they are run)
  4. deploy/dev-catalog/smoke.sh: the dev Iceberg REST catalog with PyIceberg
  5. tests/names/run.sh: path segments decoded by Iceberg's Java RESTUtil and by icegate
  6. tests/e2e/run.sh: PyIceberg, DuckDB, ownership by creation, credential vending,
     s3-downscope and remote signing against moto, Spark SQL, and Trino's catalog calls
     (Iceberg's Java client built as Trino builds it, OAUTH2 tokens from oidc-provider), each
     through icegate to the dev catalog (remote signing to a small catalog and signer of the
     test's own); transparency: with an allow-all policy the same results and bodies through
     icegate as directly; two dev catalogs behind one icegate (`[[upstreams]]`: routing by
     catalog and by getConfig's warehouse, one upstream stopped)
  7. tests/upstream_auth/run.sh: icegate's own credentials for the upstream: oauth2 against
     oidc-provider's short-lived tokens for three minutes (a catalog that checks them on the JWKS),
     the jwt provider through a key rotation, sigv4 verified by botocore (about 3.5 minutes)
  8. tests/clients/iceberg-rust/run.sh: iceberg-rust's REST client (iceberg-catalog-rest
     0.10.1) through icegate: lists, a load, rows read, refusals; its first build compiles 321
     crates (about 3.5 minutes on an idle 2-core machine)
  9. tests/readme/follow.sh: the README's demo command in a fresh clone
 10. tests/live/run.sh: real components from Maven Central: Spark's own S3 client (S3FileIO,
     iceberg-aws-bundle) signing every data request through icegate's local signer against
     moto, and a real Trino 483 (assembled from Central's jars, Temurin 25) whose catalogs are
     written from the README's recipe: OAUTH2 tokens from a real Keycloak 26.7.3 (groups in
     the token decide), vended credentials, narrowed refusals
 11. tests/pod/run.sh: the container images built with podman (scripts/image.sh: the release
     binary, fat LTO, is most of it) and the sidecar manifests run as a pod with
     `podman kube play`, driven with PyIceberg through the pod's published ports
 12. tests/pod/gateway.sh: the gateway manifests with podman (step 11's images, and a PostgreSQL
     image from Debian's packages): two replicas sharing the PostgreSQL ownership store over
     TLS, JWTs verified against a JWKS, one replica stopped (about 1 minute)
 13. scripts/fuzz.sh: each fuzz target for 20 s

What it installs when missing (it runs as root, or with sudo for apt-get):
  - Debian packages, with apt-get: postgresql (step 2); tinyproxy (step 7); openjdk-17-jdk-headless, maven,
    SLF4J and the SQLite JDBC driver for the dev catalog (steps 4-12); podman,
    runc, catatonit and ca-certificates (steps 11-12), which also writes
    /etc/containers/containers.conf when it is missing (runc, cgroupfs, ulimits)
  - pinned Python packages with pip, in virtual environments under target/: pyiceberg, pyarrow,
    duckdb (steps 4, 6, 8-12); moto (6, 10); pyiceberg with s3fs (6); pyspark 3.5.9 (6, 10)
  - oidc-provider 9.13.3 with npm ci from tests/upstream_auth/package-lock.json, and PyJWT and
    botocore pinned in tests/upstream_auth/requirements.txt, under target/upstream-auth (steps 6, 7)
  - the iceberg-rust client's crates, with cargo from its own Cargo.lock (step 8)
  - from Maven Central with mvn, pinned and kept in ~/.m2: Iceberg's Spark runtime jar 1.10.2,
    the dev catalog's and Spark's (steps 4-12); Iceberg's Spark runtime and iceberg-aws-bundle
    1.10.1, Trino 483's server and Iceberg plugin jars, Keycloak 26.7.3's distribution (step 10)
  - cargo-fuzz 0.13.1 with cargo install (step 13)
  Everything else it needs is the Rust toolchain (1.95), Java 17's runtime, Temurin 25 (Trino, Keycloak),
  Maven, Python 3.11 and Node.js 20 with npm.
HELP
}

case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  --quick | "") ;;
  *) echo "unknown option \`$1\`" >&2; usage >&2; exit 2 ;;
esac

# One full build per run: incremental artefacts would only take disk (they were 12 GB of 20).
export CARGO_INCREMENTAL=0
# Each step says how long it took, so a slower run shows where the time went.
step() {
  local started=$SECONDS
  "$@"
  echo "== test.sh: \`$*\` took $((SECONDS - started)) s" >&2
}
# fuzz/Cargo.lock is its own workspace's: checked first, since a stale one otherwise stops only
# the last step (scripts/fuzz.sh), 25 minutes in. The fix: `cargo update -w` in fuzz/.
step cargo metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null
step cargo clippy --locked --all-targets -- -D warnings
# the fuzz targets against the crate's API, checked here too: `cargo fuzz` builds them only at
# the last step, where a renamed function (issue 45's) stopped CI after 25 minutes
step env CARGO_TARGET_DIR=target/fuzz-check cargo check --locked --manifest-path fuzz/Cargo.toml --bins
step cargo test --locked
# the example policy's decision tests, run as a policy repository's CI runs them (docs/policy-ci.md)
step cargo run --locked --quiet -- test --policy policies/example.yaml policies/example.tests.yaml
[ "${1:-}" = "--quick" ] && exit 0
step bash tests/postgres.sh
# The benchmarks build and link; optimizing them here (`cargo bench --no-run`) took ~400 of a
# ~1,500 s run for code CI never times.
step cargo build --locked --benches
step bash deploy/dev-catalog/smoke.sh
# name parsing against Iceberg's Java RESTUtil, with the jar smoke.sh just built
step bash tests/names/run.sh
step bash tests/e2e/run.sh
step bash tests/upstream_auth/run.sh
# the fourth client, iceberg-rust: its cold build (321 crates) is most of the step
step bash tests/clients/iceberg-rust/run.sh
step bash tests/readme/follow.sh
# real components from Maven Central: Spark's S3FileIO through icegate's signer, a real Trino
# with Keycloak as its identity provider
step bash tests/live/run.sh
# the image built here and the sidecar manifests run as a pod (podman), docs/deploy.md
step bash tests/pod/run.sh
# the gateway manifests: two replicas and a PostgreSQL store, with the images step 10 built
step env ICEGATE_POD_IMAGES=built bash tests/pod/gateway.sh
# each fuzz target for 20 s on its committed corpus (--long for a real run)
step bash scripts/fuzz.sh
echo "== test.sh: everything passed in $SECONDS s" >&2
