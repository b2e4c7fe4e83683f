"""End to end: icegate's handling of vended credentials and remote signing (docs/design.md §8).

Usage: credentials.py --catalog0 URL --catalog1 URL --gate NAME=URL ... [--log NAME=FILE ...]
(started by tests/e2e/credentials.sh). The dev catalogs run with `--vend`: catalog0 with
tests/e2e/vend.json (`always: false`: it vends only when `X-Iceberg-Access-Delegation` asks),
catalog1 with the same file and `always: true`. The icegates, all on
tests/e2e/credentials-policy.yaml, each with its own namespace:

  A  catalog0, strip-broader, no public_url, no prefix          namespace `a`
     (its sign requests' path-style endpoint http://127.0.0.1:9000 in [credentials.signing])
  B  catalog1, strip-broader, public_url, prefix `prod`          namespace `b`
  C  catalog1, strip, no prefix                                  namespace `c`
  D  catalog1, passthrough, no prefix                            namespace `d`

Every credential-bearing operation (loadTable, createTable, stage-create, registerTable,
loadCredentials with and without planId, planTableScan, fetchPlanningResult) is checked for the
unnarrowed writer and the caller narrowed to a read role (createTable and registerTable are
always WRITE, so their removal is checked in strip mode, and the narrowed create is a 403);
remote signing is checked on A, against the dev catalog's /dev/sign-log.
One line per check; exits non-zero on any failure.
"""
import argparse
import base64
import json
import sys
import time
import urllib.error
import urllib.request

started = time.monotonic()
parser = argparse.ArgumentParser()
parser.add_argument("--catalog0", required=True)
parser.add_argument("--catalog1", required=True)
parser.add_argument("--gate", action="append", default=[], help="NAME=URL")
parser.add_argument("--log", action="append", default=[], help="NAME=FILE (icegate's stdout, for the audit)")
args = parser.parse_args()
GATES = dict(g.split("=", 1) for g in args.gate)
LOGS = dict(g.split("=", 1) for g in args.log)
PUBLIC_URL = "https://icegate.example/lake"  # credentials.public_url of B (credentials.sh)

failures = 0
checks = 0


def step(label, ok, detail=""):
    global failures, checks
    checks += 1
    print(f"{'ok  ' if ok else 'FAIL'} {label}{(': ' + detail) if detail and not ok else ''}", flush=True)
    if not ok:
        failures += 1
    return ok


# ---------------------------------------------------------------------------------------------
# HTTP


class Reply:
    def __init__(self, status, headers, raw):
        self.status, self.headers, self.raw = status, headers, raw
        try:
            self.json = json.loads(raw) if raw else None
        except ValueError:
            self.json = None

    def error_type(self):
        return ((self.json or {}).get("error") or {}).get("type")

    def __repr__(self):
        return f"{self.status} {self.raw[:300].decode(errors='replace')}"


