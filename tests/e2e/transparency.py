"""Transparency, PyIceberg and DuckDB (tests/e2e/transparency.sh): with a policy that allows
everything, a workload gives the same results through icegate as directly at the catalog.

Usage: transparency.py DIRECT_URL DIRECT_WAREHOUSE GATE_URL GATE_WAREHOUSE OUT_DIR

The same workload runs twice, against two fresh dev catalogs: once directly, once through
icegate. Each run records every observable result (transparency_results.Recorder); the two
records must be equal. PyIceberg covers the whole catalog API, with raw REST calls (PyIceberg's
own authenticated session) where PyIceberg has no call: multi-table transactions, view rename and
replace, scan planning. DuckDB runs its subset (attach, schemas, create, insert, read, update and
delete if its extension can, drop) the same way. Exits non-zero when any result differs.
"""
import base64
import json
import os
import sys

import duckdb
import duckdb_extensions
import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.expressions import EqualTo, GreaterThanOrEqual
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import IntegerType, LongType, NestedField, StringType
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from transparency_results import Recorder, report

DIRECT, DIRECT_WH, GATE, GATE_WH, OUT = sys.argv[1:6]
USER = "tess"
BASIC = "Basic " + base64.b64encode(f"{USER}:x".encode()).decode()

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "item", StringType(), required=False),
    NestedField(3, "qty", IntegerType(), required=False),
)
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="item"))


def rows(ids, items, qtys):
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "item": pa.array(items, pa.string()),
        "qty": pa.array(qtys, pa.int32()),
    })


def show_schema(schema):
    return [[f.field_id, f.name, str(f.field_type), f.required] for f in schema.fields]


