"""End to end: `credentials.mode = "s3-downscope"` against moto's S3 and STS (docs/design.md §8).

Usage: downscope.py --moto URL --recorder URL --bucket NAME
                    --gate NAME=URL --catalog NAME=URL --warehouse NAME=DIR --log NAME=FILE ...
(started by tests/e2e/downscope.sh). Both dev catalogs vend broad upstream keys
(`AKIA-UPSTREAM-BROAD` and three `storage-credentials`) with `s3.endpoint` at moto: catalog `a`
on every load, catalog `b` only when asked. The icegates `a` and `b` in front of them (policy
tests/e2e/downscope-policy.yaml) assume arn:aws:iam::123456789012:role/icegate-table-access-{a,b}
at moto's STS, through a recorder that keeps what icegate sent (moto keeps the session policy but
not the tags).

The reference catalog has no S3 FileIO, so the tables' metadata stays on the `file://` warehouse
and their data goes to `s3://BUCKET/wh/<namespace>/<table>/data` through `write.data.path`:
PyIceberg writes and reads the Parquet files on moto itself, with the credentials icegate returned.

  a  db.t      made at the catalog (nobody owns it); dana (reader + writer) appends through icegate
               unnarrowed (WRITE mint), then reads narrowed to `reader` (READ mint); loadCredentials
               and scan planning narrowed
     db.t2     created through icegate by olga (she owns the catalog: createTable with a location
               property needs it), with `write.data.path`: the createTable answer carries a WRITE mint
     db.plain  file:// only: nothing to mint, nothing handed out
  b  nb.t      as db.t, but the upstream is not asked to vend (icegate removes
               `X-Iceberg-Access-Delegation`), so the minted credentials are all the answer holds;
               the client configures the S3 endpoint itself

moto does not enforce session policies on S3 (its IAM checks, when enabled, look at the role's
own policies only), so the READ credentials could write there too: the read-only property is
shown by the session policy document icegate sent, checked statement by statement, not by a
refused write.
One line per check; exits non-zero on any failure.
"""
import argparse
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.request

import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

started = time.monotonic()
parser = argparse.ArgumentParser()
for flag in ["moto", "recorder", "bucket"]:
    parser.add_argument(f"--{flag}", required=True)
for flag in ["gate", "catalog", "warehouse", "log"]:
    parser.add_argument(f"--{flag}", action="append", default=[], help="NAME=VALUE")
args = parser.parse_args()
MOTO, RECORDER, BUCKET = args.moto, args.recorder, args.bucket


def named(values):
    return dict(v.split("=", 1) for v in values)


GATES, CATALOGS, WAREHOUSES, LOGS = named(args.gate), named(args.catalog), named(args.warehouse), named(args.log)
ROLE_ARN = "arn:aws:iam::123456789012:role/icegate-table-access-{}"  # credentials.sts.role_arn (downscope.sh)
DURATION = 3600  # credentials.sts.duration_seconds, the default
# Every string of the vend files that must not reach a caller (downscope.sh).
UPSTREAM_SECRETS = ["AKIA-UPSTREAM", "upstream-broad-secret", "upstream-broad-session-token", "upstream-bucket-secret",
                    "upstream-data-secret", "upstream-catalog-token", "upstream.invalid"]
# The allow-listed keys of the vend files, kept when the upstream vends.
KEPT = {"s3.endpoint": MOTO, "s3.path-style-access": "true", "client.region": "us-east-1"}
READ_ACTIONS = {"s3:GetObject", "s3:GetObjectVersion"}
WRITE_ACTIONS = {"s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"}

failures = 0
checks = 0


def step(label, ok, detail=""):
    global failures, checks
    checks += 1
    print(f"{'ok  ' if ok else 'FAIL'} {label}{(': ' + detail) if detail and not ok else ''}", flush=True)
    if not ok:
        failures += 1
    return ok


class Reply:
    def __init__(self, status, headers, raw):
        self.status, self.headers, self.raw = status, headers, raw
        try:
            self.json = json.loads(raw) if raw else None
        except ValueError:
            self.json = None

    def __repr__(self):
        return f"{self.status} {self.raw[:300].decode(errors='replace')}"


