"""Transparency, the bytes (tests/e2e/transparency.sh): compares the records of the three taps.

Usage: transparency_bodies.py DIRECT.jsonl CLIENT.jsonl UPSTREAM.jsonl

1. The same calls: the clients made the same requests (method, path, query; a page token is
   opaque), as many times each, and got the same statuses directly as through icegate.
2. The same bodies: each answer the client got through icegate is compared with the upstream's
   answer to the request icegate forwarded for it (the `X-Transparency-Seq` the client tap set
   pairs them). The request body forwarded must be the client's (§7), the answer's status and
   Content-Type the upstream's, its body byte-identical except where docs/design.md rewrites it, and there
   exactly as written:
   - getConfig (§4): `defaults`/`overrides` lose the listed keys, `endpoints` keeps every route
     (the dev catalog serves only spec routes); nothing else changes, members keep their order;
   - lists (§4): entries byte for byte, the upstream's page token sealed (a fresh opaque token,
     which unwraps to the upstream's when the client sends it back), a null token kept as null;
   - credential-bearing answers (§8): every top-level member but `config` and
     `storage-credentials` byte for byte, in order, with the bytes between them; `config` and
     `storage-credentials` exactly as transparency_results' model of §8 says;
   - errors (§7): `stack` removed (the dev catalog sends none, so they are byte-identical).
   Requests icegate makes on its own (existence checks before creates and renames, table loads
   for locations) must be reads (GET or HEAD, or a stage-create that persists nothing).
Prints one line per difference (operation, path, a short diff); exits non-zero on any.
"""
import base64
import collections
import json
import sys
import urllib.parse

from transparency_results import section8_config, section8_storage, table_locations

DIRECT, CLIENT, UPSTREAM = (list(map(json.loads, open(p, encoding="utf-8"))) for p in sys.argv[1:4])
failures = []
counts = collections.Counter()


def fail(exchange, what, detail=""):
    failures.append(f"FAIL {exchange['method']} {exchange['path']} ({exchange['status']}): {what}"
                    + (f"\n       {detail}" if detail else ""))


def body(x):
    return base64.b64decode(x["body"])


def short(b, n=300):
    text = b.decode("utf-8", "replace") if isinstance(b, bytes) else str(b)
    return text if len(text) <= n else text[:n] + "..."


def first_difference(a, b, names=("upstream", "icegate")):
    i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
    return f"at byte {i}: {names[0]} ...{short(a[max(0, i - 40):i + 80])} | {names[1]} ...{short(b[max(0, i - 40):i + 80])}"


def split_target(target):
    path, _, query = target.partition("?")
    return path, urllib.parse.parse_qsl(query, keep_blank_values=True)


def call_shape(x):
    path, query = split_target(x["path"])
    return (x["method"], path, tuple(sorted((k, "<token>" if k == "pageToken" else v) for k, v in query)), x["status"])


# 1. The same calls, directly and through icegate: each (method, path, query, status) as many
# times on both sides. Not in the same order: DuckDB lists a catalog's schemas' tables in
# parallel, so their order varies from run to run.
direct_calls = collections.Counter(map(call_shape, DIRECT))
gate_calls = collections.Counter(map(call_shape, CLIENT))
if direct_calls != gate_calls:
    for shape in sorted(set(direct_calls) | set(gate_calls), key=str):
        if direct_calls[shape] != gate_calls[shape]:
            failures.append(f"FAIL call {shape}: {direct_calls[shape]} times directly, {gate_calls[shape]} through icegate")
else:
    print(f"ok   the clients made the same {len(CLIENT)} calls, with the same statuses, directly and through icegate")


def members(raw):
    """The top-level members of a JSON object: [(key, start, end)] spans of their values in raw."""
    text = raw.decode("utf-8")
    decoder = json.JSONDecoder()
    i = text.index("{") + 1
    out = []
    while True:
        while text[i] in " \t\r\n,":
            i += 1
        if text[i] == "}":
            return text, out
        key, i = decoder.raw_decode(text, i)
        while text[i] in " \t\r\n:":
            i += 1
        _, end = decoder.raw_decode(text, i)
        out.append((key, i, end))
        i = end