def show_rows(table):
    data = table.scan().to_arrow().to_pylist()
    return sorted(data, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def show_snapshots(table):
    return [s.summary.operation.value if s.summary else None for s in table.snapshots()]


def show_view(view):
    meta = view.metadata
    version = next(v for v in meta.versions if v.version_id == meta.current_version_id)
    return {
        "schema": show_schema(next(s for s in meta.schemas if s.schema_id == version.schema_id)),
        "sql": [r.root.sql for r in version.representations],
        "versions": [v.version_id for v in meta.versions],
        "properties": meta.properties,
        "location": meta.location,
    }


def pyiceberg_workload(uri, rec):
    """The whole API through PyIceberg, in one order; returns nothing, records everything."""
    cat = load_catalog(f"transparency-{uri}", type="rest", uri=uri, **{
        "auth": {"type": "basic", "basic": {"username": USER, "password": "x"}},
        # every list is paged: the dev catalog pages when asked, icegate seals each token
        "rest-page-size": "2",
    })
    session = cat._session  # PyIceberg's own authenticated session, for what it has no call for

    def rest(method, path, body=None):
        response = session.request(method, f"{uri}/v1/{path}", data=None if body is None else json.dumps(body))
        text = response.text
        return {"status": response.status_code, "body": json.loads(text) if text.strip() else None}

    # Namespaces: nested, with properties, paged lists with and without a parent.
    rec.call("create tr", lambda: cat.create_namespace("tr", {"owner": "tess", "comment": "transparency"}))
    for ns in [("tr", "a"), ("tr", "a", "b"), ("tr", "n1"), ("tr", "n2"), ("tr", "n3")]:
        rec.call(f"create {'.'.join(ns)}", lambda ns=ns: cat.create_namespace(ns, {"level": str(len(ns))}))
    rec.call("create tr again", lambda: cat.create_namespace("tr"))
    rec.call("create under a missing parent", lambda: cat.create_namespace(("nope", "child")))
    rec.call("list top namespaces", lambda: sorted(cat.list_namespaces()))
    rec.call("list tr's children (3 pages)", lambda: cat.list_namespaces("tr"))
    rec.call("list tr.a's children", lambda: cat.list_namespaces(("tr", "a")))
    rec.call("list a missing parent", lambda: cat.list_namespaces("nope"))
    rec.call("tr's properties", lambda: cat.load_namespace_properties("tr"))
    rec.call("update tr's properties", lambda: cat.update_namespace_properties(
        "tr", removals={"comment", "absent"}, updates={"team": "lake"}), lambda s: [s.removed, s.updated, s.missing])
    rec.call("tr's properties after", lambda: cat.load_namespace_properties("tr"))
    rec.call("tr.a.b exists", lambda: cat.namespace_exists(("tr", "a", "b")))
    rec.call("tr.zz exists", lambda: cat.namespace_exists(("tr", "zz")))
    rec.call("missing namespace's properties", lambda: cat.load_namespace_properties(("tr", "zz")))

    # A table: create, append, overwrite, delete rows, read back at each step.
    events = rec.call("create tr.a.events", lambda: cat.create_table(
        ("tr", "a", "events"), schema=SCHEMA, partition_spec=SPEC, properties={"format-version": "2", "k": "v"}),
        lambda t: {"schema": show_schema(t.schema()), "spec": str(t.spec()), "properties": t.properties,
                   "location": t.location()})
    rec.call("create it again", lambda: cat.create_table(("tr", "a", "events"), schema=SCHEMA))
    rec.call("create in a missing namespace", lambda: cat.create_table(("tr", "zz", "t"), schema=SCHEMA))
    events = cat.load_table(("tr", "a", "events"))
    rec.call("append 3", lambda: events.append(rows([1, 2, 3], ["tea", "jam", "oat"], [5, 6, 7])))
    rec.call("rows after append", lambda: show_rows(cat.load_table(("tr", "a", "events"))))
    rec.call("overwrite with 2", lambda: events.overwrite(rows([10, 11], ["tea", "rye"], [1, 2])))
    rec.call("append 2 more", lambda: events.append(rows([12, 13], ["jam", "tea"], [3, 4])))
    rec.call("delete id 11 (row filter)", lambda: events.delete(EqualTo("id", 11)))
    rec.call("delete partition jam", lambda: events.delete(EqualTo("item", "jam")))
    loaded = cat.load_table(("tr", "a", "events"))
    rec.call("rows after deletes", lambda: show_rows(loaded))
    rec.call("filtered scan", lambda: sorted(r["id"] for r in loaded.scan(row_filter=GreaterThanOrEqual("id", 11)).to_arrow().to_pylist()))
    rec.call("snapshot operations", lambda: show_snapshots(loaded))
    rec.call("metadata log length", lambda: len(loaded.metadata.metadata_log))

    # Schema evolution: add, rename, promote in one commit; drop in another.
    def evolve():
        with loaded.update_schema() as u:
            u.add_column("note", StringType())
            u.rename_column("qty", "quantity")
            u.update_column("qty", LongType())
    rec.call("evolve schema", evolve)
    rec.call("drop column note", lambda: loaded.update_schema().delete_column("note").commit())
    evolved = cat.load_table(("tr", "a", "events"))
    rec.call("schema after evolution", lambda: [show_schema(evolved.schema()), [s.schema_id for s in evolved.schemas().values()]])
    rec.call("rows after evolution", lambda: show_rows(evolved))
    stale = cat.load_table(("tr", "a", "events"))

    # A single-table transaction: properties, a schema change and an append in one commit.
    def transaction():
        with evolved.transaction() as tx:
            tx.set_properties({"stage": "two"})
            tx.remove_properties("k")
            tx.update_schema().add_column("tag", StringType()).commit()
            tx.append(pa.table({"id": pa.array([20], pa.int64()), "item": pa.array(["oat"]),
                                "quantity": pa.array([9], pa.int64())}))
    rec.call("single-table transaction", transaction)
    after = cat.load_table(("tr", "a", "events"))
    rec.call("after the transaction", lambda: {"properties": after.properties, "schema": show_schema(after.schema()),
                                               "rows": show_rows(after), "snapshots": show_snapshots(after)})
    rec.call("a stale schema commit conflicts", lambda: stale.update_schema().add_column("late", StringType()).commit())

    # A staged create (stage-create, then a commit with assert-create).
    def staged():
        tx = cat.create_table_transaction(("tr", "n1", "staged"), schema=SCHEMA, properties={"made": "staged"})
        tx.append(rows([1], ["tea"], [1]))
        tx.commit_transaction()
        return cat.load_table(("tr", "n1", "staged"))
    rec.call("create table transaction", staged, lambda t: [t.properties, show_rows(t)])

    # Paged table lists, rename across namespaces, existence, register.
    for name in ["t1", "t2", "t3", "t4"]:
        rec.call(f"create tr.n2.{name}", lambda name=name: cat.create_table(("tr", "n2", name), schema=SCHEMA))
    rec.call("list tr.n2 (2 pages)", lambda: cat.list_tables(("tr", "n2")))
    rec.call("list tr.zz", lambda: cat.list_tables(("tr", "zz")))
    rec.call("rename tr.a.events to tr.a.b.moved", lambda: cat.rename_table(("tr", "a", "events"), ("tr", "a", "b", "moved")),
             lambda t: show_rows(t))
    rec.call("old name exists", lambda: cat.table_exists(("tr", "a", "events")))
    rec.call("new name exists", lambda: cat.table_exists(("tr", "a", "b", "moved")))
    rec.call("rename a missing table", lambda: cat.rename_table(("tr", "a", "gone"), ("tr", "a", "gone2")))
    rec.call("rename onto an existing table", lambda: cat.rename_table(("tr", "n2", "t1"), ("tr", "n2", "t2")))
    rec.call("load a missing table", lambda: cat.load_table(("tr", "a", "gone")))
    moved = cat.load_table(("tr", "a", "b", "moved"))
    rec.call("register moved's metadata as tr.n3.registered", lambda: cat.register_table(
        ("tr", "n3", "registered"), moved.metadata_location), lambda t: show_rows(t))

    # Credentials: loadCredentials (the dev catalog's --vend fixture serves them).
    moved_path, moved_locations = "v1/namespaces/tr%1Fa%1Fb/tables/moved", [moved.location()]
    rec.call("load credentials", lambda: cat._load_credentials(("tr", "a", "b", "moved")),
             lambda r: [{"prefix": c.prefix, "config": c.config} for c in r.storage_credentials],
             section8={"storage": moved_path, "locations": moved_locations})
    rec.call("credentials of a missing table", lambda: cat._load_credentials(("tr", "a", "gone")))
    rec.call("table config as loaded", lambda: rest("GET", "namespaces/tr%1Fa%1Fb/tables/moved")["body"]["config"],
             section8={"config": moved_path})

    # Scan planning (raw REST: the dev catalog's fixture plans nothing, but answers in shape).
    t1_plan = {"plan": "v1/namespaces/tr%1Fn2/tables/t1", "locations": [cat.load_table(("tr", "n2", "t1")).location()]}
    plan = rec.call("plan a scan", lambda: rest("POST", "namespaces/tr%1Fn2/tables/t1/plan", {}), section8=t1_plan)
    plan_id = (plan or {}).get("body", {}).get("plan-id", "none")
    rec.call("fetch the plan", lambda: rest("GET", f"namespaces/tr%1Fn2/tables/t1/plan/{plan_id}"), section8=t1_plan)
    rec.call("fetch tasks", lambda: rest("POST", "namespaces/tr%1Fn2/tables/t1/tasks", {"plan-task": "x"}))
    rec.call("cancel the plan", lambda: rest("DELETE", f"namespaces/tr%1Fn2/tables/t1/plan/{plan_id}"))
    rec.call("fetch the cancelled plan", lambda: rest("GET", f"namespaces/tr%1Fn2/tables/t1/plan/{plan_id}"))

    # A multi-table transaction (raw REST: PyIceberg has none): both commit, or neither.
    t1, t2 = cat.load_table(("tr", "n2", "t1")), cat.load_table(("tr", "n2", "t2"))

    def change(name, uuid, props):
        return {"identifier": {"namespace": ["tr", "n2"], "name": name},
                "requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
                "updates": [{"action": "set-properties", "updates": props}]}
    rec.call("multi-table transaction", lambda: rest("POST", "transactions/commit", {"table-changes": [
        change("t1", str(t1.metadata.table_uuid), {"tx": "1"}),
        change("t2", str(t2.metadata.table_uuid), {"tx": "1"})]}))
    rec.call("a failing multi-table transaction", lambda: rest("POST", "transactions/commit", {"table-changes": [
        change("t1", str(t1.metadata.table_uuid), {"tx": "2"}),
        change("t2", "00000000-0000-0000-0000-000000000000", {"tx": "2"})]}))
    rec.call("both tables after", lambda: [cat.load_table(("tr", "n2", n)).properties for n in ("t1", "t2")])

    # Views: create, list (paged), load, exists, replace and rename (raw REST), drop.
    def create_view(name, sql):
        version = ViewVersion(version_id=1, schema_id=0, timestamp_ms=1767225600000, summary={"engine": "transparency"},
                              representations=[SQLViewRepresentation(type="sql", sql=sql, dialect="spark")],
                              default_namespace=["tr", "n2"])
        return cat.create_view(("tr", "n2", name), schema=SCHEMA, view_version=version, properties={"v": name})
    for name in ["v1", "v2", "v3"]:
        rec.call(f"create view {name}", lambda name=name: create_view(name, f"SELECT * FROM t1 -- {name}"), show_view)
    rec.call("create view v1 again", lambda: create_view("v1", "SELECT 1"))
    rec.call("list views (2 pages)", lambda: cat.list_views(("tr", "n2")))
    rec.call("load view v2", lambda: cat.load_view(("tr", "n2", "v2")), show_view)
    rec.call("view v2 exists", lambda: cat.view_exists(("tr", "n2", "v2")))
    rec.call("view v9 exists", lambda: cat.view_exists(("tr", "n2", "v9")))
    rec.call("load a missing view", lambda: cat.load_view(("tr", "n2", "v9")))
    v2 = cat.load_view(("tr", "n2", "v2"))
    rec.call("replace view v2 (raw REST)", lambda: rest("POST", "namespaces/tr%1Fn2/views/v2", {
        "requirements": [{"type": "assert-view-uuid", "uuid": v2.metadata.view_uuid}],
        "updates": [{"action": "set-properties", "updates": {"replaced": "yes"}}]}),
        lambda r: [r["status"], r["body"]["metadata"]["properties"], len(r["body"]["metadata"]["versions"])])
    rec.call("rename view v3 to tr.n3.v3 (raw REST)", lambda: rest("POST", "views/rename", {
        "source": {"namespace": ["tr", "n2"], "name": "v3"}, "destination": {"namespace": ["tr", "n3"], "name": "v3"}}))
    rec.call("views of tr.n3", lambda: cat.list_views(("tr", "n3")))
    rec.call("load the replaced view", lambda: cat.load_view(("tr", "n2", "v2")), show_view)
    rec.call("register a view", lambda: cat.register_view(("tr", "n2", "rv"), "file:///nowhere/v.metadata.json"))
    rec.call("drop view v1", lambda: cat.drop_view(("tr", "n2", "v1")))
    rec.call("drop a missing view", lambda: cat.drop_view(("tr", "n2", "v1")))
    rec.call("views after", lambda: cat.list_views(("tr", "n2")))

    # Drops: a table, a purge (its files deleted), a missing one, namespaces empty or not.
    metadata_file = moved.metadata_location.removeprefix("file://")
    rec.call("metadata file exists before purge", lambda: os.path.exists(metadata_file))
    rec.call("drop tr.n2.t4", lambda: cat.drop_table(("tr", "n2", "t4")))
    rec.call("drop it again", lambda: cat.drop_table(("tr", "n2", "t4")))
    rec.call("purge tr.a.b.moved", lambda: cat.purge_table(("tr", "a", "b", "moved")))
    rec.call("metadata file exists after purge", lambda: os.path.exists(metadata_file))
    rec.call("tables of tr.a.b", lambda: cat.list_tables(("tr", "a", "b")))
    rec.call("drop non-empty tr.n2", lambda: cat.drop_namespace(("tr", "n2")))
    rec.call("drop empty tr.a.b", lambda: cat.drop_namespace(("tr", "a", "b")))
    rec.call("drop missing tr.a.b", lambda: cat.drop_namespace(("tr", "a", "b")))
    rec.call("tr's children at the end", lambda: cat.list_namespaces("tr"))


def duck_connect(uri):
    con = duckdb.connect()
    for ext in ["avro", "httpfs", "iceberg"]:
        duckdb_extensions.import_extension(ext, con=con)
        con.execute(f"LOAD {ext}")
    con.execute(f"""ATTACH 'wh' AS cat (TYPE iceberg, ENDPOINT '{uri}', AUTHORIZATION_TYPE 'none',
        EXTRA_HTTP_HEADERS MAP {{'Authorization': '{BASIC}'}})""")
    return con


def duckdb_workload(uri, rec):
    """DuckDB's subset: what its iceberg extension does with a REST catalog."""
    con = duck_connect(uri)

    def sql(label, statement):
        rec.call(label, lambda: con.execute(statement).fetchall(), lambda r: [list(map(str, row)) for row in r])
    sql("create schema", "CREATE SCHEMA cat.duck")
    sql("create table", "CREATE TABLE cat.duck.items (id BIGINT, name VARCHAR)")
    sql("create it again", "CREATE TABLE cat.duck.items (id BIGINT, name VARCHAR)")
    sql("insert", "INSERT INTO cat.duck.items VALUES (1, 'tea'), (2, 'jam'), (3, 'oat')")
    sql("insert more", "INSERT INTO cat.duck.items VALUES (4, 'rye')")
    sql("read", "SELECT * FROM cat.duck.items ORDER BY id")
    sql("update", "UPDATE cat.duck.items SET name = 'TEA' WHERE id = 1")
    sql("delete", "DELETE FROM cat.duck.items WHERE id = 2")
    sql("read after", "SELECT * FROM cat.duck.items ORDER BY id")
    sql("read PyIceberg's table", "SELECT count(*) FROM cat.\"tr.n1\".staged")
    sql("list tables", "SELECT database, schema, name FROM (SHOW ALL TABLES) WHERE database = 'cat' ORDER BY ALL")
    sql("read a missing table", "SELECT * FROM cat.duck.nothing")
    sql("snapshots", "SELECT count(*) FROM iceberg_snapshots(cat.duck.items)")
    sql("drop table", "DROP TABLE cat.duck.items")
    sql("drop schema", "DROP SCHEMA cat.duck")
    sql("schemas at the end", "SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'cat' ORDER BY ALL")
    con.close()


failed = 0
for client, workload in [("pyiceberg", pyiceberg_workload), ("duckdb", duckdb_workload)]:
    runs = {}
    for side, uri, warehouse in [("direct", DIRECT, DIRECT_WH), ("icegate", GATE, GATE_WH)]:
        rec = Recorder(warehouse)
        try:
            workload(uri, rec)
        except Exception as e:  # noqa: BLE001 - a workload that stops is recorded as such
            rec.put("the workload ran to its end", f"{type(e).__name__}: {e}")
        rec.dump(os.path.join(OUT, f"{client}-{side}.json"))
        runs[side] = rec.pairs
    failed += report(client, runs["direct"], runs["icegate"])
sys.exit(1 if failed else 0)