def http(method, url, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    h = dict(headers or {})
    if data is not None:
        h.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return Reply(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Reply(e.code, e.headers, e.read())


def get_json(url):
    r = http("GET", url)
    assert r.status == 200, f"GET {url}: {r!r}"
    return r.json


class Gate:
    """One icegate, its catalog, and the namespace its tables are in."""

    def __init__(self, name, ns, upstream_vends):
        self.name, self.ns, self.upstream_vends = name, ns, upstream_vends
        self.url, self.catalog_url = GATES[name], CATALOGS[name]
        self.warehouse, self.log = WAREHOUSES[name], LOGS[name]
        self.role_arn = ROLE_ARN.format(name)

    def call(self, method, rest, user, roles=None, delegation=True, body=None):
        headers = {"Authorization": "Basic " + base64.b64encode(f"{user}:pw".encode()).decode()}
        if roles is not None:
            headers["X-Gravitino-Active-Roles"] = roles
        if delegation:
            headers["X-Iceberg-Access-Delegation"] = "vended-credentials"
        return http(method, f"{self.url}/v1/namespaces/{self.ns}/{rest}", body, headers)

    def pyiceberg(self, user, roles=None):
        props = {"type": "rest", "uri": self.url,
                 "auth": {"type": "basic", "basic": {"username": user, "password": "x"}}}
        if roles is not None:
            props["header.X-Gravitino-Active-Roles"] = roles
        if not self.upstream_vends:
            # Nothing tells the client where S3 is: it says so itself.
            props.update({"s3.endpoint": MOTO, "s3.region": "us-east-1"})
        return load_catalog(f"downscope-{self.name}-{user}-{roles}", **props)

    def data_path(self, table):
        return f"s3://{BUCKET}/wh/{self.ns}/{table}/data"

    def admin_setup(self, tables):
        """The namespace and `tables` ({name: properties}), made at the catalog as its
        administrator (not through icegate): nobody owns them."""
        r = http("POST", f"{self.catalog_url}/v1/namespaces", {"namespace": [self.ns]})
        assert r.status == 200, r
        schema = {"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "type": "long", "required": False},
            {"id": 2, "name": "item", "type": "string", "required": False}]}
        for name, props in tables.items():
            r = http("POST", f"{self.catalog_url}/v1/namespaces/{self.ns}/tables",
                     {"name": name, "schema": schema, "properties": props})
            assert r.status == 200, r

    def audit(self):
        """The audit records of credential-bearing requests."""
        out = []
        with open(self.log, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict) and rec.get("credential") is not None:
                    out.append(rec)
        return out


def assumed_roles():
    """moto's own record of every AssumeRole: access key, session name, role, session policy."""
    return {r["access_key_id"]: r for r in get_json(f"{RECORDER}/assumed-roles")}


def recorded_calls():
    """What icegate sent to STS, as the recorder in front of moto saw it."""
    return get_json(f"{RECORDER}/recorded")


def s3_keys(prefix):
    return get_json(f"{RECORDER}/objects?prefix={prefix}")


SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "item", StringType(), required=False))


def rows(ids):
    return pa.table({"id": pa.array(ids, pa.int64()), "item": pa.array([f"item-{i}" for i in ids])})


def sorted_rows(table):
    return sorted(zip(table.column("id").to_pylist(), table.column("item").to_pylist()))


# ---------------------------------------------------------------------------------------------
# What icegate returned


def check_minted_keys(label, io):
    """A FileIO's (or config's) keys are one AssumeRole's, exactly as moto minted them."""
    minted_by_moto = assumed_roles()
    key = io.get("s3.access-key-id") or ""
    ok = step(f"{label}: s3.access-key-id is moto-minted (ASIA...), not the upstream's",
              key.startswith("ASIA") and key in minted_by_moto, key)
    if ok:
        m = minted_by_moto[key]
        step(f"{label}: secret and session token are the ones moto minted for it",
             io.get("s3.secret-access-key") == m["secret_access_key"] and io.get("s3.session-token") == m["session_token"],
             json.dumps({k: io.get(k) for k in ("s3.secret-access-key", "s3.session-token")}))
    return key


def nothing_upstream(label, reply):
    left = [s for s in UPSTREAM_SECRETS if s in reply.raw.decode()]
    step(f"{label}: no upstream key, secret, token or endpoint anywhere in the response", not left, f"found {left}")


