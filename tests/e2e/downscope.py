"""End to end: `credentials.mode = "s3-downscope"` against moto's S3 and STS (DESIGN.md §8).

Usage: downscope.py --icegate URL --catalog URL --moto URL --recorder URL --bucket NAME
                    --warehouse DIR --log FILE
(started by tests/e2e/downscope.sh). The dev catalog vends broad upstream keys
(`AKIA-UPSTREAM-BROAD` and three `storage-credentials`) on every load, with `s3.endpoint` at
moto. icegate (policy tests/e2e/downscope-policy.yaml) assumes
arn:aws:iam::123456789012:role/icegate-table-access at moto's STS, through a recorder that keeps
what icegate sent (moto keeps the session policy but not the tags).

The reference catalog has no S3 FileIO, so the tables' metadata stays on the `file://` warehouse
and their data goes to `s3://BUCKET/wh/db/<table>/data` through `write.data.path`: PyIceberg
writes and reads the Parquet files on moto itself, with the credentials icegate returned.

  db.t   made at the catalog (nobody owns it); dana (reader + writer) appends through icegate
         unnarrowed (WRITE mint), then reads narrowed to `reader` (READ mint)
  db.t2  created through icegate by olga (she owns the catalog: createTable with a location
         property needs it), with `write.data.path`: the createTable answer carries a WRITE mint

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
for flag in ["icegate", "catalog", "moto", "recorder", "bucket", "warehouse", "log"]:
    parser.add_argument(f"--{flag}", required=True)
args = parser.parse_args()
ICEGATE, CATALOG, MOTO, RECORDER, BUCKET = args.icegate, args.catalog, args.moto, args.recorder, args.bucket
ROLE_ARN = "arn:aws:iam::123456789012:role/icegate-table-access"  # credentials.sts.role_arn (downscope.sh)
DURATION = 3600  # credentials.sts.duration_seconds, the default
# Every string of the vend file that must not reach a caller (downscope.sh).
UPSTREAM_SECRETS = ["AKIA-UPSTREAM", "upstream-broad-secret", "upstream-broad-session-token", "upstream-bucket-secret",
                    "upstream-data-secret", "upstream-catalog-token", "upstream.invalid"]
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


def gate(method, rest, user, roles=None, delegation=True, body=None):
    headers = {"Authorization": "Basic " + base64.b64encode(f"{user}:pw".encode()).decode()}
    if roles is not None:
        headers["X-Gravitino-Active-Roles"] = roles
    if delegation:
        headers["X-Iceberg-Access-Delegation"] = "vended-credentials"
    return http(method, f"{ICEGATE}/v1/namespaces/db/{rest}", body, headers)


def catalog(user, roles=None):
    props = {"type": "rest", "uri": ICEGATE, "auth": {"type": "basic", "basic": {"username": user, "password": "x"}}}
    if roles is not None:
        props["header.X-Gravitino-Active-Roles"] = roles
    return load_catalog(f"downscope-{user}-{roles}", **props)


def assumed_roles():
    """moto's own record of every AssumeRole: access key, session name, role, session policy."""
    return {r["access_key_id"]: r for r in get_json(f"{RECORDER}/assumed-roles")}


def recorded_calls():
    """What icegate sent to STS, as the recorder in front of moto saw it."""
    return get_json(f"{RECORDER}/recorded")


def s3_keys(prefix):
    return get_json(f"{RECORDER}/objects?prefix={prefix}")


def data_path(table):
    return f"s3://{BUCKET}/wh/db/{table}/data"


SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "item", StringType(), required=False))


def rows(ids):
    return pa.table({"id": pa.array(ids, pa.int64()), "item": pa.array([f"item-{i}" for i in ids])})


def sorted_rows(table):
    return sorted(zip(table.column("id").to_pylist(), table.column("item").to_pylist()))


# ---------------------------------------------------------------------------------------------
# What icegate returned


def check_minted_keys(label, io, minted_by_moto):
    """A FileIO's (or config's) keys are one AssumeRole's, exactly as moto minted them."""
    key = io.get("s3.access-key-id") or ""
    ok = step(f"{label}: s3.access-key-id is moto-minted (ASIA...), not the upstream's",
              key.startswith("ASIA") and key in minted_by_moto, key)
    if ok:
        m = minted_by_moto[key]
        step(f"{label}: secret and session token are the ones moto minted for it",
             io.get("s3.secret-access-key") == m["secret_access_key"] and io.get("s3.session-token") == m["session_token"],
             json.dumps({k: io.get(k) for k in ("s3.secret-access-key", "s3.session-token")}))
    return key


