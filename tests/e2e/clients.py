"""End to end through icegate with real clients: PyIceberg and DuckDB against the dev Iceberg REST catalog.

Usage: clients.py ICEGATE_URL CATALOG_URL
Every step prints what it did and what came back; any unexpected outcome exits non-zero.
The policy is policies/example.yaml: bob is an engineer (create, write, read in prod.sales),
alice reads as `analyst` by default, bi-service is capped at `analyst`, dana may only create
tables in prod.scratch (icegate runs with its ownership store on, as by default) and may not move
her table onto another table's files, carol's group owns prod.hr and places tables only inside it.
"""
import base64
import sys
import urllib.request

import duckdb
import duckdb_extensions

import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import ForbiddenError, BadRequestError
from pyiceberg.schema import Schema
from pyiceberg.table.update import SetLocationUpdate
from pyiceberg.types import LongType, NestedField, StringType

ICEGATE, CATALOG = sys.argv[1], sys.argv[2]
failures = 0


def step(label, ok, detail=""):
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {label}{(': ' + detail) if detail else ''}", flush=True)
    if not ok:
        failures += 1


def catalog(user, roles=None):
    props = {"type": "rest", "uri": ICEGATE, "auth": {"type": "basic", "basic": {"username": user, "password": "x"}}}
    if roles is not None:
        props["header.X-Gravitino-Active-Roles"] = roles
    return load_catalog(f"icegate-{user}-{roles}", **props)


def refused(fn, error):
    try:
        fn()
    except error as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 - report the unexpected type
        return f"unexpected {type(e).__name__}: {e}"
    return None


# Setup, as the catalog's own administrator (not through icegate): the namespace exists.
for ns in [b"sales", b"scratch", b"hr"]:
    req = urllib.request.Request(f"{CATALOG}/v1/namespaces", data=b'{"namespace":["' + ns + b'"]}', method="POST",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()

schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "item", StringType(), required=False))
rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "item": pa.array(["tea", "jam", "oat"])})

bob = catalog("bob")
events = bob.create_table("sales.events", schema=schema)
step("bob (engineer) creates sales.events through icegate", True)
events.append(rows)
step("bob appends 3 rows", len(events.refresh().scan().to_arrow()) == 3)

alice = catalog("alice", "analyst")
read = alice.load_table("sales.events").scan().to_arrow()
step("alice narrowed to analyst reads them back", read.num_rows == 3, f"{read.num_rows} rows")
why = refused(lambda: alice.load_table("sales.events").append(rows), ForbiddenError)
step("alice narrowed to analyst cannot append: icegate's message names it and how to see why",
     why is not None and "not authorized to updateTable `sales.events`" in why and "icegate explain" in why and "--active-roles=analyst" in why,
     why or "it was allowed")
why = refused(lambda: alice.drop_table("sales.events"), ForbiddenError)
step("alice narrowed to analyst cannot drop the table", why is not None and "not authorized to dropTable `sales.events`" in why, why or "it was allowed")

bob.create_table("sales.salaries", schema=schema)
listed = sorted(".".join(t) for t in catalog("bi-service").list_tables("sales"))
step("bi-service lists only what analysts may see (salaries is denied)", listed == ["sales.events"], str(listed))

dana = catalog("dana")
notes = dana.create_table("scratch.notes", schema=schema)
notes.append(rows)
step("dana holds only CREATE_TABLE: she creates scratch.notes and writes to it, as its owner",
     len(notes.refresh().scan().to_arrow()) == 3)
why = refused(lambda: catalog("bob").load_table("scratch.notes").append(rows), ForbiddenError)
step("bob cannot touch dana's table", why is not None and "scratch.notes" in why, why or "it was allowed")

# The location rule (docs/design.md §4): owning a table by creating it is not choosing where data
# lives; a move onto another table's directory would give dana's credentials that table's files.
notes_location, events_location = notes.location(), events.location()


def move(table, location):
    with table.transaction() as tx:
        tx._apply((SetLocationUpdate(location=location),))


