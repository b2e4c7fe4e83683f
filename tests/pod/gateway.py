"""PyIceberg through the gateway's two replicas (tests/pod/gateway.sh), with the JWTs the gateway
manifests verify (tests/pod/idp.py), under their policy (deploy/kubernetes/gateway/policy.yaml):
bob is an engineer (MODIFY_TABLE on prod.sales, so he may alter any table there but drop only
what he owns); alice holds analyst and engineer, analyst active by default (no MODIFY_TABLE:
as analyst she may alter and drop only what she owns).

usage: gateway.py WORK A_URL B_URL shared|failover|back

shared:   alice, as engineer, creates sales.by_alice through A. Through B: alice as analyst
          sets a property on it and drops it, which only her ownership allows, recorded by A in
          the store B reads (waited for up to 10 s: B learns of A's writes by notification or
          within its 5 s poll); bob, an engineer who does not own it, may not drop it.
failover: (A is stopped) bob creates sales.during_failover through B and lists it.
back:     (A is started again) bob drops sales.during_failover through A: only his ownership,
          recorded by B, allows it.
"""

import subprocess
import sys
import time

from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import ForbiddenError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

WORK, A, B, PHASE = sys.argv[1:5]
failures = 0


def step(label, ok, detail=""):
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {label}{(': ' + detail) if detail else ''}", flush=True)
    if not ok:
        failures += 1


def catalog(url, user, roles=None):
    jwt = subprocess.run([sys.executable, f"{sys.path[0]}/idp.py", "token", WORK, user], check=True, capture_output=True, text=True).stdout.strip()
    props = {"type": "rest", "uri": url, "token": jwt}
    if roles:
        props["header.X-Gravitino-Active-Roles"] = roles
    return load_catalog(f"gw-{url}-{user}-{roles}", **props)


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


schema = Schema(NestedField(1, "id", LongType(), required=False))

if PHASE == "shared":
    catalog(A, "alice", "engineer").create_table("sales.by_alice", schema=schema)
    step("A: alice, active roles engineer, creates sales.by_alice", True)
    alice_b, bob_b = catalog(B, "alice"), catalog(B, "bob")
    started, why = time.monotonic(), "not tried"
    while time.monotonic() < started + 10:
        try:
            alice_b.load_table("sales.by_alice").transaction().set_properties(reviewed="yes").commit_transaction()
            why = None
            break
        except ForbiddenError as e:
            why = str(e)
            time.sleep(0.5)
    waited = f"after {time.monotonic() - started:.1f} s" if why is None else why
    step("B: alice (analyst: no MODIFY_TABLE) sets a property on sales.by_alice: her ownership, from the store", why is None, waited)
    if why is None:
        props = catalog(B, "bob").load_table("sales.by_alice").properties
        step("B: the property is set", props.get("reviewed") == "yes", str(props))
    why = refused(lambda: bob_b.drop_table("sales.by_alice"))
    step("B: bob (engineer, not the owner) may not drop sales.by_alice", why is not None, why or "not refused")
    why = refused(lambda: alice_b.drop_table("sales.by_alice"))
    step("B: alice (analyst) drops sales.by_alice: her ownership, from the store", why is None and "by_alice" not in names(bob_b), why or "")
elif PHASE == "failover":
    bob_b = catalog(B, "bob")
    bob_b.create_table("sales.during_failover", schema=schema)
    step("B, A stopped: bob creates sales.during_failover", "during_failover" in names(bob_b), str(names(bob_b)))
elif PHASE == "back":
    bob_a = catalog(A, "bob")
    why = refused(lambda: bob_a.drop_table("sales.during_failover"))
    step("A, started again: bob drops sales.during_failover: his ownership, recorded by B", why is None and "during_failover" not in names(bob_a), why or "")
else:
    sys.exit(f"unknown phase {PHASE}")

if failures:
    sys.exit(f"{failures} check(s) failed")
