# Shared by the end-to-end scripts (sourced, not run): venvs, a work directory whose processes
# are stopped on exit, waiting for a process to say it is ready, and free ports.

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

# wait_for LOG PATTERN [PID]: until LOG holds PATTERN (60 s at most); with PID, fails at once
# when that process has exited.
wait_for() {
  for _ in $(seq 600); do
    # -s: the log may not exist yet (the process that writes it is still starting)
    grep -aqs "$2" "$1" && return 0
    if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then
      echo "exited before printing '$2' in $1:" >&2; cat "$1" >&2; return 1
    fi
    sleep 0.1
  done
  echo "timed out waiting for '$2' in $1:" >&2; cat "$1" >&2; return 1
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