def check_response(g, label, reply, table, cached_key=None):
    """A loadTable answer: config and storage-credentials carry one minted key, nothing upstream."""
    if not step(f"{label}: 200", reply.status == 200, repr(reply)):
        return None
    step(f"{label}: Cache-Control: no-store", reply.headers.get("Cache-Control") == "no-store",
         str(reply.headers.get("Cache-Control")))
    nothing_upstream(label, reply)
    config = reply.json.get("config") or {}
    key = check_minted_keys(f"{label} config", config)
    if cached_key is not None:
        step(f"{label}: the same credentials as the cached mint for this caller and scope", key == cached_key,
             f"{key} != {cached_key}")
    expires = int(config.get("s3.session-token-expires-at-ms") or 0)
    now_ms = time.time() * 1000
    step(f"{label}: s3.session-token-expires-at-ms is the mint's expiry (about {DURATION} s ahead)",
         now_ms + (DURATION - 300) * 1000 < expires <= now_ms + (DURATION + 60) * 1000, str(expires))
    step(f"{label}: `token` not in config", "token" not in config, json.dumps(config))
    kept = {k: config.get(k) for k in KEPT}
    if g.upstream_vends:
        step(f"{label}: s3.endpoint (moto), s3.path-style-access and client.region kept", kept == KEPT, json.dumps(kept))
        want = f"v1/namespaces/{g.ns}/tables/{table}/credentials"
        step(f"{label}: client.refresh-credentials-endpoint rewritten to icegate's {want}",
             config.get("client.refresh-credentials-endpoint") == want,
             str(config.get("client.refresh-credentials-endpoint")))
    else:
        minted = {"s3.access-key-id", "s3.secret-access-key", "s3.session-token", "s3.session-token-expires-at-ms"}
        step(f"{label}: the upstream was not asked to vend (none of its allow-listed keys), config is the minted keys",
             set(config) == minted, json.dumps(sorted(config)))
    check_storage_credentials(g, label, reply.json, table, key)
    return key


def check_storage_credentials(g, label, body, table, key):
    """One entry per S3 location of the table (its `location` is file://, so only the data path),
    with the minted keys; the upstream's three entries are gone."""
    creds = body.get("storage-credentials") or []
    got = [(c.get("prefix"), (c.get("config") or {}).get("s3.access-key-id")) for c in creds]
    step(f"{label}: storage-credentials are exactly [{g.data_path(table)} -> the minted key]",
         got == [(g.data_path(table), key)], str(got))
    if len(creds) == 1:
        c = creds[0]["config"]
        m = assumed_roles().get(key) or {}
        step(f"{label}: the storage credential carries the minted secret and session token",
             c.get("s3.secret-access-key") == m.get("secret_access_key") and c.get("s3.session-token") == m.get("session_token"),
             json.dumps(c))


def check_data_files(label, g, table, ntotal):
    """PyIceberg wrote `table`'s data files to moto's S3 under its `write.data.path`."""
    files = [task.file.file_path for task in table.refresh().scan().plan_files()]
    name = table.name()[-1]
    prefix = g.data_path(name) + "/"
    on_moto = set(s3_keys(prefix.removeprefix(f"s3://{BUCKET}/")))
    want = {f.removeprefix(f"s3://{BUCKET}/") for f in files}
    step(f"{label}: PyIceberg's {ntotal} data file(s) are under {prefix}, objects in moto's bucket",
         len(files) == ntotal and all(f.startswith(prefix) for f in files) and want <= on_moto,
         f"files {files}, moto has {sorted(on_moto)}")


def check_warehouse(g):
    local = [os.path.relpath(os.path.join(d, f), g.warehouse) for d, _, fs in os.walk(g.warehouse) for f in fs]
    step(f"[{g.name}] the local warehouse holds the metadata and manifests, no data file (those are on moto's S3)",
         any(f.endswith(".metadata.json") for f in local) and any(f.endswith(".avro") for f in local)
         and not any(f.endswith(".parquet") for f in local), str(sorted(local)))


# ---------------------------------------------------------------------------------------------
# What icegate sent to STS


def grants(policy):
    """The policy as a set of (effect, action, resource, condition) grants, statement by statement."""
    out = set()
    for s in policy.get("Statement") or []:
        actions = s.get("Action")
        resources = s.get("Resource")
        for a in [actions] if isinstance(actions, str) else actions or []:
            for r in [resources] if isinstance(resources, str) else resources or []:
                out.add((s.get("Effect"), a, r, json.dumps(s.get("Condition"), sort_keys=True)))
    return out


