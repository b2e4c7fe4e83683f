"""Runs SQL on a Trino server over Trino's client protocol (HTTP, as its CLI and JDBC driver do).

Usage: sql.py SERVER USER CATALOG STATEMENT...

For each statement prints one line, `STATEMENT => OK ROWS` (rows joined with `;`, columns with
`,`) or `STATEMENT => ERR MESSAGE` (Trino's error message and its causes', joined with ` <- `, on
one line). Exits 0 unless the
server cannot be reached. Used by tests/live/trino.sh; benches/trino/bench.py imports `run`.
"""
import json
import sys
import urllib.request


def _fetch(req):
    with urllib.request.urlopen(req, timeout=300) as resp:
        return json.load(resp)


def run(server, user, catalog, sql):
    """(rows, None) or (None, error message): the statement's result, all pages read."""
    req = urllib.request.Request(
        server + "/v1/statement", data=sql.encode(), method="POST",
        headers={"X-Trino-User": user, "X-Trino-Catalog": catalog, "X-Trino-Source": "icegate-live"})
    page = _fetch(req)
    rows = []
    while True:
        rows.extend(page.get("data") or [])
        if page.get("error"):
            return None, _message(page["error"])
        nxt = page.get("nextUri")
        if not nxt:
            return rows, None
        page = _fetch(urllib.request.Request(nxt, headers={"X-Trino-User": user}))


def _message(error):
    """Trino's message, then its causes' (where a catalog's own message often is), on one line."""
    parts = [error.get("message", "")]
    cause = (error.get("failureInfo") or {}).get("cause")
    while cause:
        if cause.get("message") and cause["message"] not in parts:
            parts.append(cause["message"])
        cause = cause.get("cause")
    return " ".join(" <- ".join(parts).split())


def show(rows):
    return ";".join(",".join("" if v is None else str(v) for v in row) for row in rows)


def main():
    server, user, catalog, *statements = sys.argv[1:]
    for sql in statements:
        rows, err = run(server, user, catalog, sql)
        print(f"{sql} => " + (f"ERR {err}" if err is not None else f"OK {show(rows)}"), flush=True)


if __name__ == "__main__":
    main()