def http(method, url, body=None, headers=None):
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    h = dict(headers or {})
    if data is not None:
        h.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return Reply(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Reply(e.code, e.headers, e.read())


def basic(user):
    return "Basic " + base64.b64encode(f"{user}:pw".encode()).decode()


SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
DELEGATION = "X-Iceberg-Access-Delegation"


class Gate:
    """One icegate configuration and the namespace its checks use."""

    def __init__(self, name, catalog, ns, mode, prefix=None, public=None, always=False):
        self.name, self.url, self.catalog, self.ns = name, GATES[name], catalog, ns
        self.mode, self.prefix, self.public, self.always = mode, prefix, public, always

    def table_path(self, table):
        """icegate's path of the table, as written into responses (no leading slash)."""
        p = f"{self.prefix}/" if self.prefix else ""
        return f"v1/{p}namespaces/{self.ns}/tables/{table}"

    def credentials_endpoint(self, table):
        rel = f"{self.table_path(table)}/credentials"
        return f"{self.public}/{rel}" if self.public else rel

    def sign_endpoint(self, table):
        return f"{self.table_path(table)}/sign"

    def call(self, method, rest, user, roles=None, body=None, delegation="vended-credentials", extra=None):
        p = f"{self.prefix}/" if self.prefix else ""
        headers = {"Authorization": basic(user)}
        if roles is not None:
            headers["X-Gravitino-Active-Roles"] = roles
        if delegation is not None:
            headers[DELEGATION] = delegation
        headers.update(extra or {})
        return http(method, f"{self.url}/v1/{p}namespaces/{self.ns}/{rest}", body, headers)

    def admin(self, method, rest, body=None):
        """Straight to the catalog, as its administrator (no icegate)."""
        return http(method, f"{self.catalog}/v1/namespaces/{self.ns}{rest}", body)

    def setup(self):
        """The namespace, `shared` (with an S3 `write.data.path`) and `plain` (file:// only), made
        at the catalog: no icegate caller owns them (ownership would keep narrowed scopes WRITE)."""
        r = http("POST", f"{self.catalog}/v1/namespaces", {"namespace": [self.ns]})
        assert r.status == 200, r
        self.data_path = f"s3://bucket/wh/{self.ns}/shared/data"
        for table, props in [("shared", {"write.data.path": self.data_path}), ("plain", {})]:
            r = self.admin("POST", "/tables", {"name": table, "schema": SCHEMA, "properties": props})
            assert r.status == 200, r
        r = self.admin("GET", "/tables/shared")
        assert r.status == 200, r
        self.location = r.json["metadata"]["location"]
        self.metadata_location = r.json["metadata-location"]


# ---------------------------------------------------------------------------------------------
# What the vend file hands out, and what must be left of it

# Secret-bearing keys of tests/e2e/vend.json's `config`: none may survive a removal.
SECRET_KEYS = [
    "s3.access-key-id", "s3.secret-access-key", "s3.session-token", "S3.Secret-Access-Key", "s3.secret-key",
    "my.custom.secret", "gcs.oauth2.token", "adls.sas-token.acct", "client.access-key-id", "token",
]
REFRESH_KEYS = ["client.refresh-credentials-endpoint", "gcs.oauth2.refresh-credentials-endpoint",
                "adls.refresh-credentials-endpoint"]
# Non-secret keys kept on removal (`e2e.public.extra` is in `allowed_config_keys`).
KEPT_ON_REMOVAL = {"client.region": "eu-west-1", "s3.endpoint": "http://127.0.0.1:9", "s3.path-style-access": "true",
                   "e2e.public.extra": "kept-by-allowed-config-keys"}


def expected_entries(location, data_path=None):
    """The storage credentials under the table's locations: `{location}` (AKIA-TABLE) and, when
    the table's `write.data.path` is the vend file's data prefix, AKIA-DATA. The decoys
    (`s3://bucket/`, `file:///`, `{location}-sibling`) are not under any location."""
    out = {(location, "AKIA-TABLE")}
    if data_path:
        out.add((data_path, "AKIA-DATA"))
    return out


def check_signer(label, gate, table, config):
    ok = step(f"{label}: s3.signer.endpoint rewritten to icegate's table-scoped signer",
              config.get("s3.signer.endpoint") == gate.sign_endpoint(table), str(config.get("s3.signer.endpoint")))
    if gate.public:
        ok &= step(f"{label}: s3.signer.uri is icegate's public_url", config.get("s3.signer.uri") == gate.public,
                   str(config.get("s3.signer.uri")))
    else:
        ok &= step(f"{label}: s3.signer.uri removed (no public_url: the client's catalog URI is icegate)",
                   "s3.signer.uri" not in config, str(config.get("s3.signer.uri")))
    return ok


def check_kept(label, gate, table, reply, entries, has_config):
    """The upstream's credentials pass, with `token`, foreign prefixes and endpoints handled."""
    if not step(f"{label}: 200", reply.status == 200, repr(reply)):
        return
    step(f"{label}: Cache-Control: no-store", reply.headers.get("Cache-Control") == "no-store",
         str(reply.headers.get("Cache-Control")))
    body = reply.json
    if has_config:
        config = body.get("config") or {}
        step(f"{label}: vended config credentials kept (s3.access-key-id, s3.secret-access-key)",
             config.get("s3.access-key-id") == "AKIA-UPSTREAM" and config.get("s3.secret-access-key") == "upstream-secret",
             json.dumps(config))
        step(f"{label}: `token` removed from config", "token" not in config, json.dumps(config))
        want = gate.credentials_endpoint(table)
        bad = {k: config.get(k) for k in REFRESH_KEYS if config.get(k) != want}
        step(f"{label}: refresh endpoints rewritten to icegate's {want}", not bad, json.dumps(bad))
        check_signer(label, gate, table, config)
    creds = body.get("storage-credentials") or []
    got = {(c.get("prefix"), (c.get("config") or {}).get("s3.access-key-id")) for c in creds}
    step(f"{label}: storage-credentials are exactly the table's (decoys s3://bucket/, file:///, sibling removed)",
         got == entries, f"got {sorted(got, key=str)}, want {sorted(entries)}")
    table_entry = next((c for c in creds if (c.get("config") or {}).get("s3.access-key-id") == "AKIA-TABLE"), None)
    if table_entry is not None:
        c = table_entry["config"]
        step(f"{label}: the table's storage credential keeps its secret, loses its `token`, refresh rewritten",
             c.get("s3.secret-access-key") == "table-secret" and "token" not in c
             and c.get("client.refresh-credentials-endpoint") == gate.credentials_endpoint(table), json.dumps(c))


def check_removed(label, gate, table, reply, has_config, vended):
    """Nothing secret is left. `vended`: the upstream's answer held the vend file's config (then
    its non-secret keys survive); otherwise none of it, i.e. the upstream did not vend."""
    if not step(f"{label}: 200", reply.status == 200, repr(reply)):
        return
    step(f"{label}: Cache-Control: no-store", reply.headers.get("Cache-Control") == "no-store",
         str(reply.headers.get("Cache-Control")))
    body = reply.json
    creds = body.get("storage-credentials")
    step(f"{label}: storage-credentials empty", not creds, json.dumps(creds))
    if not has_config:
        return
    config = body.get("config") or {}
    left = [k for k in SECRET_KEYS + REFRESH_KEYS if k in config]
    step(f"{label}: no secret key in config (mixed-case, *.secret*, gcs/adls tokens, client.*, token, refresh)",
         not left, f"left: {left}")
    if vended:
        kept = {k: config.get(k) for k in KEPT_ON_REMOVAL}
        step(f"{label}: client.region, s3.endpoint, s3.path-style-access and the configured extra kept",
             kept == KEPT_ON_REMOVAL, json.dumps(kept))
        check_signer(label, gate, table, config)
    else:
        foreign = [k for k in config if k in KEPT_ON_REMOVAL or k.startswith("s3.signer")]
        step(f"{label}: the upstream vended nothing (X-Iceberg-Access-Delegation did not reach it)",
             not foreign, json.dumps(config))


def forbidden(label, reply):
    step(label, reply.status == 403 and reply.error_type() == "ForbiddenException", repr(reply))


# ---------------------------------------------------------------------------------------------
# The operations


def load(g, user, roles=None, table="shared", **kw):
    return g.call("GET", f"tables/{table}", user, roles, **kw)


def load_credentials(g, user, roles=None, plan_id=None, table="shared"):
    return g.call("GET", f"tables/{table}/credentials" + (f"?planId={plan_id}" if plan_id else ""), user, roles)


def plan(g, user, roles=None, table="shared"):
    return g.call("POST", f"tables/{table}/plan", user, roles, body={})


def fetch_plan(g, user, plan_id, roles=None, table="shared"):
    return g.call("GET", f"tables/{table}/plan/{plan_id}", user, roles)


def create(g, user, name, roles=None, stage=False, props=None):
    body = {"name": name, "schema": SCHEMA, "properties": props or {}}
    if stage:
        body["stage-create"] = True
    return g.call("POST", "tables", user, roles, body=body)


def register(g, user, name, roles=None):
    return g.call("POST", "register", user, roles, body={"name": name, "metadata-location": g.metadata_location})


def location_of(reply):
    return ((reply.json or {}).get("metadata") or {}).get("location")


def every_operation(g, user, roles, expect, creates=True):
    """Runs the credential-bearing operations as `user`/`roles` on `g`; `expect(label, table,
    reply, entries, has_config)` checks each answer."""
    who = f"[{g.name} {g.mode}] {user}" + (f" narrowed to {roles}" if roles else " unnarrowed")
    shared = expected_entries(g.location, g.data_path)
    expect(f"{who} loadTable", "shared", load(g, user, roles), shared, True)
    expect(f"{who} loadCredentials", "shared", load_credentials(g, user, roles), shared, False)
    r = plan(g, user, roles)
    plan_id = (r.json or {}).get("plan-id")
    expect(f"{who} planTableScan", "shared", r, shared, False)
    if step(f"{who} planTableScan returned a plan-id", bool(plan_id), repr(r)):
        expect(f"{who} fetchPlanningResult", "shared", fetch_plan(g, user, plan_id, roles), shared, False)
        expect(f"{who} loadCredentials?planId", "shared", load_credentials(g, user, roles, plan_id), shared, False)
    if not creates:
        return
    tag = (roles or "all").replace(",", "_")
    name = f"created_{user}_{tag}"
    r = create(g, user, name, roles)
    expect(f"{who} createTable", name, r, expected_entries(location_of(r)), True)
    name = f"staged_{user}_{tag}"
    r = create(g, user, name, roles, stage=True)
    expect(f"{who} createTable stage-create", name, r, expected_entries(location_of(r)), True)


def owner_operations(g, roles, expect):
    """What needs `TOP ∨ SOUC` (docs/design.md §4), done by olga, who owns the catalog: registerTable,
    and createTable with a location property (`write.data.path`, so that the vend file's AKIA-DATA
    prefix is one of the new table's locations). Both have scope WRITE. The registered table's
    location is shared's; its own name makes AKIA-DATA's prefix foreign there."""
    tag = roles or "all"
    who = f"[{g.name} {g.mode}] olga (owner)" + (f" narrowed to {roles}" if roles else " unnarrowed")
    name = f"registered_{tag}"
    r = register(g, "olga", name, roles)
    expect(f"{who} registerTable", name, r, expected_entries(g.location), True)
    name = f"placed_{tag}"
    data = f"s3://bucket/wh/{g.ns}/{name}/data"
    r = create(g, "olga", name, roles, props={"write.data.path": data})
    expect(f"{who} createTable with write.data.path", name, r, expected_entries(location_of(r), data), True)


def main():
    cat0, cat1 = args.catalog0, args.catalog1
    a = Gate("A", cat0, "a", "strip-broader")
    b = Gate("B", cat1, "b", "strip-broader", prefix="prod", public=PUBLIC_URL, always=True)
    c = Gate("C", cat1, "c", "strip", always=True)
    d = Gate("D", cat1, "d", "passthrough", always=True)
    for g in (a, b, c, d):
        g.setup()

    def kept(g):
        return lambda label, table, reply, entries, has_config: check_kept(label, g, table, reply, entries, has_config)

    def removed(g, vended):
        return lambda label, table, reply, entries, has_config: check_removed(label, g, table, reply, has_config,
                                                                             vended)

    # --- A: strip-broader, the catalog vends only when asked (always: false) ------------------
    r = load(a, "dana", delegation=None)
    step("[A] control: without X-Iceberg-Access-Delegation the dev catalog vends nothing",
         r.status == 200 and not (r.json.get("config") or {}).get("s3.access-key-id")
         and not r.json.get("storage-credentials"), repr(r))
    every_operation(a, "dana", None, kept(a))
    owner_operations(a, None, kept(a))
    every_operation(a, "dana", "writer", kept(a), creates=False)  # narrowed, but still WRITE
    # Narrowed to the read role: scope READ < WRITE. The catalog vends nothing on loadTable (the
    # header was removed); loadCredentials and planning always carry credentials: icegate empties them.
    every_operation(a, "dana", "reader", removed(a, vended=False), creates=False)
    r = load(a, "dana", "reader", delegation="remote-signing, VENDED-CREDENTIALS")
    check_removed("[A] dana narrowed to reader, delegation header in another spelling: loadTable", a, "shared", r,
                  True, vended=False)
    forbidden("[A] dana narrowed to reader cannot createTable (403)", create(a, "dana", "nope", "reader"))
    forbidden("[A] dana narrowed to reader cannot stage-create (403)", create(a, "dana", "nope2", "reader", True))
    # rita holds only the read role: READ either way, so strip-broader has nothing to strip.
    check_kept("[A] rita (reader only, unnarrowed) loadTable", a, "shared", load(a, "rita"),
               expected_entries(a.location, a.data_path), True)
    pyiceberg_checks(a)
    signing(a)
    audit(a)

    # --- B: strip-broader, the catalog always vends; icegate's own rewriting, public_url, prefix --
    every_operation(b, "dana", None, kept(b))
    owner_operations(b, None, kept(b))
    every_operation(b, "dana", "reader", removed(b, vended=True), creates=False)
    r = load(b, "dana", "reader", delegation=None)
    check_removed("[B] dana narrowed to reader, no delegation header: loadTable", b, "shared", r, True, vended=True)

    # --- C: strip: never handed out, not even to the unnarrowed writer -------------------------
    every_operation(c, "dana", None, removed(c, vended=True))
    owner_operations(c, None, removed(c, vended=True))

    # --- D: passthrough: the narrowed caller keeps them (still filtered and rewritten) ---------
    every_operation(d, "dana", "reader", kept(d), creates=False)
    every_operation(d, "dana", None, kept(d))


def pyiceberg_checks(g):
    """PyIceberg sends `X-Iceberg-Access-Delegation: vended-credentials` by default; what reaches
    its FileIO is the table response's config."""
    try:
        from pyiceberg.catalog import load_catalog
    except ImportError as e:
        step("[A] pyiceberg importable", False, str(e))
        return

    def io_props(user, roles=None):
        props = {"type": "rest", "uri": g.url, "auth": {"type": "basic", "basic": {"username": user, "password": "x"}}}
        if roles:
            props["header.X-Gravitino-Active-Roles"] = roles
        return dict(load_catalog(f"cred-{user}-{roles}", **props).load_table(f"{g.ns}.shared").io.properties)

    try:
        p = io_props("dana")
        # PyIceberg puts the longest matching storage credential (the table's) over the config.
        step("[A] pyiceberg as dana: the FileIO gets the vended keys, not a decoy's, no `token`",
             p.get("s3.access-key-id") in ("AKIA-TABLE", "AKIA-UPSTREAM") and p.get("token") != "upstream-catalog-token",
             json.dumps({k: p.get(k) for k in ("s3.access-key-id", "token")}))
        p = io_props("dana", "reader")
        left = [k for k in SECRET_KEYS if k in p and k != "token"]
        step("[A] pyiceberg as dana narrowed to reader: the FileIO gets no credential", not left, f"left: {left}")
    except Exception as e:  # noqa: BLE001 - report what PyIceberg raised
        step("[A] pyiceberg loads the table through icegate", False, f"{type(e).__name__}: {e}")


def signing(g):
    """signRequest: method-by-scope and location checks; refused requests never reach the upstream."""
    http("DELETE", f"{g.catalog}/dev/sign-log")
    forwarded = []  # (method, uri) the upstream must have received, in order

    def sign(label, user, roles, method, uri, allowed, body=None, table="shared", provider=None):
        req = {"region": "us-east-1", "uri": uri, "method": method,
               "headers": {"Host": [uri.split("/")[2]], "User-Agent": ["e2e"]}}
        if body is not None:
            req["body"] = body
        if provider is not None:
            req["provider"] = provider
        r = g.call("POST", f"tables/{table}/sign", user, roles, body=req, delegation=None)
        if allowed:
            auth = ((r.json or {}).get("headers") or {}).get("Authorization") or [""]
            step(f"[{g.name}] sign: {label}: signed (200)", r.status == 200 and "dev-catalog-fake-signature" in auth[0],
                 repr(r))
            forwarded.append((method, uri))
        else:
            forbidden(f"[{g.name}] sign: {label}: refused (403)", r)

    s3 = "https://bucket.s3.amazonaws.com"
    path_style = "http://127.0.0.1:9000/bucket"
    ns = g.ns
    inside = f"{s3}/wh/{ns}/shared/data/f1.parquet"
    sign("reader-narrowed GET of a data file (virtual-hosted)", "dana", "reader", "GET", inside, True)
    sign("reader-narrowed HEAD (path-style)", "dana", "reader", "HEAD", f"{path_style}/wh/{ns}/shared/data/f2.parquet",
         True)
    sign("reader-narrowed listing of the data prefix", "dana", "reader", "GET",
         f"{path_style}/?list-type=2&prefix=wh%2F{ns}%2Fshared%2Fdata%2F", True)
    sign("reader-narrowed PUT", "dana", "reader", "PUT", f"{s3}/wh/{ns}/shared/data/new.parquet", False)
    sign("reader-narrowed DELETE", "dana", "reader", "DELETE", inside, False)
    sign("reader-narrowed POST (multipart)", "dana", "reader", "POST", f"{s3}/wh/{ns}/shared/data/n?uploads", False)
    sign("reader-only rita PUT", "rita", None, "PUT", f"{s3}/wh/{ns}/shared/data/new.parquet", False)
    sign("writer PUT inside the table", "dana", None, "PUT", f"{s3}/wh/{ns}/shared/data/new.parquet", True)
    sign("writer GET of another table's path", "dana", None, "GET", f"{s3}/wh/{ns}/other/data/f", False)
    sign("writer GET of a sibling prefix (data-x)", "dana", None, "GET", f"{s3}/wh/{ns}/shared/data-x/f", False)
    sign("writer GET with ../ out of the table", "dana", None, "GET", f"{s3}/wh/{ns}/shared/data/../../other/f", False)
    sign("writer GET in another bucket", "dana", None, "GET",
         f"https://other.s3.amazonaws.com/wh/{ns}/shared/data/f", False)
    sign("writer PUT of another table's path (path-style)", "dana", None, "PUT", f"{path_style}/wh/{ns}/plain/f",
         False)
    sign("writer listing of the bucket's namespace prefix", "dana", None, "GET",
         f"{path_style}/?list-type=2&prefix=wh%2F{ns}%2F", False)
    sign("a method outside the list (OPTIONS)", "dana", None, "OPTIONS", inside, False)
    sign("a lower-case method (get)", "dana", None, "get", inside, False)
    sign("provider gcs", "dana", None, "GET", inside, False, provider="gcs")

    def delete_body(keys):
        objects = "".join(f"<Object><Key>{k}</Key></Object>" for k in keys)
        return ('<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                f"{objects}<Quiet>true</Quiet></Delete>")

    ok_keys = [f"wh/{ns}/shared/data/a.parquet", f"wh/{ns}/shared/data/b.parquet"]
    sign("writer batch delete of two keys inside", "dana", None, "POST", f"{path_style}/?delete", True,
         body=delete_body(ok_keys))
    sign("writer batch delete with one key outside", "dana", None, "POST", f"{path_style}/?delete", False,
         body=delete_body(ok_keys[:1] + [f"wh/{ns}/other/c.parquet"]))
    sign("reader-narrowed batch delete inside", "dana", "reader", "POST", f"{path_style}/?delete", False,
         body=delete_body(ok_keys))
    sign("writer GET in a table olga created through icegate with write.data.path", "dana", None, "GET",
         f"{s3}/wh/{ns}/placed_all/data/f.parquet", True, table="placed_all")
    sign("writer GET of shared's data path through the new table", "dana", None, "GET", inside, False,
         table="placed_all")
    sign("a table with no S3 location", "dana", None, "GET", f"{s3}/wh/{ns}/plain/f", False, table="plain")

    r = http("POST", f"{g.url}/v1/aws/s3/sign",
             {"region": "us-east-1", "uri": inside, "method": "GET", "headers": {}},
             {"Authorization": basic("dana")})
    forbidden(f"[{g.name}] sign: the legacy POST /v1/aws/s3/sign is refused (403)", r)

    r = http("GET", f"{g.catalog}/dev/sign-log")
    got = [(e.get("method"), e.get("uri")) for e in (r.json or [])]
    step(f"[{g.name}] sign: the upstream received exactly the {len(forwarded)} allowed sign requests, in order",
         got == forwarded, f"got {got}, want {forwarded}")


def audit(g):
    """icegate's audit line says what it did with each response's credentials."""
    path = LOGS.get(g.name)
    if not path:
        return
    # icegate writes audit lines in batches, just after the responses, when its thread goes
    # idle: the last request's line may land a moment after its response did.
    deadline = time.monotonic() + 3
    while True:
        seen = set()
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict) and rec.get("operation") == "loadTable" and rec.get("user") == "dana":
                    seen.add((rec.get("active_roles_header"), rec.get("credential")))
        if {(None, "kept"), ("reader", "stripped")} <= seen or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    step(f"[{g.name}] audit: dana's unnarrowed loadTable is `kept`, narrowed to reader `stripped`",
         (None, "kept") in seen and ("reader", "stripped") in seen, str(sorted(seen, key=str)))


main()
print(f"{checks - failures} passed, {failures} failed ({time.monotonic() - started:.1f} s)")
sys.exit(1 if failures else 0)