def check_response(label, reply, table, roles_key=None):
    """A loadTable answer: config and storage-credentials carry one minted key, nothing upstream."""
    if not step(f"{label}: 200", reply.status == 200, repr(reply)):
        return None
    step(f"{label}: Cache-Control: no-store", reply.headers.get("Cache-Control") == "no-store",
         str(reply.headers.get("Cache-Control")))
    raw = reply.raw.decode()
    left = [s for s in UPSTREAM_SECRETS if s in raw]
    step(f"{label}: no upstream key, secret, token or endpoint anywhere in the response", not left, f"found {left}")
    config = reply.json.get("config") or {}
    key = check_minted_keys(f"{label} config", config, assumed_roles())
    if roles_key is not None:
        step(f"{label}: the same credentials as the cached mint for this caller and scope", key == roles_key,
             f"{key} != {roles_key}")
    expires = int(config.get("s3.session-token-expires-at-ms") or 0)
    now_ms = time.time() * 1000
    step(f"{label}: s3.session-token-expires-at-ms is the mint's expiry (about {DURATION} s ahead)",
         now_ms + (DURATION - 300) * 1000 < expires <= now_ms + (DURATION + 60) * 1000, str(expires))
    kept = {k: config.get(k) for k in ("s3.endpoint", "s3.path-style-access", "client.region")}
    step(f"{label}: s3.endpoint (moto), s3.path-style-access and client.region kept",
         kept == {"s3.endpoint": MOTO, "s3.path-style-access": "true", "client.region": "us-east-1"}, json.dumps(kept))
    step(f"{label}: `token` removed from config", "token" not in config, json.dumps(config))
    want = f"v1/namespaces/db/tables/{table}/credentials"
    step(f"{label}: client.refresh-credentials-endpoint rewritten to icegate's {want}",
         config.get("client.refresh-credentials-endpoint") == want, str(config.get("client.refresh-credentials-endpoint")))
    check_storage_credentials(label, reply.json, table, key)
    return key


def check_storage_credentials(label, body, table, key):
    """One entry per S3 location of the table (its `location` is file://, so only the data path),
    with the minted keys; the upstream's three entries are gone."""
    creds = body.get("storage-credentials") or []
    got = [(c.get("prefix"), (c.get("config") or {}).get("s3.access-key-id")) for c in creds]
    step(f"{label}: storage-credentials are exactly [{data_path(table)} -> the minted key]",
         got == [(data_path(table), key)], str(got))
    if len(creds) == 1:
        c = creds[0]["config"]
        m = assumed_roles().get(key) or {}
        step(f"{label}: the storage credential carries the minted secret and session token",
             c.get("s3.secret-access-key") == m.get("secret_access_key") and c.get("s3.session-token") == m.get("session_token"),
             json.dumps(c))


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


def check_policy(label, policy_text, table, write):
    try:
        policy = json.loads(policy_text or "")
    except ValueError:
        step(f"{label}: the session policy is JSON", False, str(policy_text))
        return
    step(f"{label}: policy Version 2012-10-17", policy.get("Version") == "2012-10-17", str(policy.get("Version")))
    got = grants(policy)
    prefix = f"wh/db/{table}/data/"
    objects = f"arn:aws:s3:::{BUCKET}/{prefix}*"
    bucket = f"arn:aws:s3:::{BUCKET}"
    no_condition = json.dumps(None)
    list_condition = json.dumps({"StringLike": {"s3:prefix": [f"{prefix}*"]}}, sort_keys=True)
    expected = {("Allow", a, objects, no_condition) for a in READ_ACTIONS | (WRITE_ACTIONS if write else set())}
    expected.add(("Allow", "s3:ListBucket", bucket, list_condition))
    expected.add(("Allow", "s3:GetBucketLocation", bucket, no_condition))
    for action in sorted(READ_ACTIONS | (WRITE_ACTIONS if write else set())):
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


def check_sts_call(label, key, user, active_roles, table, write):
    """The AssumeRole that minted `key` for db.`table`: what moto kept, and what the recorder saw
    on the wire."""
    moto_role = assumed_roles().get(key)
    if not step(f"{label}: moto recorded an AssumeRole for {key}", moto_role is not None):
        return
    step(f"{label}: RoleArn is credentials.sts.role_arn", moto_role["role_arn"] == ROLE_ARN, moto_role["role_arn"])
    step(f"{label}: RoleSessionName carries the user (icegate-{user})", moto_role["session_name"] == f"icegate-{user}",
         moto_role["session_name"])
    check_policy(f"{label} session policy (as moto stored it)", moto_role["policy"], table, write)
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
    want = {"icegate:user": user, "icegate:active-roles": active_roles, "icegate:table": f"prod.db.{table}"}
    step(f"{label}: session tags carry user, active roles and table ({json.dumps(want)})", tags == want, json.dumps(tags))