why = refused(lambda: move(dana.load_table("scratch.notes"), events_location), ForbiddenError)
step("dana may not point scratch.notes at sales.events' files (set-location)",
     why is not None and "not authorized to updateTable `scratch.notes`" in why, why or "it was allowed")
why = refused(lambda: dana.load_table("scratch.notes").transaction().set_properties(
    {"write.data.path": events_location + "/data"}).commit_transaction(), ForbiddenError)
step("dana may not point its write.data.path there either", why is not None, why or "it was allowed")
step("scratch.notes still lives where the catalog placed it", dana.load_table("scratch.notes").location() == notes_location,
     dana.load_table("scratch.notes").location())

# A schema owner places tables, but only inside its namespace's directory (carol's group owns
# prod.hr); the catalog reports no namespace location, so icegate learns it from a stage-create.
carol = catalog("carol")
hr_dir = events_location.rsplit("/", 2)[0] + "/hr"
placed = carol.create_table("hr.reviews", schema=schema, location=hr_dir + "/reviews_2026")
step("carol (owner of prod.hr) creates hr.reviews at a location inside the schema's directory",
     placed.location().rstrip("/") == hr_dir + "/reviews_2026", placed.location())
why = refused(lambda: carol.create_table("hr.grab", schema=schema, location=events_location + "/grab"), ForbiddenError)
step("carol may not place a table inside sales' directory", why is not None and "inside the directory" in why,
     why or "it was allowed")

why = refused(lambda: catalog("bi-service", "engineer").list_tables("sales"), ForbiddenError)
step("bi-service asking for an unheld role gets 403", why is not None and "cannot assume active role" in why, why or "allowed")
why = refused(lambda: catalog("alice", "analyst,").list_tables("sales"), BadRequestError)
step("a malformed role header gets 400", why is not None and "X-Gravitino-Active-Roles" in why, why or "allowed")



def duck(user, roles):
    """DuckDB has no basic auth: the `simple` credential goes as a header (docs/design.md §13)."""
    con = duckdb.connect()
    for ext in ["avro", "httpfs", "iceberg"]:
        duckdb_extensions.import_extension(ext, con=con)
        con.execute(f"LOAD {ext}")
    auth = "Basic " + base64.b64encode(f"{user}:-".encode()).decode()
    con.execute(f"""ATTACH 'wh' AS cat (TYPE iceberg, ENDPOINT '{ICEGATE}', AUTHORIZATION_TYPE 'none',
        EXTRA_HTTP_HEADERS MAP {{'Authorization': '{auth}', 'X-Gravitino-Active-Roles': '{roles}'}})""")
    return con


con = duck("alice", "analyst")
tables = sorted(row[2] for row in con.execute("SHOW ALL TABLES").fetchall() if row[0] == "cat")
step("duckdb as alice/analyst lists only what she may see", tables == ["events"], str(tables))
count = con.execute("SELECT count(*) FROM cat.sales.events").fetchone()[0]
step("duckdb as alice/analyst reads the rows", count == 3, f"{count} rows")
try:
    duck("bi-service", "engineer").execute("SELECT count(*) FROM cat.sales.events").fetchall()
    step("duckdb with an unheld role is refused", False, "it was allowed")
except duckdb.Error as e:
    step("duckdb with an unheld role is refused with icegate's message", "cannot assume active role(s) that are not held: engineer" in str(e), str(e).splitlines()[0][:200])

bob_duck = duck("bob", "engineer")
bob_duck.execute("INSERT INTO cat.sales.events VALUES (4, 'rye')")
count = con.execute("SELECT count(*) FROM cat.sales.events").fetchone()[0]
step("duckdb as bob/engineer inserts a row (alice then reads 4)", count == 4, f"{count} rows")
try:
    con.execute("INSERT INTO cat.sales.events VALUES (5, 'x')")
    step("duckdb as alice/analyst cannot insert", False, "it was allowed")
except duckdb.Error as e:
    step("duckdb as alice/analyst cannot insert, with icegate's message and the explain hint",
         "not authorized to commitTransaction" in str(e) and "icegate explain" in str(e), str(e)[:400].replace("\n", " "))

total = 15
print(f"{total - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
