"""Read restrictions (docs/design.md §8) with PyIceberg against the dev catalog, through icegate.

Usage: restrictions.py ICEGATE_URL CATALOG_URL before|evolved-old-policy|evolved|cover
`before`: the table is created and filled at the catalog; the trusted engine's loadTable carries
the restrictions by field id; the REFERENCE READER below (test code: PyIceberg reads, pyarrow
applies the row filter and the masks the answer requires) shows masked columns and EU rows only
to the engine and the raw data to `hr`, whose active `pii_reader` lifts them; `alice`, whose
client is not trusted to enforce restrictions, is refused, and so is `hr` narrowed to `analyst`.
The restricted columns are then renamed and reordered at the catalog (field ids stay).
`evolved-old-policy`: icegate, whose policy names the old columns, fails closed (403).
`evolved`: with the policy naming the new columns, the same field ids, and the reader still masks.
`cover`: the table's owner `olga` may not rename the table (the restriction names it) nor give a
restricted column's name to a new column (docs/design.md §8 "A restriction keeps covering what it
covered"); renaming a column away and back, and adding an unrelated column, are accepted; after
each, the engine's answer carries the same field ids.

PyIceberg 0.12 and DuckDB 1.5.5 ignore `read-restrictions` (they would read raw data), which is why
icegate refuses them unless the policy names them enforcers; the reader here does the enforcing.
"""
import base64
import json
import sys
import urllib.error
import urllib.request

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import ForbiddenError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

ICEGATE, CATALOG, PHASE = sys.argv[1], sys.argv[2], sys.argv[3]
TABLE_PATH = "/v1/namespaces/sales/tables/customers"
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


def load_raw(user, roles=None):
    """The loadTable answer as icegate gives it: (status, JSON)."""
    headers = {"Authorization": "Basic " + base64.b64encode(f"{user}:x".encode()).decode()}
    if roles is not None:
        headers["X-Gravitino-Active-Roles"] = roles
    req = urllib.request.Request(f"{ICEGATE}{TABLE_PATH}", headers=headers)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


# --- the reference reader: applies a loadTable answer's read-restrictions to what it reads ------

def mask_alphanum(s):
    keep = set("(),.-@")
    return "".join("n" if c.isascii() and c.isdigit() else c if c in keep else "x" for c in s)


ACTIONS = {
    "mask-alphanum": lambda col: pa.array([None if v is None else mask_alphanum(v) for v in col.to_pylist()], col.type),
    "replace-with-null": lambda col: pa.nulls(len(col), col.type),
    "show-first-4": lambda col: pa.array(
        [None if v is None else v if len(v) <= 4 else v[:4] + mask_alphanum(v[4:]) for v in col.to_pylist()], col.type),
    "show-last-4": lambda col: pa.array(
        [None if v is None else v if len(v) <= 4 else mask_alphanum(v[:-4]) + v[-4:] for v in col.to_pylist()],
        col.type),
}


def predicate(expr, data, name_of):
    """A boolean mask of `data`'s rows for an Iceberg expression whose references are field ids;
    an expression it cannot evaluate fails (the spec: a reader fails rather than skip)."""
    if expr is True or expr is False:
        return pa.array([expr] * data.num_rows)
    kind = expr["type"]
    if kind in ("and", "or"):
        left, right = predicate(expr["left"], data, name_of), predicate(expr["right"], data, name_of)
        return pc.and_kleene(left, right) if kind == "and" else pc.or_kleene(left, right)
    if kind == "not":
        return pc.invert(predicate(expr["child"], data, name_of))

    def column(ref):
        if not (isinstance(ref, dict) and ref.get("type") == "reference" and "id" in ref):
            raise ValueError(f"not a field-id reference: {ref}")
        return data.column(name_of(ref["id"]))

    if kind in ("is-null", "not-null"):
        col = column(expr["child"])
        return pc.is_null(col) if kind == "is-null" else pc.is_valid(col)
    if kind in ("in", "not-in"):
        found = pc.is_in(column(expr["child"]), value_set=pa.array(expr["values"]))
        return found if kind == "in" else pc.invert(found)
    compare = {"eq": pc.equal, "not-eq": pc.not_equal, "lt": pc.less, "lt-eq": pc.less_equal,
               "gt": pc.greater, "gt-eq": pc.greater_equal}
    if kind in compare:
        right = expr["right"]
        value = right["value"] if isinstance(right, dict) else right
        return compare[kind](column(expr["left"]), pa.scalar(value))
    raise ValueError(f"cannot evaluate a `{kind}` filter")