def check_policy(label, policy_text, prefix, write):
    """The session policy grants exactly the scope's actions on `prefix` (a key prefix ending in /)."""
    try:
        policy = json.loads(policy_text or "")
    except ValueError:
        step(f"{label}: the session policy is JSON", False, str(policy_text))
        return
    step(f"{label}: policy Version 2012-10-17", policy.get("Version") == "2012-10-17", str(policy.get("Version")))
    got = grants(policy)
    objects = f"arn:aws:s3:::{BUCKET}/{prefix}*"
    bucket = f"arn:aws:s3:::{BUCKET}"
    no_condition = json.dumps(None)
    list_condition = json.dumps({"StringLike": {"s3:prefix": [f"{prefix}*"]}}, sort_keys=True)
    actions = READ_ACTIONS | (WRITE_ACTIONS if write else set())
    expected = {("Allow", a, objects, no_condition) for a in actions}
    expected.add(("Allow", "s3:ListBucket", bucket, list_condition))
    expected.add(("Allow", "s3:GetBucketLocation", bucket, no_condition))
    for action in sorted(actions):
        step(f"{label}: Allow {action} on {objects}", ("Allow", action, objects, no_condition) in got)
    step(f"{label}: Allow s3:ListBucket on {bucket} only with s3:prefix StringLike {prefix}*",
         ("Allow", "s3:ListBucket", bucket, list_condition) in got,
         str([g for g in got if g[1] == "s3:ListBucket"]))
    step(f"{label}: Allow s3:GetBucketLocation on {bucket}", ("Allow", "s3:GetBucketLocation", bucket, no_condition) in got)
    if not write:
        granted = sorted({g[1] for g in got if g[1] in WRITE_ACTIONS or g[1] in ("s3:*", "*")})
        step(f"{label}: no s3:PutObject, s3:DeleteObject, multipart or wildcard action (read-only)", not granted,
             str(granted))
    step(f"{label}: nothing else (no other action, resource, bucket or Deny)", got == expected,
         f"extra {sorted(got - expected)}, missing {sorted(expected - got)}")


def check_sts_call(g, label, key, user, active_roles, table, write):
    """The AssumeRole that minted `key` for `table` in g's namespace: what moto kept, and what
    the recorder saw on the wire."""
    moto_role = assumed_roles().get(key)
    if not step(f"{label}: moto recorded an AssumeRole for {key}", moto_role is not None):
        return
    step(f"{label}: RoleArn is credentials.sts.role_arn", moto_role["role_arn"] == g.role_arn, moto_role["role_arn"])
    step(f"{label}: RoleSessionName carries the user (icegate-{user})", moto_role["session_name"] == f"icegate-{user}",
         moto_role["session_name"])
    check_policy(f"{label} session policy (as moto stored it)", moto_role["policy"], f"wh/{g.ns}/{table}/data/", write)
    calls = [c for c in recorded_calls() if c.get("_access_key_id") == key]
    if not step(f"{label}: exactly one AssumeRole on the wire minted it", len(calls) == 1, str(len(calls))):
        return
    c = calls[0]
    step(f"{label}: the policy sent is the one moto stored", c.get("Policy") == moto_role["policy"])
    step(f"{label}: Action=AssumeRole, Version 2011-06-15, DurationSeconds {DURATION}, no ExternalId",
         (c.get("Action"), c.get("Version"), c.get("DurationSeconds"), c.get("ExternalId"))
         == ("AssumeRole", "2011-06-15", str(DURATION), None), json.dumps(c)[:400])
    auth = c.get("_authorization") or ""
    step(f"{label}: signed SigV4 with icegate's own key (testing) for us-east-1/sts",
         auth.startswith("AWS4-HMAC-SHA256 Credential=testing/") and "/us-east-1/sts/aws4_request" in auth, auth[:120])
    tags = {}
    for i in range(1, 11):
        if f"Tags.member.{i}.Key" in c:
            tags[c[f"Tags.member.{i}.Key"]] = c.get(f"Tags.member.{i}.Value")
    want = {"icegate:user": user, "icegate:active-roles": active_roles, "icegate:table": f"prod.{g.ns}.{table}"}
    step(f"{label}: session tags carry user, active roles and table ({json.dumps(want)})", tags == want, json.dumps(tags))


