"""PyIceberg through the sidecar pod's published port (tests/pod/run.sh), as the manifests' policy
(deploy/kubernetes/sidecar/policy.yaml) says: bob is an engineer; alice holds analyst and
engineer with analyst active by default; analysts may not see prod.sales.salaries.

usage: pod.py ICEGATE_URL first|restarted|new-policy

first:      bob creates and writes sales.events, and sales.salaries; alice, narrowed to analyst,
            reads events and is refused a write; alice as engineer creates sales.by_alice; the
            lists are filtered; bob may not drop alice's table (he owns neither it nor the schema)
restarted:  (the pod was stopped and played again) the tables are there, bob still may not drop
            alice's table and may drop his own: only his ownership, kept on the volume, allows it
new-policy: (the pod was replaced with a policy that no longer hides salaries from analysts)
            alice's list shows it
"""

import sys

import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import ForbiddenError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

ICEGATE, PHASE = sys.argv[1], sys.argv[2]
failures = 0


def step(label, ok, detail=""):
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {label}{(': ' + detail) if detail else ''}", flush=True)
    if not ok:
        failures += 1


def catalog(user, roles=None):
    props = {"type": "rest", "uri": ICEGATE, "auth": {"type": "basic", "basic": {"username": user, "password": "-"}}}
    if roles:
        props["header.X-Gravitino-Active-Roles"] = roles
    return load_catalog(f"pod-{user}-{roles}", **props)


def refused(fn):
    """The ForbiddenError's message when `fn` is refused, else None (any other outcome)."""
    try:
        fn()
    except ForbiddenError as e:
        return str(e) or "ForbiddenError"
    except Exception as e:  # noqa: BLE001 - reported as the wrong outcome
        return step("refused with 403", False, f"{type(e).__name__}: {e}")
    return None


def names(cat):
    return sorted(t[-1] for t in cat.list_tables("sales"))


schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "item", StringType(), required=False))
rows = pa.table({"id": pa.array([1, 2], pa.int64()), "item": pa.array(["tea", "jam"])})
bob, alice, alice_engineer = catalog("bob"), catalog("alice"), catalog("alice", "engineer")

if PHASE == "first":
    events = bob.create_table("sales.events", schema=schema)
    events.append(rows)
    step("bob (engineer) creates sales.events and appends 2 rows", len(bob.load_table("sales.events").scan().to_arrow()) == 2)
    bob.create_table("sales.salaries", schema=schema)
    step("bob creates sales.salaries", True)
    read = alice.load_table("sales.events").scan().to_arrow()
    step("alice (analyst, the default) reads sales.events", read.num_rows == 2, str(read.num_rows))
    why = refused(lambda: alice.load_table("sales.events").append(rows))
    step("alice (analyst) is refused a write", why is not None, why or "not refused")
    alice_engineer.create_table("sales.by_alice", schema=schema)
    step("alice, active roles engineer, creates sales.by_alice", True)
    step("alice (analyst) lists sales without salaries", names(alice) == ["by_alice", "events"], str(names(alice)))
    step("bob lists all three", names(bob) == ["by_alice", "events", "salaries"], str(names(bob)))
    why = refused(lambda: bob.drop_table("sales.by_alice"))
    step("bob may not drop alice's table", why is not None, why or "not refused")
elif PHASE == "restarted":
    step("the tables outlived the pod", names(bob) == ["by_alice", "events", "salaries"], str(names(bob)))
    read = alice.load_table("sales.events").scan().to_arrow()
    step("alice still reads sales.events", read.num_rows == 2, str(read.num_rows))
    why = refused(lambda: bob.drop_table("sales.by_alice"))
    step("bob still may not drop alice's table", why is not None, why or "not refused")
    bob.drop_table("sales.events")
    step("bob drops sales.events: he still owns it (the store was on the volume)", "events" not in names(bob))
elif PHASE == "new-policy":
    step("alice (analyst) now sees salaries", names(alice) == ["by_alice", "salaries"], str(names(alice)))
else:
    sys.exit(f"unknown phase {PHASE}")

if failures:
    sys.exit(f"{failures} check(s) failed")