def read_restricted(table, restrictions):
    """Reads `table` and applies `restrictions`: the row filter on the original values first
    (a row whose filter is false or null is dropped), then each column's action."""
    data = table.scan().to_arrow()
    schema = table.schema()

    def name_of(field_id):
        return schema.find_field(field_id).name

    if restrictions.get("required-row-filter") is not None:
        keep = predicate(restrictions["required-row-filter"], data, name_of)
        data = data.filter(pc.fill_null(keep, False))
    for p in restrictions.get("required-column-projections", []):
        name = name_of(p["field-id"])
        if p["action"] not in ACTIONS:
            raise ValueError(f"cannot apply action `{p['action']}`")
        data = data.set_column(data.schema.get_field_index(name), name, ACTIONS[p["action"]](data.column(name)))
    return data.sort_by("id")


# --- the phases ---------------------------------------------------------------------------------

admin = load_catalog("dev-admin", type="rest", uri=CATALOG)
expected_restrictions = {
    "required-row-filter": {"type": "eq", "left": {"type": "reference", "id": 3}, "right": "EU"},
    "required-column-projections": [
        {"field-id": 2, "action": "mask-alphanum"},
        {"field-id": 4, "action": "replace-with-null"},
        {"field-id": 5, "action": "show-last-4"},
    ],
}

if PHASE == "before":
    admin.create_namespace("sales")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False), NestedField(2, "email", StringType(), required=False),
        NestedField(3, "region", StringType(), required=False), NestedField(4, "ssn", StringType(), required=False),
        NestedField(5, "phone", StringType(), required=False))
    t = admin.create_table("sales.customers", schema=schema)
    t.append(pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int64()),
        "email": ["ann.lee@mail.com", "bo@corp.us", "cy@site.de", "dee@x.fr"],
        "region": ["EU", "US", "EU", None],
        "ssn": ["123-45-6789", "987-65-4321", None, "555-12-0000"],
        "phone": ["+44 20 7946 0018", "+1 212 555 0100", "+49 30 1234 5678", "0033 1 4000"],
    }))
    step("the table is created and filled at the catalog", True)

    status, answer = load_raw("engine")
    step("the trusted engine loads the table", status == 200, str(status))
    step("its answer carries the restrictions by field id", answer.get("read-restrictions") == expected_restrictions,
         json.dumps(answer.get("read-restrictions")))

    engine = catalog("engine")
    got = read_restricted(engine.load_table("sales.customers"), answer["read-restrictions"]).to_pylist()
    step("the reference reader shows the engine only EU rows, with masked columns", got == [
        {"id": 1, "email": "xxx.xxx@xxxx.xxx", "region": "EU", "ssn": None, "phone": "xnnxnnxnnnnx0018"},
        {"id": 3, "email": "xx@xxxx.xx", "region": "EU", "ssn": None, "phone": "xnnxnnxnnnnx5678"},
    ], str(got))

    # DuckDB listed as the trusted engine: what a real engine does with the restrictions it is
    # given. DuckDB 1.5.5 ignores them and reads raw rows, which is why docs/restrictions.md says
    # never to list it; a DuckDB that enforces or refuses them makes this step fail (update the doc).
    import duckdb
    import duckdb_extensions
    con = duckdb.connect()
    for ext in ["avro", "httpfs", "iceberg"]:
        duckdb_extensions.import_extension(ext, con=con)
        con.execute(f"LOAD {ext}")
    auth = "Basic " + base64.b64encode(b"engine:-").decode()
    con.execute(f"""ATTACH 'wh' AS cat (TYPE iceberg, ENDPOINT '{ICEGATE}', AUTHORIZATION_TYPE 'none',
        EXTRA_HTTP_HEADERS MAP {{'Authorization': '{auth}'}})""")
    try:
        duck_rows = con.execute("SELECT id, email FROM cat.sales.customers ORDER BY id").fetchall()
    except duckdb.Error as e:
        duck_rows = f"refused: {str(e).splitlines()[0][:300]}"
    step("DuckDB 1.5.5 given the restrictions ignores them and reads raw rows (never list it as an enforcer)",
         isinstance(duck_rows, list) and len(duck_rows) == 4 and duck_rows[0][1] == "ann.lee@mail.com", str(duck_rows))

    status, answer = load_raw("hr")
    step("hr (pii_reader active) gets no restrictions", status == 200 and "read-restrictions" not in answer,
         str(status))
    raw = catalog("hr").load_table("sales.customers").scan().to_arrow().sort_by("id")
    step("hr reads the raw data", raw.column("email").to_pylist()[0] == "ann.lee@mail.com" and raw.num_rows == 4,
         str(raw.to_pylist()[:1]))

    try:
        catalog("alice").load_table("sales.customers")
        step("alice's client, not trusted to enforce restrictions, is refused", False, "loaded")
    except ForbiddenError as e:
        step("alice's client, not trusted to enforce restrictions, is refused", "not trusted to enforce" in str(e),
             str(e))
    status, answer = load_raw("hr", "analyst")
    step("hr narrowed to analyst is refused too (narrowing adds restrictions)", status == 403, str(status))
    listed = [ident[-1] for ident in catalog("alice").list_tables("sales")]
    step("alice's list still shows the table", listed == ["customers"], str(listed))

    # at the catalog: the restricted columns renamed and reordered; their field ids stay
    with admin.load_table("sales.customers").update_schema() as update:
        update.rename_column("email", "contact")
        update.rename_column("region", "area")
        update.rename_column("ssn", "national_id")
    with admin.load_table("sales.customers").update_schema() as update:
        update.move_first("national_id")
        update.move_after("area", "id")
    step("the restricted columns are renamed and reordered at the catalog", True)