def masked(text, spans, keys):
    """text with the values of keys replaced by a marker, the rest as it was."""
    out, at = [], 0
    for key, start, end in spans:
        if key in keys:
            out.append(text[at:start] + f"<{key}>")
            at = end
    return "".join(out) + text[at:]


# getConfig (docs/design.md §4): what `defaults` and `overrides` lose.
CONFIG_REMOVED = {"uri", "token", "namespace-separator", "s3.access-key-id", "s3.secret-access-key",
                  "s3.session-token", "client.access-key-id", "client.secret-access-key", "client.session-token",
                  "gcs.oauth2.token", "s3.signer.uri", "s3.signer.endpoint", "signer.uri", "signer.endpoint"}
READ_HEADERS = {"authorization", "x-gravitino-active-roles"}


def config_key_removed(key):
    if key.lower().startswith("header."):
        return key[7:].strip().lower() in READ_HEADERS
    # Any key naming an address (`*.uri`, `*-uri`, e.g. Nessie's base URIs) goes too:
    # docs/design.md §4, the project's addition to DESIGN.md's getConfig row.
    return (key in CONFIG_REMOVED or key.lower().endswith((".uri", "-uri"))
            or key.startswith(("adls.sas-token.", "adls.auth.shared-key.")))


def check_config(c, u):
    up, got = json.loads(body(u)), json.loads(body(c))
    expected = dict(up)
    for key in ("defaults", "overrides"):
        if isinstance(up.get(key), dict):
            expected[key] = {k: v for k, v in up[key].items() if not config_key_removed(k)}
    # json.loads keeps members in order: the dumps differ when order or content does
    if json.dumps(got) != json.dumps(expected):
        fail(c, "getConfig changed beyond docs/design.md §4, or its members' order changed",
             f"expected {short(json.dumps(expected), 400)}\n       got      {short(json.dumps(got), 400)}")
    counts["getConfig (§4 cleaning)"] += 1


LIST_KEYS = {"namespaces", "identifiers"}
sealed = {}  # the page token the client got -> the upstream's token it seals


def elements(text, start, end):
    """The raw text of each element of the JSON array at text[start:end]."""
    decoder, out, i = json.JSONDecoder(), [], start + 1
    while True:
        while text[i] in " \t\r\n,":
            i += 1
        if i >= end - 1:
            return out
        _, stop = decoder.raw_decode(text, i)
        out.append(text[i:stop])
        i = stop


def check_list(c, pages):
    """pages: the upstream's answers this list was made of, in order. Expected: the first page's
    members as they came, its list holding every page's entries as they came, the last page's
    token sealed (null kept as null, as the spec asks of a last page)."""
    got_text, got = members(body(c))
    expected, entries, token = [], [], None
    for n, page in enumerate(pages):
        text, spans = members(body(page))
        for key, start, end in spans:
            if key == "next-page-token":
                token = json.loads(text[start:end])
                if n == 0:
                    expected.append((key, None))
            elif key in LIST_KEYS:
                entries += elements(text, start, end)
                if n == 0:
                    expected.append((key, "list"))
            elif n == 0:
                expected.append((key, text[start:end]))
    got_token = next((json.loads(got_text[s:e]) for k, s, e in got if k == "next-page-token"), None)
    if (token is None) != (got_token is None):
        fail(c, "list page token present on one side only", f"upstream {token!r}, icegate {got_token!r}")
        return
    if token is not None:
        if got_token == token:
            fail(c, "the upstream's page token reached the client unsealed", token)
        sealed[got_token] = token
    parts = []
    for key, raw in expected:
        if raw == "list":
            raw = "[" + ",".join(entries) + "]"
        elif raw is None:
            raw = json.dumps(got_token)
        parts.append(f"{json.dumps(key)}:{raw}")
    want = ("{" + ",".join(parts) + "}").encode()
    if want != body(c):
        fail(c, "list answer not byte-identical but for its page token", first_difference(want, body(c)))
    counts["list (token sealed)" if token is not None else "list"] += 1