def check_sts_count(g, n, why):
    calls = [c for c in recorded_calls() if c.get("RoleArn") == g.role_arn]
    step(f"[{g.name}] icegate reused its cached credentials{why}: {n} AssumeRole calls, one per (user, roles, table)",
         len(calls) == n and all(c.get("_status") == 200 for c in calls),
         str([(c.get("RoleSessionName"), c.get("Tags.member.2.Value"), c.get("_status")) for c in calls]))


def check_audit(g, downscoped, stripped_tables=()):
    # icegate writes audit lines in batches, just after the responses, when its thread goes
    # idle: the last request's line may land a moment after its response did.
    wanted = {(op, user, header, "downscoped") for op, user, header in downscoped}
    deadline = time.monotonic() + 3
    while True:
        records = g.audit()
        seen = {(r.get("operation"), r.get("user"), r.get("active_roles_header"), r.get("credential")) for r in records}
        if wanted <= seen or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for op, user, header in downscoped:
        step(f"[{g.name}] audit: {user}'s {op}" + (f" narrowed to {header}" if header else "") + " says `downscoped`",
             (op, user, header, "downscoped") in seen, str(sorted(s for s in seen if s[:3] == (op, user, header))))
    for table in stripped_tables:
        got = [r.get("credential") for r in records if (r.get("objects") or [{}])[0].get("fullName") == table]
        step(f"[{g.name}] audit: the loadTable of {table} (nothing to mint) says `stripped`", got == ["stripped"], str(got))
    others = sorted(s for s in seen if s[3] not in ("downscoped", "stripped"))
    step(f"[{g.name}] audit: no credential-bearing request was `kept`", not others, str(others))


# ---------------------------------------------------------------------------------------------


def writer_then_reader(g, table):
    """dana appends to `table` unnarrowed (WRITE), then reads it narrowed to `reader` (READ).
    Returns the two minted access keys."""
    a, ident = f"[{g.name}] dana", f"{g.ns}.{table}"
    t = g.pyiceberg("dana").load_table(ident)
    step(f"{a} unnarrowed: {ident}'s metadata stays on the file:// warehouse", t.metadata_location.startswith("file://"),
         t.metadata_location)
    write_key = check_minted_keys(f"{a} unnarrowed: PyIceberg's FileIO", t.io.properties)
    t.append(rows([1, 2, 3]))
    t.append(rows([4, 5]))
    check_data_files(f"{a} unnarrowed: appended twice", g, t, 2)
    read = t.scan().to_arrow()
    step(f"{a} unnarrowed: reads the 5 rows back from moto's S3",
         sorted_rows(read) == sorted_rows(rows([1, 2, 3, 4, 5])), str(sorted_rows(read)))

    check_response(g, f"{a} unnarrowed loadTable", g.call("GET", f"tables/{table}", "dana"), table, write_key)
    if g.upstream_vends:
        check_response(g, f"{a} unnarrowed loadTable without X-Iceberg-Access-Delegation (the upstream vends anyway)",
                       g.call("GET", f"tables/{table}", "dana", delegation=False), table, write_key)

    r = g.call("GET", f"tables/{table}", "dana", "reader")
    read_key = check_response(g, f"{a} narrowed to reader loadTable", r, table)
    step(f"{a} narrowed to reader: other credentials than her WRITE ones", read_key not in (None, "", write_key),
         read_key)
    t = g.pyiceberg("dana", "reader").load_table(ident)
    key = check_minted_keys(f"{a} narrowed to reader: PyIceberg's FileIO", t.io.properties)
    step(f"{a} narrowed to reader: PyIceberg got the (cached) READ credentials", key == read_key, f"{key} != {read_key}")
    read = t.scan().to_arrow()
    step(f"{a} narrowed to reader: scans the 5 rows from moto's S3 with them",
         sorted_rows(read) == sorted_rows(rows([1, 2, 3, 4, 5])), str(sorted_rows(read)))
    return write_key, read_key


