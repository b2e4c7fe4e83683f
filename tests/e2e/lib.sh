# Shared by the end-to-end scripts (sourced, not run): venvs, a work directory whose processes
# are stopped on exit, waiting for a process to say it is ready, and free ports.

# idp_install: the test identity provider (tests/upstream_auth/idp.mjs, oidc-provider npm ci'd
# from its lockfile, again only when the lockfile changed) in target/upstream-auth/node, where the
# upstream-auth, Trino-way, live Trino and Trino bench scripts start it; ROOT is the checkout.
idp_install() {
  local src="$ROOT/tests/upstream_auth" node="$ROOT/target/upstream-auth/node"
  mkdir -p "$node"
  if ! cmp -s "$src/package-lock.json" "$node/package-lock.json" || [ ! -d "$node/node_modules" ]; then
    cp "$src/package.json" "$src/package-lock.json" "$node/"
    (cd "$node" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  fi
  cp "$src/idp.mjs" "$node/idp.mjs"
}

# local_signer_stack POLICY BUCKET: moto checking signatures (tests/e2e/signing_moto.py, BUCKET
# made), the dev catalog (no vending, no signing) and icegate as the signer in front of it
# (`credentials.signing.signer = "local"`, signing with the role it assumes at moto's STS), each
# in WORK and stopped on exit; sets MOTO KEY SECRET ROLE ROLES (moto's address, icegate's own key
# and secret, the role it assumes, the roles moto knows), CATALOG and PORT (icegate's).
# Needs ROOT, WORK, MOTO_VENV (moto installed) and ICEGATE (built); no AWS setting of the
# machine reaches any of them.
local_signer_stack() {
  local policy="$1" bucket="$2"
  unset AWS_PROFILE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_WEB_IDENTITY_TOKEN_FILE AWS_ROLE_ARN
  export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true
  "$MOTO_VENV/bin/python" "$ROOT/tests/e2e/signing_moto.py" "$bucket" >"$WORK/moto.log" 2>&1 &
  PIDS+=($!)
  wait_for "$WORK/moto.log" "moto listening on" "${PIDS[-1]}"
  read -r MOTO KEY SECRET ROLE ROLES < <(grep -a 'moto listening on' "$WORK/moto.log" | awk '{print $4, $6, $8, $10, $12}')

  "$ROOT/deploy/dev-catalog/run.sh" 0 "$WORK/warehouse" --quiet >"$WORK/catalog.log" 2>&1 &
  PIDS+=($!)
  wait_for "$WORK/catalog.log" "dev-catalog listening on" "${PIDS[-1]}"
  CATALOG="$(grep -ao 'http://127.0.0.1:[0-9]*' "$WORK/catalog.log" | head -1)"

  PORT="$(free_port)"
  cat >"$WORK/icegate.toml" <<TOML
listen = "127.0.0.1:$PORT"
admin_listen = "127.0.0.1:0"
policy = "$policy"

[upstream]
url = "$CATALOG"

[credentials.signing]
signer = "local"
# The tables' config names no S3 endpoint (the dev catalog knows none): sign requests name moto.
endpoints = [{ url = "$MOTO", path_style = true }]

[credentials.sts]
role_arn = "$ROLE"
endpoint = "$MOTO"
region = "us-east-1"
TOML
  # icegate's own key (the chain's environment): it only assumes the role, which signs.
  AWS_ACCESS_KEY_ID="$KEY" AWS_SECRET_ACCESS_KEY="$SECRET" "$ICEGATE" serve --config "$WORK/icegate.toml" \
    >"$WORK/icegate.log" 2>&1 &
  PIDS+=($!)
  wait_for "$WORK/icegate.log" "icegate listening" "${PIDS[-1]}"
}

# venv DIR REQS: a venv with the pinned requirements file, (re)installed when the file changed.
venv() {
  if [ ! -x "$1/bin/python" ] || ! cmp -s "$2" "$1/.requirements"; then
    python3 -m venv "$1"
    "$1/bin/pip" install --quiet --disable-pip-version-check -r "$2" >&2
    cp "$2" "$1/.requirements"
  fi
}

# start_work LABEL: sets WORK (a fresh directory) and PIDS; on exit every PID in PIDS is
# stopped and WORK removed. XDG_STATE_HOME points into WORK, so an icegate started without an
# `[owners]` section keeps its ownership store (on by default) there, not in $HOME.
start_work() {
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/icegate-e2e-$1.XXXXXX")"
  export XDG_STATE_HOME="$WORK/state"
  PIDS=()
  trap cleanup EXIT
}
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}

# wait_for LOG PATTERN [PID [SECONDS]]: until LOG holds PATTERN (SECONDS, 60 by default, at
# most); with PID, fails at once when that process has exited. A failure shows the log's end.
wait_for() {
  local deadline=$((SECONDS + ${4:-60}))
  while [ "$SECONDS" -lt "$deadline" ]; do
    # -s: the log may not exist yet (the process that writes it is still starting)
    grep -aqs "$2" "$1" && return 0
    if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then
      echo "exited before printing '$2' in $1:" >&2; tail -n 60 "$1" >&2; return 1
    fi
    sleep 0.1
  done
  echo "timed out waiting for '$2' in $1:" >&2; tail -n 60 "$1" >&2; return 1
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
