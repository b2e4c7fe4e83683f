"""Smoke test of the dev catalog: raw REST calls for every route family, then PyIceberg end to end.

Usage: smoke_test.py http://127.0.0.1:PORT [--jdbc] [--vend FILE.json]   (run by smoke.sh)
With --vend the catalog runs with that --vend file: the raw REST checks run, plus the fixture
checks (vended credentials, scan planning, remote signing); PyIceberg is skipped (time).
Prints one line per check and a closing "N passed, N failed" line; exits 1 on any failure.
"""

import json
import sys
import time
import traceback
import urllib.error
import urllib.request

BASE = sys.argv[1].rstrip("/")
JDBC = "--jdbc" in sys.argv
VEND = json.load(open(sys.argv[sys.argv.index("--vend") + 1])) if "--vend" in sys.argv else None
passed, failed = 0, 0


def check(name, fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print(f"ok   - {name}")
    except Exception:  # noqa: BLE001 - report every failure and go on
        failed += 1
        print(f"FAIL - {name}")
        traceback.print_exc(file=sys.stdout)


def call(method, path, body=None, headers=None, with_headers=False):
    """One HTTP request; returns (status, parsed JSON or None, raw bytes) [+ response headers]."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    req.add_header("Authorization", "Bearer ignored")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req) as resp:
            raw = resp.read()
            got = resp.status, (json.loads(raw) if raw else None), raw
            return got + (resp.headers,) if with_headers else got
    except urllib.error.HTTPError as e:
        raw = e.read()
        got = e.code, (json.loads(raw) if raw else None), raw
        return got + (e.headers,) if with_headers else got


def expect(method, path, status, body=None, headers=None):
    got, js, raw = call(method, path, body, headers)
    assert got == status, f"{method} {path}: want {status}, got {got}: {raw[:300]!r}"
    return js


def expect_error(method, path, status, etype=None, body=None, headers=None):
    js = expect(method, path, status, body, headers)
    err = js["error"]
    assert err["code"] == status and err["message"] and err["type"], js
    if etype:
        assert err["type"] == etype, f"want {etype}, got {err['type']}"
    return err


SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "x", "type": "long", "required": False}]}
V = "/v1"  # no-prefix form
P = "/v1/anyprefix"  # prefixed form
T = "/namespaces/{namespace}/tables/{table}"
FIXTURE_ENDPOINTS = [  # the spec's strings for the --vend fixture routes
    f"POST /v1/{{prefix}}{T}/plan",
    f"GET /v1/{{prefix}}{T}/plan/{{plan-id}}",
    f"DELETE /v1/{{prefix}}{T}/plan/{{plan-id}}",
    f"POST /v1/{{prefix}}{T}/tasks",
    f"POST /v1/{{prefix}}{T}/sign",
]


def rest_namespaces():
    cfg = expect("GET", "/v1/config?warehouse=wh", 200)
    assert cfg["defaults"]["warehouse"].startswith("file:///"), cfg
    assert "POST /v1/{prefix}/transactions/commit" in cfg["endpoints"], cfg
    for endpoint in FIXTURE_ENDPOINTS:  # advertised exactly when served
        assert (endpoint in cfg["endpoints"]) == (VEND is not None), (endpoint, cfg["endpoints"])
    assert expect("POST", P + "/namespaces", 200, {"namespace": ["rest"], "properties": {"owner": "smoke"}})[
        "namespace"
    ] == ["rest"]
    expect_error("POST", V + "/namespaces", 409, "AlreadyExistsException", {"namespace": ["rest"]})
    assert expect("GET", V + "/namespaces/rest", 200)["properties"]["owner"] == "smoke"
    _, js, raw = call("HEAD", P + "/namespaces/rest")
    assert (_, raw) == (204, b""), (_, raw)
    status, _, raw = call("HEAD", V + "/namespaces/missing")
    assert (status, raw) == (404, b""), (status, raw)
    expect_error("GET", V + "/namespaces/missing", 404, "NoSuchNamespaceException")
    upd = expect(
        "POST", P + "/namespaces/rest/properties", 200, {"updates": {"k": "v"}, "removals": ["owner", "absent"]}
    )
    assert upd["updated"] == ["k"] and upd["removed"] == ["owner"] and upd["missing"] == ["absent"], upd
    # nested namespace, unit-separator encoding, parent listing
    expect("POST", V + "/namespaces", 200, {"namespace": ["rest", "child"]})
    assert expect("GET", V + "/namespaces/rest%1Fchild", 200)["namespace"] == ["rest", "child"]
    assert ["rest", "child"] in expect("GET", V + "/namespaces?parent=rest", 200)["namespaces"]
    # pagination
    for i in range(3):
        expect("POST", V + "/namespaces", 200, {"namespace": [f"page{i}"]})
    seen, token, pages = [], "", 0
    while True:
        q = "?pageSize=2" + (f"&pageToken={token}" if token else "")
        js = expect("GET", V + "/namespaces" + q, 200)
        assert len(js["namespaces"]) <= 2, js
        seen += js["namespaces"]
        pages += 1
        token = js.get("next-page-token")
        if not token:
            break
    assert pages >= 2 and all([f"page{i}"] in seen for i in range(3)), (pages, seen)
    # Spark's first page: empty pageToken without pageSize
    assert len(expect("GET", V + "/namespaces?pageToken=", 200)["namespaces"]) >= 4
    expect("DELETE", V + "/namespaces/page0", 204)
    expect_error("DELETE", V + "/namespaces/page0", 404, "NoSuchNamespaceException")


def rest_tables():
    t = expect("POST", P + "/namespaces/rest/tables", 200, {"name": "t1", "schema": SCHEMA})
    assert t["metadata-location"].startswith("file:///") and t["metadata"]["location"].startswith("file:///")
    expect_error("POST", V + "/namespaces/rest/tables", 409, "AlreadyExistsException", {"name": "t1", "schema": SCHEMA})
    if not JDBC:  # Iceberg's JdbcCatalog creates tables in namespaces it has no row for
        expect_error("POST", V + "/namespaces/nope/tables", 404, "NoSuchNamespaceException", {"name": "t", "schema": SCHEMA})
    expect_error("POST", V + "/namespaces/rest/tables", 400, None, {"name": "bad"})  # no schema
    expect_error("POST", V + "/namespaces/rest/tables", 400, "BadRequestException", None)
    expect_error("DELETE", V + "/namespaces/rest", 409, "NamespaceNotEmptyException")
    ids = expect("GET", V + "/namespaces/rest/tables", 200)["identifiers"]
    assert {"namespace": ["rest"], "name": "t1"} in ids, ids
    assert len(expect("GET", V + "/namespaces/rest/tables?pageSize=1", 200)["identifiers"]) == 1
    status, _, raw = call("HEAD", P + "/namespaces/rest/tables/t1")
    assert (status, raw) == (204, b"")
    status, _, raw = call("HEAD", P + "/namespaces/rest/tables/none")
    assert (status, raw) == (404, b"")
    loaded = expect("GET", V + "/namespaces/rest/tables/t1?snapshots=all", 200)
    assert loaded["metadata"]["table-uuid"] == t["metadata"]["table-uuid"]
    expect("GET", V + "/namespaces/rest/tables/t1?snapshots=refs", 200)
    expect_error("GET", V + "/namespaces/rest/tables/none", 404, "NoSuchTableException")
    # credentials: none vended (with --vend: see rest_vend)
    if VEND is None:
        assert expect("GET", V + "/namespaces/rest/tables/t1/credentials", 200) == {"storage-credentials": []}
    expect_error("GET", V + "/namespaces/rest/tables/none/credentials", 404, "NoSuchTableException")
    # metrics
    report = {
        "report-type": "commit-report",
        "table-name": "rest.t1",
        "snapshot-id": 1,
        "sequence-number": 1,
        "operation": "append",
        "metrics": {},
    }
    status, _, raw = call("POST", V + "/namespaces/rest/tables/t1/metrics", report)
    assert (status, raw) == (204, b""), (status, raw)
    # commit: property update with a requirement, then a stale requirement -> 409
    uuid = t["metadata"]["table-uuid"]
    commit = {
        "requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
        "updates": [{"action": "set-properties", "updates": {"committed": "yes"}}],
    }
    js = expect("POST", P + "/namespaces/rest/tables/t1", 200, commit)
    assert js["metadata"]["properties"]["committed"] == "yes", js
    stale = {
        "requirements": [{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}],
        "updates": [],
    }
    expect_error("POST", V + "/namespaces/rest/tables/t1", 409, "CommitFailedException", stale)
    expect_error("POST", V + "/namespaces/rest/tables/none", 404, "NoSuchTableException", commit)
    # stage-create, then commit with assert-create
    staged = expect(
        "POST", V + "/namespaces/rest/tables", 200, {"name": "staged", "schema": SCHEMA, "stage-create": True}
    )
    assert staged["metadata"]["location"].endswith("/rest/staged"), staged
    status, _, _ = call("HEAD", V + "/namespaces/rest/tables/staged")
    assert status == 404, "staged table must not exist before its commit"
    create_commit = {
        "requirements": [{"type": "assert-create"}],
        "updates": [
            {"action": "assign-uuid", "uuid": staged["metadata"]["table-uuid"]},
            {"action": "upgrade-format-version", "format-version": 2},
            {"action": "add-schema", "schema": SCHEMA, "last-column-id": 1},
            {"action": "set-current-schema", "schema-id": -1},
            {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
            {"action": "set-default-spec", "spec-id": -1},
            {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
            {"action": "set-default-sort-order", "sort-order-id": -1},
            {"action": "set-location", "location": staged["metadata"]["location"]},
        ],
    }
    expect("POST", V + "/namespaces/rest/tables/staged", 200, create_commit)
    expect("HEAD", V + "/namespaces/rest/tables/staged", 204)
    # rename
    rename = {"source": {"namespace": ["rest"], "name": "staged"}, "destination": {"namespace": ["rest"], "name": "moved"}}
    expect("POST", P + "/tables/rename", 204, rename)
    expect("HEAD", V + "/namespaces/rest/tables/moved", 204)
    expect_error("POST", V + "/tables/rename", 404, "NoSuchTableException", rename)
    # drop without purge, register back from the metadata file, drop with purge
    meta = expect("GET", V + "/namespaces/rest/tables/moved", 200)["metadata-location"]
    expect("DELETE", V + "/namespaces/rest/tables/moved", 204)
    expect_error("DELETE", V + "/namespaces/rest/tables/moved", 404, "NoSuchTableException")
    reg = expect("POST", P + "/namespaces/rest/register", 200, {"name": "back", "metadata-location": meta})
    assert reg["metadata-location"] == meta, reg
    expect_error("POST", V + "/namespaces/rest/register", 409, "AlreadyExistsException", {"name": "back", "metadata-location": meta})
    expect("DELETE", V + "/namespaces/rest/tables/back?purgeRequested=true", 204)


def rest_transactions():
    a = expect("POST", V + "/namespaces/rest/tables", 200, {"name": "ta", "schema": SCHEMA})
    b = expect("POST", V + "/namespaces/rest/tables", 200, {"name": "tb", "schema": SCHEMA})

    def change(name, uuid, value):
        return {
            "identifier": {"namespace": ["rest"], "name": name},
            "requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
            "updates": [{"action": "set-properties", "updates": {"tx": value}}],
        }

    ua, ub = a["metadata"]["table-uuid"], b["metadata"]["table-uuid"]
    expect("POST", P + "/transactions/commit", 204, {"table-changes": [change("ta", ua, "1"), change("tb", ub, "1")]})
    for name in ("ta", "tb"):
        assert expect("GET", V + f"/namespaces/rest/tables/{name}", 200)["metadata"]["properties"]["tx"] == "1"
    # one bad requirement: nothing is committed
    bad = {"table-changes": [change("ta", ua, "2"), change("tb", ua, "2")]}
    expect_error("POST", V + "/transactions/commit", 409, "CommitFailedException", bad)
    assert expect("GET", V + "/namespaces/rest/tables/ta", 200)["metadata"]["properties"]["tx"] == "1"


def rest_views():
    version = {
        "version-id": 1,
        "timestamp-ms": int(time.time() * 1000),
        "schema-id": 0,
        "summary": {"engine-name": "smoke"},
        "representations": [{"type": "sql", "sql": "SELECT 1 AS x", "dialect": "spark"}],
        "default-namespace": ["rest"],
    }
    v = expect("POST", P + "/namespaces/rest/views", 200, {"name": "v1", "schema": SCHEMA, "view-version": version, "properties": {}})
    assert v["metadata-location"].startswith("file:///"), v
    expect_error("POST", V + "/namespaces/rest/views", 409, "AlreadyExistsException", {"name": "v1", "schema": SCHEMA, "view-version": version})
    assert {"namespace": ["rest"], "name": "v1"} in expect("GET", V + "/namespaces/rest/views", 200)["identifiers"]
    assert expect("GET", V + "/namespaces/rest/views?pageSize=1", 200)["identifiers"]
    loaded = expect("GET", V + "/namespaces/rest/views/v1", 200)
    assert loaded["metadata"]["versions"][0]["representations"][0]["sql"] == "SELECT 1 AS x"
    expect("HEAD", V + "/namespaces/rest/views/v1", 204)
    expect("HEAD", V + "/namespaces/rest/views/none", 404)
    expect_error("GET", V + "/namespaces/rest/views/none", 404, "NoSuchViewException")
    replace = {
        "requirements": [{"type": "assert-view-uuid", "uuid": loaded["metadata"]["view-uuid"]}],
        "updates": [{"action": "set-properties", "updates": {"replaced": "yes"}}],
    }
    assert expect("POST", V + "/namespaces/rest/views/v1", 200, replace)["metadata"]["properties"]["replaced"] == "yes"
    rename = {"source": {"namespace": ["rest"], "name": "v1"}, "destination": {"namespace": ["rest"], "name": "v2"}}
    expect("POST", P + "/views/rename", 204, rename)
    expect("HEAD", V + "/namespaces/rest/views/v2", 204)
    expect("DELETE", V + "/namespaces/rest/views/v2", 204)
    expect_error("DELETE", V + "/namespaces/rest/views/v2", 404, "NoSuchViewException")


def rest_unsupported():
    # Routes newer than Iceberg 1.10.2's CatalogHandlers: answered like Iceberg's adapter does.
    routes = [
        ("GET", "/v1/namespaces/rest/functions"),
        ("GET", "/v1/namespaces/rest/functions/f"),
        ("POST", "/v1/namespaces/rest/tables/ta/unregister"),
        ("POST", "/v1/namespaces/rest/register-view"),
        ("POST", "/v1/oauth/tokens"),
        ("PUT", "/v1/namespaces"),
    ]
    if VEND is None:  # the --vend fixtures, and its /dev/sign-log, exist only with --vend
        routes += [
            ("POST", "/v1/namespaces/rest/tables/ta/sign"),
            ("POST", "/v1/namespaces/rest/tables/ta/plan"),
            ("GET", "/v1/namespaces/rest/tables/ta/plan/p1"),
            ("DELETE", "/v1/namespaces/rest/tables/ta/plan/p1"),
            ("POST", "/v1/namespaces/rest/tables/ta/tasks"),
            ("GET", "/dev/sign-log"),
        ]
    for method, path in routes:
        err = expect_error(method, path, 400, "BadRequestException", {} if method == "POST" else None)
        assert err["message"].startswith("No route for request"), err


DELEGATION = "X-Iceberg-Access-Delegation"


def vend_expected(location, table, namespace, prefix):
    """The config and storage-credentials the --vend file should produce for one table."""

    def fill(value):
        if not prefix:
            value = value.replace("v1/{prefix}/", "v1/")
        for key, repl in (("location", location), ("table", table), ("namespace", namespace), ("prefix", prefix)):
            value = value.replace("{" + key + "}", repl)
        return value

    config = {k: fill(v) for k, v in VEND.get("config", {}).items()}
    creds = [
        {"prefix": fill(c["prefix"]), "config": {k: fill(v) for k, v in c["config"].items()}}
        for c in VEND.get("storage-credentials", [])
    ]
    return config, creds


def rest_vend():
    always = VEND.get("always", False)
    expect("POST", V + "/namespaces", 200, {"namespace": ["vend"]})
    expect("POST", V + "/namespaces", 200, {"namespace": ["vend", "sub"]})
    ns = "vend%1Fsub"  # {namespace} is the encoded path form
    on = {DELEGATION: "vended-credentials"}

    def check_vended(js, want, table, prefix, name):
        config, creds = vend_expected(js["metadata"]["location"], table, ns, prefix)
        assert set(js) <= {"metadata-location", "metadata", "config", "storage-credentials"}, (name, js.keys())
        if want:
            assert js["config"] == config, (name, js.get("config"), config)
            assert js["storage-credentials"] == creds, (name, js.get("storage-credentials"), creds)
        else:
            assert "config" not in js and "storage-credentials" not in js, (name, js)

    # createTable: prefixed path (so {prefix} = anyprefix), header present
    t = expect("POST", P + f"/namespaces/{ns}/tables", 200, {"name": "t", "schema": SCHEMA}, on)
    check_vended(t, True, "t", "anyprefix", "create+header")
    # spot checks written out, not derived like vend_expected's
    if "client.refresh-credentials-endpoint" in VEND.get("config", {}):
        endpoint = t["config"]["client.refresh-credentials-endpoint"]
        assert endpoint == "v1/anyprefix/namespaces/vend%1Fsub/tables/t/credentials", endpoint
    if VEND.get("storage-credentials", [{}])[0].get("prefix") == "{location}":
        assert t["storage-credentials"][0]["prefix"] == t["metadata"]["location"], t["storage-credentials"]
    assert t["metadata"]["location"].startswith("file:///") and t["metadata-location"].startswith("file:///")
    # loadTable: header absent, present, in a list, in other case; other mechanisms only
    plain = expect("GET", V + f"/namespaces/{ns}/tables/t", 200)
    check_vended(plain, always, "t", "", "load, no header")
    if always and "client.refresh-credentials-endpoint" in VEND.get("config", {}):
        endpoint = plain["config"]["client.refresh-credentials-endpoint"]
        assert endpoint == "v1/namespaces/vend%1Fsub/tables/t/credentials", endpoint  # v1// collapsed
    for value in ("vended-credentials", "remote-signing, VENDED-Credentials", "remote-signing"):
        js = expect("GET", V + f"/namespaces/{ns}/tables/t", 200, headers={DELEGATION: value})
        check_vended(js, always or "vended" in value.lower(), "t", "", f"load, header {value!r}")
        # what Iceberg's handler produced is unchanged
        assert (js["metadata-location"], js["metadata"]) == (plain["metadata-location"], plain["metadata"])
    # stage-create: no metadata-location yet, {location} is the staged location
    staged = expect(
        "POST", V + f"/namespaces/{ns}/tables", 200, {"name": "staged", "schema": SCHEMA, "stage-create": True}, on
    )
    assert staged.get("metadata-location") is None and staged["metadata"]["location"].endswith("/vend/sub/staged")
    check_vended(staged, True, "staged", "", "stage-create+header")
    js = expect("POST", V + f"/namespaces/{ns}/tables", 200, {"name": "nohdr", "schema": SCHEMA})
    check_vended(js, always, "nohdr", "", "create, no header")
    # registerTable, header present and absent
    meta = t["metadata-location"]
    js = expect("POST", P + f"/namespaces/{ns}/register", 200, {"name": "reg", "metadata-location": meta}, on)
    check_vended(js, True, "reg", "anyprefix", "register+header")
    js = expect("POST", V + f"/namespaces/{ns}/register", 200, {"name": "reg2", "metadata-location": meta})
    check_vended(js, always, "reg2", "", "register, no header")
    # loadCredentials: always vended with --vend; planId accepted
    _, creds = vend_expected(t["metadata"]["location"], "t", ns, "")
    for q in ("", "?planId=plan-anything"):
        assert expect("GET", V + f"/namespaces/{ns}/tables/t/credentials{q}", 200) == {"storage-credentials": creds}
    _, pcreds = vend_expected(t["metadata"]["location"], "t", ns, "anyprefix")
    assert expect("GET", P + f"/namespaces/{ns}/tables/t/credentials", 200) == {"storage-credentials": pcreds}
    expect_error("GET", V + f"/namespaces/{ns}/tables/none/credentials", 404, "NoSuchTableException")


def rest_planning():
    ns, tbl = "vend%1Fsub", "/namespaces/vend%1Fsub/tables/t"
    location = expect("GET", V + tbl, 200)["metadata"]["location"]
    _, creds = vend_expected(location, "t", ns, "anyprefix")
    # submit (no body, and a PlanTableScanRequest): completed at once, no tasks, a plan-id
    ids = []
    for body in (None, {"snapshot-id": 1, "select": ["x"], "filter": True, "case-sensitive": False}):
        js = expect("POST", P + tbl + "/plan", 200, body)
        assert js.get("plan-id", "").startswith("plan-"), js
        ids.append(js["plan-id"])
        assert js == {
            "status": "completed",
            "plan-id": js["plan-id"],
            "plan-tasks": [],
            "file-scan-tasks": [],
            "delete-files": [],
            "storage-credentials": creds,
        }, js
    assert ids[0] != ids[1], ids
    expect_error("POST", V + tbl + "/plan", 400, None, {"snapshot-id": "not-a-long"})
    expect_error("POST", V + "/namespaces/vend%1Fsub/tables/none/plan", 404, "NoSuchTableException", {})
    # fetch: CompletedPlanningResult (no plan-id in it), then cancel, then it is gone
    js = expect("GET", P + tbl + f"/plan/{ids[0]}", 200)
    assert js == {
        "status": "completed",
        "plan-tasks": [],
        "file-scan-tasks": [],
        "delete-files": [],
        "storage-credentials": creds,
    }, js
    expect_error("GET", V + f"/namespaces/{ns}/tables/nohdr/plan/{ids[0]}", 404, "NoSuchPlanIdException")
    expect_error("GET", V + f"/namespaces/{ns}/tables/none/plan/{ids[0]}", 404, "NoSuchTableException")
    status, _, raw = call("DELETE", V + tbl + f"/plan/{ids[0]}")
    assert (status, raw) == (204, b""), (status, raw)
    expect_error("GET", V + tbl + f"/plan/{ids[0]}", 404, "NoSuchPlanIdException")
    expect_error("DELETE", V + tbl + f"/plan/{ids[0]}", 404, "NoSuchPlanIdException")
    expect_error("GET", V + tbl + "/plan/plan-unknown", 404, "NoSuchPlanIdException")
    expect("DELETE", V + tbl + f"/plan/{ids[1]}", 204)
    # tasks: FetchScanTasksRequest needs a plan-task; answered with no tasks
    assert expect("POST", V + tbl + "/tasks", 200, {"plan-task": "any"}) == {"file-scan-tasks": [], "delete-files": []}
    expect_error("POST", V + tbl + "/tasks", 400, None, {})
    expect_error("POST", V + f"/namespaces/{ns}/tables/none/tasks", 404, "NoSuchTableException", {"plan-task": "any"})


def rest_signing():
    tbl = "/namespaces/vend%1Fsub/tables/t"
    expect("DELETE", "/dev/sign-log", 204)
    requests = [
        {
            "region": "eu-west-1",
            "uri": "https://bucket.s3.eu-west-1.amazonaws.com/vend/sub/t/data/a%20b.parquet?x-id=GetObject",
            "method": "GET",
            "headers": {"Host": ["bucket.s3.eu-west-1.amazonaws.com"], "x-amz-date": ["20260101T000000Z"]},
            "provider": "s3",
        },
        {
            "region": "us-east-1",
            "uri": "s3://bucket/vend/sub/t/data/?delete",
            "method": "POST",
            "headers": {"Content-MD5": ["abc"], "Authorization": ["to be replaced"]},
            "properties": {"k": "v"},
            "body": "<Delete><Object><Key>a</Key></Object></Delete>",
        },
    ]
    for prefix, req in zip((V, P), requests):
        status, js, raw, headers = call("POST", prefix + tbl + "/sign", req, with_headers=True)
        assert status == 200, (status, raw)
        signed = {k: v for k, v in req["headers"].items() if k.lower() != "authorization"}
        names = ";".join(sorted({"host"} | {k.lower() for k in signed}))
        signed["Authorization"] = [
            f"AWS4-HMAC-SHA256 Credential=dev-catalog/20260101/{req['region']}/s3/aws4_request, "
            f"SignedHeaders={names}, Signature=dev-catalog-fake-signature"
        ]
        assert js == {"uri": req["uri"], "headers": signed}, js
        assert headers["Cache-Control"] == "no-cache", dict(headers)
    # refused requests are not recorded
    bad = {"region": "eu-west-1", "uri": "s3://bucket/x", "method": "GET", "headers": {}}
    expect_error("POST", V + "/namespaces/vend%1Fsub/tables/none/sign", 404, "NoSuchTableException", bad)
    expect_error("POST", V + tbl + "/sign", 400, "BadRequestException", {**bad, "method": "FETCH"})
    expect_error("POST", V + tbl + "/sign", 400, "BadRequestException", {"uri": "s3://bucket/x", "method": "GET", "headers": {}})
    log = expect("GET", "/dev/sign-log", 200)
    assert log == [{"table": "vend.sub.t", "method": r["method"], "uri": r["uri"]} for r in requests], log
    expect("DELETE", "/dev/sign-log", 204)
    assert expect("GET", "/dev/sign-log", 200) == []


def pyiceberg_end_to_end():
    import pyarrow as pa
    from pyiceberg.catalog import load_catalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    cat = load_catalog("dev", type="rest", uri=BASE, **{"header.X-Gravitino-Active-Roles": "analyst"})
    cat.create_namespace("py", {"comment": "pyiceberg"})
    assert ("py",) in cat.list_namespaces()
    assert cat.load_namespace_properties("py")["comment"] == "pyiceberg"
    schema = Schema(
        NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(), required=False)
    )
    table = cat.create_table("py.people", schema=schema)
    assert table.location().startswith("file:///"), table.location()
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"])})
    table.append(rows)
    table.append(pa.table({"id": pa.array([4], pa.int64()), "name": pa.array(["d"])}))
    table = cat.load_table("py.people")
    assert len(table.snapshots()) == 2, table.snapshots()
    got = table.scan().to_arrow().sort_by("id")
    assert got.column("id").to_pylist() == [1, 2, 3, 4], got
    assert table.scan(row_filter="id >= 3").to_arrow().num_rows == 2
    assert ("py", "people") in cat.list_tables("py")
    assert cat.table_exists("py.people")
    # schema evolution through a commit
    with table.update_schema() as update:
        update.add_column("age", LongType())
    assert "age" in [f.name for f in cat.load_table("py.people").schema().fields]
    # staged create (stage-create + commit with assert-create)
    with cat.create_table_transaction("py.staged", schema=schema) as tx:
        tx.append(pa.table({"id": pa.array([7], pa.int64()), "name": pa.array(["s"])}))
    assert cat.load_table("py.staged").scan().to_arrow().column("id").to_pylist() == [7]
    # rename and drop
    cat.rename_table("py.people", "py.renamed")
    assert not cat.table_exists("py.people") and cat.table_exists("py.renamed")
    assert cat.load_table("py.renamed").scan().to_arrow().num_rows == 4
    # register a dropped table back from its metadata file
    meta = cat.load_table("py.staged").metadata_location
    cat.drop_table("py.staged")
    cat.register_table("py.registered", meta)
    assert cat.load_table("py.registered").scan().to_arrow().num_rows == 1
    cat.drop_table("py.renamed")
    cat.purge_table("py.registered")
    assert cat.list_tables("py") == []
    cat.drop_namespace("py")
    assert ("py",) not in cat.list_namespaces()


def main():
    check("rest: config and namespaces (create/load/exists/properties/list/pages/drop)", rest_namespaces)
    check("rest: tables (create/stage-create/load/exists/commit/rename/register/drop/purge/metrics/credentials)", rest_tables)
    check("rest: multi-table transactions", rest_transactions)
    check("rest: views (create/list/load/exists/replace/rename/drop)", rest_views)
    check("rest: routes beyond Iceberg 1.10.2 answer 400 BadRequestException", rest_unsupported)
    if VEND is not None:
        mode = "always" if VEND.get("always") else "on request"
        check(f"vend ({mode}): load/create/stage-create/register credentials, placeholders, loadCredentials", rest_vend)
        check("vend: scan planning fixture (plan/fetch/cancel/tasks, no tasks planned)", rest_planning)
        check("vend: fake remote signing and /dev/sign-log", rest_signing)
    else:
        check("pyiceberg: namespace, create, append, scan, evolve, staged create, rename, register, drop", pyiceberg_end_to_end)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