def gate_a():
    """The upstream vends on every load: its credentials are replaced."""
    g = Gate("a", "db", upstream_vends=True)
    g.admin_setup({"t": {"write.data.path": g.data_path("t")}, "plain": {}})
    step("[a] setup: moto's bucket is there and empty", s3_keys("") == [])
    write_key, read_key = writer_then_reader(g, "t")

    a = "[a] dana narrowed to reader"
    r = g.call("GET", "tables/t/credentials", "dana", "reader")
    if step(f"{a} loadCredentials: 200", r.status == 200, repr(r)):
        nothing_upstream(f"{a} loadCredentials", r)
        check_storage_credentials(g, f"{a} loadCredentials", r.json, "t", read_key)
    # Scan planning answers carry no metadata: icegate learns the locations itself.
    r = g.call("POST", "tables/t/plan", "dana", "reader", body={})
    plan_id = (r.json or {}).get("plan-id")
    if step(f"{a} planTableScan: 200 with a plan-id", r.status == 200 and bool(plan_id), repr(r)):
        nothing_upstream(f"{a} planTableScan", r)
        check_storage_credentials(g, f"{a} planTableScan", r.json, "t", read_key)
        r = g.call("GET", f"tables/t/plan/{plan_id}", "dana", "reader")
        if step(f"{a} fetchPlanningResult: 200", r.status == 200, repr(r)):
            nothing_upstream(f"{a} fetchPlanningResult", r)
            check_storage_credentials(g, f"{a} fetchPlanningResult", r.json, "t", read_key)

    # olga (owns the catalog) creates db.t2 through icegate with write.data.path.
    t2 = g.pyiceberg("olga").create_table("db.t2", schema=SCHEMA, properties={"write.data.path": g.data_path("t2")})
    step("[a] olga createTable db.t2 through icegate: metadata on file://", t2.metadata_location.startswith("file://"),
         t2.metadata_location)
    create_key = check_minted_keys("[a] olga createTable: PyIceberg's FileIO", t2.io.properties)
    t2.append(rows([7, 8]))
    check_data_files("[a] olga: appended once", g, t2, 1)
    read = t2.scan().to_arrow()
    step("[a] olga: reads the 2 rows back", sorted_rows(read) == sorted_rows(rows([7, 8])), str(sorted_rows(read)))

    # db.plain lives on file:// only: nothing to mint for, so nothing is handed out (a strip).
    r = g.call("GET", "tables/plain", "dana")
    if step("[a] dana loadTable db.plain (file:// only): 200", r.status == 200, repr(r)):
        config = r.json.get("config") or {}
        nothing_upstream("[a] dana loadTable db.plain", r)
        step("[a] dana loadTable db.plain: no credential minted either",
             "s3.access-key-id" not in config and not r.json.get("storage-credentials"), r.raw.decode()[-400:])
        kept = {k: config.get(k) for k in KEPT}
        step("[a] dana loadTable db.plain: s3.endpoint, s3.path-style-access, client.region kept", kept == KEPT,
             json.dumps(config))
    check_warehouse(g)

    check_sts_call(g, "[a] dana WRITE mint", write_key, "dana", "reader writer", "t", write=True)
    check_sts_call(g, "[a] dana READ mint", read_key, "dana", "reader", "t", write=False)
    check_sts_call(g, "[a] olga createTable WRITE mint", create_key, "olga", "writer", "t2", write=True)
    check_sts_count(g, 3, ", and minted none for db.plain")
    check_audit(g, [("loadTable", "dana", None), ("loadTable", "dana", "reader"), ("loadCredentials", "dana", "reader"),
                    ("planTableScan", "dana", "reader"), ("fetchPlanningResult", "dana", "reader"),
                    ("createTable", "olga", None)], ["prod.db.plain"])


def gate_b():
    """The upstream vends only when asked, and icegate does not ask: the minted keys are all."""
    g = Gate("b", "nb", upstream_vends=False)
    g.admin_setup({"t": {"write.data.path": g.data_path("t")}})
    write_key, read_key = writer_then_reader(g, "t")
    check_warehouse(g)
    check_sts_call(g, "[b] dana WRITE mint", write_key, "dana", "reader writer", "t", write=True)
    check_sts_call(g, "[b] dana READ mint", read_key, "dana", "reader", "t", write=False)
    check_sts_count(g, 2, "")
    check_audit(g, [("loadTable", "dana", None), ("loadTable", "dana", "reader")])


for run in (gate_a, gate_b):
    try:
        run()
    except Exception as e:  # noqa: BLE001 - report what failed, then go on
        import traceback

        traceback.print_exc()
        step(f"{run.__name__}: the checks ran to the end", False, f"{type(e).__name__}: {e}")
print(f"{checks - failures} passed, {failures} failed ({time.monotonic() - started:.1f} s)")
sys.exit(1 if failures else 0)
