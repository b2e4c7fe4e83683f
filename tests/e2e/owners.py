"""Ownership by creation (issue 9) with PyIceberg against the dev catalog, through icegate.

Usage: owners.py ICEGATE_URL CATALOG_URL before|after
`before`: carol creates lab.t, appends and renames it to lab2.t2, dave (same privileges) can
neither append to nor drop it. `after` (icegate restarted in between): carol still owns lab2.t2,
dave still cannot touch it, carol drops it.
"""
import base64
import json
import sys
import urllib.error
import urllib.request

import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import ForbiddenError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

ICEGATE, CATALOG, PHASE = sys.argv[1], sys.argv[2], sys.argv[3]
failures = 0


def step(label, ok, detail=""):
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {label}{(': ' + detail) if detail else ''}", flush=True)
    if not ok:
        failures += 1


def catalog(user):
    props = {"type": "rest", "uri": ICEGATE, "auth": {"type": "basic", "basic": {"username": user, "password": "x"}}}
    return load_catalog(f"icegate-{user}", **props)


def refused(fn):
    try:
        fn()
    except ForbiddenError as e:
        return str(e) or "ForbiddenError"
    except Exception as e:  # noqa: BLE001 - report the unexpected type
        step("refused with ForbiddenError", False, f"unexpected {type(e).__name__}: {e}")
        return None
    return None


def raw(user, method, path, body=None):
    """A request through icegate by hand (a commit without loading the table first)."""
    auth = base64.b64encode(f"{user}:x".encode()).decode()
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"{ICEGATE}{path}", data=data, method=method,
                                 headers={"Authorization": f"Basic {auth}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


rows = pa.table({"id": pa.array([1, 2], pa.int64()), "item": pa.array(["tea", "jam"])})
schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "item", StringType(), required=False))
carol, dave = catalog("carol"), catalog("dave")
commit = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"touched": "yes"}}]}

if PHASE == "before":
    for ns in ("lab", "lab2"):
        req = urllib.request.Request(f"{CATALOG}/v1/namespaces", data=json.dumps({"namespace": [ns]}).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req).read()
    t = carol.create_table("lab.t", schema=schema)
    step("carol (CREATE_TABLE, no MODIFY_TABLE) creates lab.t", True)
    t.append(rows)
    step("carol appends to the table she created", len(carol.load_table("lab.t").scan().to_arrow()) == 2)
    step("dave cannot load carol's table", refused(lambda: dave.load_table("lab.t")) is not None)
    step("dave cannot commit to carol's table", raw("dave", "POST", "/v1/namespaces/lab/tables/t", commit) == 403)
    step("dave cannot drop carol's table", refused(lambda: dave.drop_table("lab.t")) is not None)
    carol.rename_table("lab.t", "lab2.t2")
    step("carol renames lab.t to lab2.t2", True)
    carol.load_table("lab2.t2").append(rows)
    step("carol appends after the rename", len(carol.load_table("lab2.t2").scan().to_arrow()) == 4)
    step("dave cannot append after the rename", refused(lambda: dave.load_table("lab2.t2").append(rows)) is not None)
    step("dave's own table is his", dave.create_table("lab.d", schema=schema) is not None)
    step("carol cannot drop dave's table", refused(lambda: carol.drop_table("lab.d")) is not None)
else:
    carol.load_table("lab2.t2").append(rows)
    step("after a restart carol still appends to lab2.t2", len(carol.load_table("lab2.t2").scan().to_arrow()) == 6)
    step("after a restart dave still cannot commit", raw("dave", "POST", "/v1/namespaces/lab2/tables/t2", commit) == 403)
    step("after a restart dave still cannot drop", refused(lambda: dave.drop_table("lab2.t2")) is not None)
    carol.drop_table("lab2.t2")
    step("carol drops her table", not carol.table_exists("lab2.t2"))
    dave.drop_table("lab.d")
    step("dave drops his", True)

sys.exit(1 if failures else 0)