CREDENTIAL_MEMBERS = {"config", "storage-credentials"}
storage_of = {}  # table path -> its locations, from the latest metadata the upstream sent


def credential_table_path(c):
    path, _ = split_target(c["path"])
    parts = path.lstrip("/").split("/")
    if c["method"] == "POST" and parts[-1] in ("tables", "register"):
        name = json.loads(base64.b64decode(c["request_body"]))["name"]
        return "/".join(parts[:-1] + ["tables", name])
    at = parts.index("tables")
    return "/".join(parts[:at + 2])


def check_credentials(c, u):
    table_path = credential_table_path(c)
    up_text, up_spans = members(body(u))
    got_text, got_spans = members(body(c))
    if [k for k, _, _ in up_spans] != [k for k, _, _ in got_spans]:
        fail(c, "members differ", f"upstream {[k for k, _, _ in up_spans]}, icegate {[k for k, _, _ in got_spans]}")
        return
    if masked(up_text, up_spans, CREDENTIAL_MEMBERS) != masked(got_text, got_spans, CREDENTIAL_MEMBERS):
        fail(c, "a member other than config/storage-credentials changed",
             first_difference(masked(up_text, up_spans, CREDENTIAL_MEMBERS).encode(),
                              masked(got_text, got_spans, CREDENTIAL_MEMBERS).encode()))
    up = json.loads(up_text)
    got = json.loads(got_text)
    if "metadata" in up:
        storage_of[table_path] = table_locations(up["metadata"])
    if "config" in up:
        want = section8_config(up["config"], table_path)
        if got.get("config") != want:
            fail(c, "config not rewritten as docs/design.md §8 says",
                 f"expected {json.dumps(want, sort_keys=True)}\n       got      {json.dumps(got.get('config'), sort_keys=True)}")
    if "storage-credentials" in up:
        want = section8_storage(up["storage-credentials"], storage_of.get(table_path, []), table_path)
        if got.get("storage-credentials") != want:
            fail(c, "storage-credentials not rewritten as docs/design.md §8 says",
                 f"expected {json.dumps(want, sort_keys=True)}\n       got      {json.dumps(got.get('storage-credentials'), sort_keys=True)}")
    counts["credential-bearing (§8 rewrite of config/storage-credentials)"] += 1


ROUTE_ROOTS = {"config", "namespaces", "tables", "views", "transactions", "oauth"}


def route(c):
    """The path's segments after `v1` and the prefix, if any (Spark's catalogs use `prod`)."""
    p = split_target(c["path"])[0].lstrip("/").split("/")[1:]
    return p[1:] if p and p[0] not in ROUTE_ROOTS else p


def operation(c):
    p = route(c)
    m = c["method"]
    if p == ["config"]:
        return "config"
    if m == "GET" and (p == ["namespaces"] or (len(p) == 3 and p[2] in ("tables", "views"))):
        return "list"
    credential = (
        (m == "GET" and len(p) == 4 and p[2] == "tables")
        or (m == "POST" and len(p) == 3 and p[2] in ("tables", "register"))
        or (m == "GET" and len(p) == 5 and p[4] == "credentials")
        or (m == "POST" and len(p) == 5 and p[4] == "plan")
        or (m == "GET" and len(p) == 6 and p[4] == "plan"))
    return "credentials" if credential else "other"


METADATA_TABLES = {"entries", "files", "data_files", "delete_files", "history", "metadata_log_entries", "snapshots",
                   "refs", "manifests", "partitions", "position_deletes", "all_data_files", "all_delete_files",
                   "all_entries", "all_files", "all_manifests"}


