"""Smoke test of the dev catalog: raw REST calls for every route family, then PyIceberg end to end.

Usage: smoke_test.py http://127.0.0.1:PORT [--jdbc]   (run by smoke.sh)
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


def call(method, path, body=None, headers=None):
    """One HTTP request; returns (status, parsed JSON or None, raw bytes)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    req.add_header("Authorization", "Bearer ignored")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req) as resp:
            raw = resp.read()
            return resp.status, (json.loads(raw) if raw else None), raw
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, (json.loads(raw) if raw else None), raw


def expect(method, path, status, body=None):
    got, js, raw = call(method, path, body)
    assert got == status, f"{method} {path}: want {status}, got {got}: {raw[:300]!r}"
    return js


def expect_error(method, path, status, etype=None, body=None):
    js = expect(method, path, status, body)
    err = js["error"]
    assert err["code"] == status and err["message"] and err["type"], js
    if etype:
        assert err["type"] == etype, f"want {etype}, got {err['type']}"
    return err


SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "x", "type": "long", "required": False}]}
V = "/v1"  # no-prefix form
P = "/v1/anyprefix"  # prefixed form


def rest_namespaces():
    cfg = expect("GET", "/v1/config?warehouse=wh", 200)
    assert cfg["defaults"]["warehouse"].startswith("file:///"), cfg
    assert "POST /v1/{prefix}/transactions/commit" in cfg["endpoints"], cfg
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
    # credentials: none vended
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
    for method, path in [
        ("GET", "/namespaces/rest/functions"),
        ("GET", "/namespaces/rest/functions/f"),
        ("POST", "/namespaces/rest/tables/ta/unregister"),
        ("POST", "/namespaces/rest/register-view"),
        ("POST", "/namespaces/rest/tables/ta/sign"),
        ("POST", "/namespaces/rest/tables/ta/plan"),
        ("GET", "/namespaces/rest/tables/ta/plan/p1"),
        ("DELETE", "/namespaces/rest/tables/ta/plan/p1"),
        ("POST", "/namespaces/rest/tables/ta/tasks"),
        ("POST", "/oauth/tokens"),
        ("PUT", "/namespaces"),
    ]:
        err = expect_error(method, V + path, 400, "BadRequestException", {} if method == "POST" else None)
        assert err["message"].startswith("No route for request"), err


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
    check("pyiceberg: namespace, create, append, scan, evolve, staged create, rename, register, drop", pyiceberg_end_to_end)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