elif PHASE == "evolved-old-policy":
    status, answer = load_raw("engine")
    message = answer.get("error", {}).get("message", "")
    step("a policy naming columns the table no longer has fails closed", status == 403
         and "cannot issue" in message, f"{status} {message}")

elif PHASE == "evolved":
    status, answer = load_raw("engine")
    step("the restrictions of the policy naming the new columns have the same field ids",
         status == 200 and answer.get("read-restrictions") == expected_restrictions,
         f"{status} {json.dumps(answer.get('read-restrictions'))}")
    names = [f["name"] for f in answer["metadata"]["schemas"][-1]["fields"]]
    step("the current schema has the new names in the new order",
         names == ["national_id", "id", "area", "contact", "phone"], str(names))
    got = read_restricted(catalog("engine").load_table("sales.customers"), answer["read-restrictions"]).to_pylist()
    step("the reference reader still masks and filters, under the new names",
         [(r["id"], r["contact"], r["national_id"]) for r in got]
         == [(1, "xxx.xxx@xxxx.xxx", None), (3, "xx@xxxx.xx", None)], str(got))

elif PHASE == "cover":
    from pyiceberg.exceptions import ForbiddenError as Forbidden

    owner = catalog("olga")
    moved_out = "move data out from under a read restriction"

    def same_ids(after):
        status, answer = load_raw("engine")
        step(f"after {after}, the engine's answer carries the same field ids",
             status == 200 and answer.get("read-restrictions") == expected_restrictions,
             f"{status} {json.dumps(answer.get('read-restrictions') or answer.get('error'))}")

    def ids_at_catalog():
        return {f.name: f.field_id for f in admin.load_table("sales.customers").schema().fields}

    before = ids_at_catalog()
    try:
        owner.rename_table("sales.customers", "sales.customers_copy")
        step("the owner's rename of the restricted table is refused", False, "renamed")
    except Forbidden as e:
        step("the owner's rename of the restricted table is refused", moved_out in str(e), str(e))
    step("the table keeps its name", admin.table_exists("sales.customers")
         and not admin.table_exists("sales.customers_copy"))
    same_ids("the refused rename")

    # one update: rename the restricted column and give its name to a new column. PyIceberg may
    # refuse this itself (the name still exists in the schema it starts from); icegate refuses it
    # if it is sent
    try:
        with owner.load_table("sales.customers").update_schema() as update:
            update.rename_column("national_id", "x")
            update.add_column("national_id", StringType())
        step("rename_column + add_column of its old name is refused", False, "committed")
    except Forbidden as e:
        step("rename_column + add_column of its old name is refused by icegate", moved_out in str(e), str(e))
    except ValueError as e:
        step("rename_column + add_column of its old name is refused (by PyIceberg, before icegate)",
             "already exists" in str(e), str(e))
    step("the catalog's schema is unchanged", ids_at_catalog() == before, str(ids_at_catalog()))

    # the same in two commits: renaming away is accepted (the engine's reads fail closed until
    # the policy follows); the decoy is refused by icegate; renaming back is accepted
    with owner.load_table("sales.customers").update_schema() as update:
        update.rename_column("national_id", "x")
    status, _ = load_raw("engine")
    step("renaming the restricted column away is accepted, and the engine's reads fail closed", status == 403,
         str(status))
    try:
        with owner.load_table("sales.customers").update_schema() as update:
            update.add_column("national_id", StringType())
        step("add_column of the restricted column's old name is refused", False, "committed")
    except Forbidden as e:
        step("add_column of the restricted column's old name is refused", moved_out in str(e), str(e))
    with owner.load_table("sales.customers").update_schema() as update:
        update.rename_column("x", "national_id")
    step("renaming it back is accepted", ids_at_catalog() == before, str(ids_at_catalog()))
    same_ids("the refused decoy")

    with owner.load_table("sales.customers").update_schema() as update:
        update.add_column("note", StringType())
    step("add_column of an unrelated column is accepted", "note" in ids_at_catalog(), str(ids_at_catalog()))
    same_ids("the new column")

sys.exit(1 if failures else 0)