# ---------------------------------------------------------------------------------------------


def main():
    # Setup, as the catalog's own administrator (not through icegate): db and db.t with its data
    # on moto's S3. Nobody owns db.t, so dana's narrowed scope is READ.
    r = http("POST", f"{CATALOG}/v1/namespaces", {"namespace": ["db"]})
    assert r.status == 200, r
    schema = {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": False},
        {"id": 2, "name": "item", "type": "string", "required": False}]}
    r = http("POST", f"{CATALOG}/v1/namespaces/db/tables",
             {"name": "t", "schema": schema, "properties": {"write.data.path": data_path("t")}})
    assert r.status == 200, r
    r = http("POST", f"{CATALOG}/v1/namespaces/db/tables", {"name": "plain", "schema": schema})
    assert r.status == 200, r
    step("setup: moto's bucket is there and empty", s3_keys("") == [])

    # --- dana unnarrowed: WRITE; PyIceberg writes the data files to moto's S3 -----------------
    t = catalog("dana").load_table("db.t")
    step("dana unnarrowed: db.t's metadata stays on the file:// warehouse", t.metadata_location.startswith("file://"),
         t.metadata_location)
    write_key = check_minted_keys("dana unnarrowed: PyIceberg's FileIO", t.io.properties, assumed_roles())
    t.append(rows([1, 2, 3]))
    t.append(rows([4, 5]))
    files = [task.file.file_path for task in t.refresh().scan().plan_files()]
    step(f"dana unnarrowed: PyIceberg appended 2 data files under {data_path('t')}/",
         len(files) == 2 and all(f.startswith(data_path("t") + "/") for f in files), str(files))
    on_moto = set(s3_keys("wh/db/t/data/"))
    want = {f.removeprefix(f"s3://{BUCKET}/") for f in files}
    step("dana unnarrowed: the data files are objects in moto's bucket", bool(want) and want <= on_moto,
         f"want {sorted(want)}, moto has {sorted(on_moto)}")
    read = t.scan().to_arrow()
    step("dana unnarrowed: reads the 5 rows back from moto's S3", sorted_rows(read) == sorted_rows(rows([1, 2, 3, 4, 5])),
         str(sorted_rows(read)))

    r = gate("GET", "tables/t", "dana")
    check_response("dana unnarrowed loadTable", r, "t", write_key)
    r = gate("GET", "tables/t", "dana", delegation=False)
    check_response("dana unnarrowed loadTable without X-Iceberg-Access-Delegation (the upstream vends anyway)", r, "t",
                   write_key)

    # --- dana narrowed to reader: READ --------------------------------------------------------
    r = gate("GET", "tables/t", "dana", "reader")
    read_key = check_response("dana narrowed to reader loadTable", r, "t")
    step("dana narrowed to reader: other credentials than her WRITE ones", read_key not in (None, write_key), read_key)
    r = gate("GET", "tables/t/credentials", "dana", "reader")
    if step("dana narrowed to reader loadCredentials: 200", r.status == 200, repr(r)):
        left = [s for s in UPSTREAM_SECRETS if s in r.raw.decode()]
        step("dana narrowed to reader loadCredentials: nothing upstream left", not left, f"found {left}")
        check_storage_credentials("dana narrowed to reader loadCredentials", r.json, "t", read_key)
    # Scan planning answers carry no metadata: icegate learns the locations itself.
    r = gate("POST", "tables/t/plan", "dana", "reader", body={})
    plan_id = (r.json or {}).get("plan-id")
    if step("dana narrowed to reader planTableScan: 200 with a plan-id", r.status == 200 and bool(plan_id), repr(r)):
        step("dana narrowed to reader planTableScan: nothing upstream left",
             not [s for s in UPSTREAM_SECRETS if s in r.raw.decode()], r.raw.decode()[:300])
        check_storage_credentials("dana narrowed to reader planTableScan", r.json, "t", read_key)
        r = gate("GET", f"tables/t/plan/{plan_id}", "dana", "reader")
        if step("dana narrowed to reader fetchPlanningResult: 200", r.status == 200, repr(r)):
            check_storage_credentials("dana narrowed to reader fetchPlanningResult", r.json, "t", read_key)
    t = catalog("dana", "reader").load_table("db.t")
    key = check_minted_keys("dana narrowed to reader: PyIceberg's FileIO", t.io.properties, assumed_roles())
    step("dana narrowed to reader: PyIceberg got the READ credentials", key == read_key, f"{key} != {read_key}")
    read = t.scan().to_arrow()
    step("dana narrowed to reader: scans the 5 rows from moto's S3 with them",
         sorted_rows(read) == sorted_rows(rows([1, 2, 3, 4, 5])), str(sorted_rows(read)))

    # --- olga (owns the catalog) creates db.t2 through icegate with write.data.path ------------
    t2 = catalog("olga").create_table("db.t2", schema=SCHEMA, properties={"write.data.path": data_path("t2")})
    step("olga createTable db.t2 through icegate: metadata on file://", t2.metadata_location.startswith("file://"),
         t2.metadata_location)
    create_key = check_minted_keys("olga createTable: PyIceberg's FileIO", t2.io.properties, assumed_roles())
    t2.append(rows([7, 8]))
    files = [task.file.file_path for task in t2.refresh().scan().plan_files()]
    on_moto = set(s3_keys("wh/db/t2/data/"))
    want = {f.removeprefix(f"s3://{BUCKET}/") for f in files}
    step("olga: PyIceberg's data file is in moto's bucket under wh/db/t2/data/", len(want) == 1 and want <= on_moto,
         f"want {sorted(want)}, moto has {sorted(on_moto)}")
    read = t2.scan().to_arrow()
    step("olga: reads the 2 rows back", sorted_rows(read) == sorted_rows(rows([7, 8])), str(sorted_rows(read)))

    # db.plain lives on file:// only: nothing to mint for, so nothing is handed out (a strip).
    r = gate("GET", "tables/plain", "dana")
    if step("dana loadTable db.plain (file:// only): 200", r.status == 200, repr(r)):
        config = r.json.get("config") or {}
        step("dana loadTable db.plain: no credential at all (no upstream one, none minted)",
             not [s for s in UPSTREAM_SECRETS if s in r.raw.decode()] and "s3.access-key-id" not in config
             and not r.json.get("storage-credentials"), r.raw.decode()[-400:])
        step("dana loadTable db.plain: s3.endpoint, s3.path-style-access, client.region kept",
             {k: config.get(k) for k in ("s3.endpoint", "s3.path-style-access", "client.region")}
             == {"s3.endpoint": MOTO, "s3.path-style-access": "true", "client.region": "us-east-1"}, json.dumps(config))

    local = [os.path.relpath(os.path.join(d, f), args.warehouse) for d, _, fs in os.walk(args.warehouse) for f in fs]
    step("the local warehouse holds the metadata and manifests, no data file (those are on moto's S3)",
         any(f.endswith(".metadata.json") for f in local) and any(f.endswith(".avro") for f in local)
         and not any(f.endswith(".parquet") for f in local), str(sorted(local)))

    # --- what icegate sent to STS --------------------------------------------------------------
    check_sts_call("dana WRITE mint", write_key, "dana", "reader writer", "t", write=True)
    check_sts_call("dana READ mint", read_key, "dana", "reader", "t", write=False)
    check_sts_call("olga createTable WRITE mint", create_key, "olga", "writer", "t2", write=True)
    calls = recorded_calls()
    step("icegate reused its cached credentials, and minted none for db.plain: 3 AssumeRole calls for "
         "3 (user, roles, scope, table)",
         len(calls) == 3 and all(c.get("_status") == 200 for c in calls),
         str([(c.get("RoleSessionName"), c.get("Tags.member.2.Value"), c.get("_status")) for c in calls]))

    # --- the audit -----------------------------------------------------------------------------
    seen = set()
    records = []
    with open(args.log, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("credential") is not None:
                records.append(rec)
                seen.add((rec.get("operation"), rec.get("user"), rec.get("active_roles_header"), rec.get("credential")))
    for op, user, header in [("loadTable", "dana", None), ("loadTable", "dana", "reader"),
                             ("loadCredentials", "dana", "reader"), ("planTableScan", "dana", "reader"),
                             ("fetchPlanningResult", "dana", "reader"), ("createTable", "olga", None)]:
        step(f"audit: {user}'s {op}" + (f" narrowed to {header}" if header else "") + " says `downscoped`",
             (op, user, header, "downscoped") in seen,
             str(sorted(s for s in seen if s[:3] == (op, user, header))))
    plain = [rec for rec in records if (rec.get("objects") or [{}])[0].get("fullName") == "prod.db.plain"]
    step("audit: dana's loadTable of db.plain (nothing to mint) says `stripped`",
         [rec.get("credential") for rec in plain] == ["stripped"], str([rec.get("credential") for rec in plain]))
    others = sorted(s for s in seen if s[3] not in ("downscoped", "stripped"))
    step("audit: no credential-bearing request was `kept`", not others, str(others))


try:
    main()
except Exception as e:  # noqa: BLE001 - report what failed, then the summary
    import traceback

    traceback.print_exc()
    step("the checks ran to the end", False, f"{type(e).__name__}: {e}")
print(f"{checks - failures} passed, {failures} failed ({time.monotonic() - started:.1f} s)")
sys.exit(1 if failures else 0)