def metadata_table_probe(c):
    """A loadTable of a metadata-table name in a namespace of two or more levels, which icegate
    answers 404 itself (docs/design.md §4 "Metadata tables": clients then read the metadata
    table of the parent table)."""
    p = route(c)
    return (c["method"] == "GET" and c["status"] == 404 and len(p) == 4 and p[0] == "namespaces" and p[2] == "tables"
            and "%1F" in p[1] and p[3] in METADATA_TABLES
            and json.loads(body(c))["error"]["type"] == "NoSuchTableException")


# 2. The same bodies.
served = collections.defaultdict(list)
for u in UPSTREAM:
    served[u["parent"]].append(u)
own_reads = collections.Counter()
for c in CLIENT:
    ups = served.get(str(c["seq"]), [])
    path, query = split_target(c["path"])
    primary = [u for u in ups if u["method"] == c["method"] and split_target(u["path"])[0] == path]
    for u in ups:
        if u in primary:
            continue
        stage = u["method"] == "POST" and b'"stage-create":true' in base64.b64decode(u["request_body"]).replace(b" ", b"")
        if u["method"] in ("GET", "HEAD") or stage:
            own_reads[f"{u['method']}{' stage-create' if stage else ''}"] += 1
        else:
            fail(c, f"icegate wrote upstream on its own: {u['method']} {u['path']}")
    if not primary:
        if metadata_table_probe(c):
            counts["answered by icegate: a metadata-table probe (§4)"] += 1
        else:
            fail(c, "answered by icegate itself, not forwarded", short(body(c)))
        continue
    u = primary[0]
    token = dict(query).get("pageToken")
    if token:
        sent = dict(split_target(u["path"])[1]).get("pageToken")
        if sealed.get(token) != sent:
            fail(c, "the sealed page token did not unwrap to the upstream's", f"{sealed.get(token)!r} != {sent!r}")
    if u["status"] != c["status"]:
        fail(c, f"status {c['status']}, the upstream answered {u['status']}")
        continue
    if u["request_body"] != c["request_body"]:
        fail(c, "the request body icegate forwarded is not the client's (docs/design.md §7: the authorized bytes are "
                "the bytes forwarded)", first_difference(base64.b64decode(c["request_body"]),
                                                         base64.b64decode(u["request_body"]), ("client", "forwarded")))
    if u["content_type"] != c["content_type"]:
        fail(c, f"Content-Type {c['content_type']!r}, the upstream's {u['content_type']!r}")
    kind = operation(c)
    success = 200 <= c["status"] < 300
    if c["method"] == "HEAD" or c["status"] in (204, 304):
        if body(c) or body(u):
            fail(c, "a body where none belongs", f"upstream {short(body(u))!r}, icegate {short(body(c))!r}")
        counts["no body"] += 1
    elif kind == "config" and success:
        check_config(c, u)
    elif kind == "list" and success:
        check_list(c, primary)
    elif kind == "credentials" and success:
        check_credentials(c, u)
    elif not success and b'"stack"' in body(u):
        up = json.loads(body(u))
        up["error"].pop("stack", None)
        if json.loads(body(c)) != up:
            fail(c, "error changed beyond its stack", f"upstream {short(body(u))}\n       icegate  {short(body(c))}")
        counts["error (stack removed)"] += 1
    else:
        if body(c) != body(u):
            fail(c, "body not byte-identical", first_difference(body(u), body(c)))
        counts["byte-identical" + ("" if success else " (error)")] += 1

for line in failures[:30]:
    print(line)
if len(failures) > 30:
    print(f"FAIL ... and {len(failures) - 30} more")
print(f"{'ok  ' if not failures else 'FAIL'} bodies: {len(CLIENT)} answers through icegate against {len(UPSTREAM)} upstream "
      f"exchanges: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
print(f"     icegate's own upstream requests: " + (", ".join(f"{n} {k}" for k, n in sorted(own_reads.items())) or "none")
      + f"; {sum(1 for u in UPSTREAM if u['parent'] is None)} not on a client's behalf (readiness, getConfig probes)")
sys.exit(1 if failures else 0)
