"""Two dev catalogs behind one icegate (tests/e2e/many_upstreams.sh, docs/design.md §7).

Upstream `rest` serves catalog `prod` (warehouse `prod-wh`, the default upstream), upstream
`lake` serves catalog `analytics` (warehouse `analytics-wh`); each dev catalog advertises and
accepts only its own prefix. With PyIceberg through icegate:
  - getConfig picks the upstream by `warehouse` (none: the default), and an unlisted warehouse
    is 400 with icegate's message;
  - tables created in each catalog land only in that catalog's upstream: what each holds (on
    disk, and through its own API asked directly) and the request log each prints show it;
  - `orphan`, named by the policy but served by no upstream, is 403 with icegate's message and
    reaches neither; bob, who may read `prod` only, is refused `analytics` by the one policy;
  - audit lines name each request's upstream, metrics carry an `upstream` label per upstream;
  - with `lake` stopped, `prod` still serves, `analytics` fails, and /readyz says which is down.
Exits non-zero on the first failure.
"""

import argparse
import json
import os
import re
import signal
import time
import urllib.error
import urllib.request
from base64 import b64encode
from pathlib import Path

import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import BadRequestError, ForbiddenError, NoSuchNamespaceError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "item", StringType(), required=False))


def rows(ids, items):
    return pa.Table.from_pydict({"id": ids, "item": items},
                                schema=pa.schema([("id", pa.int64()), ("item", pa.string())]))


def check(what, ok, detail=""):
    if not ok:
        raise SystemExit(f"FAIL: {what}{': ' + str(detail) if detail else ''}")
    print(f"ok: {what}")


def through(gate, user, warehouse=None):
    props = {"auth": {"type": "basic", "basic": {"username": user, "password": "x"}}}
    if warehouse is not None:
        props["warehouse"] = warehouse
    return load_catalog(f"gate-{user}-{warehouse}", type="rest", uri=gate, **props)


def direct(uri):
    return load_catalog(f"direct-{uri}", type="rest", uri=uri)


def http(method, url, user="ann"):
    token = b64encode(f"{user}:x".encode()).decode()
    request = urllib.request.Request(url, method=method, headers={"Authorization": f"Basic {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def raises(what, call, kind, message):
    try:
        call()
    except kind as e:
        check(what, message in str(e), e)
        return
    except Exception as e:  # noqa: BLE001 - the wrong kind is the failure reported
        raise SystemExit(f"FAIL: {what}: {type(e).__name__}: {e}")
    raise SystemExit(f"FAIL: {what}: no error")


def requests_at(log):
    """The requests a dev catalog printed (`METHOD URI -> STATUS`)."""
    return re.findall(r"^(GET|POST|DELETE|HEAD|PUT) (\S+) -> (\d+)$", Path(log).read_text(), re.M)


def readyz(admin):
    try:
        with urllib.request.urlopen(f"{admin}/readyz", timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def main():
    ap = argparse.ArgumentParser()
    for flag in ["--gate", "--admin", "--rest", "--lake", "--work"]:
        ap.add_argument(flag, required=True)
    ap.add_argument("--lake-pid", type=int, required=True)
    a = ap.parse_args()
    work = Path(a.work)

    # getConfig by warehouse: none goes to the default (`rest`), each listed one to its upstream,
    # and the prefix each answers sends the client's next requests to that upstream's catalog.
    prod = through(a.gate, "ann")
    check("getConfig without a warehouse: the default upstream's prefix", prod.properties.get("prefix") == "prod",
          prod.properties.get("prefix"))
    prod_wh = through(a.gate, "ann", "prod-wh")
    check("getConfig for warehouse prod-wh: upstream rest", prod_wh.properties.get("prefix") == "prod",
          prod_wh.properties.get("prefix"))
    analytics = through(a.gate, "ann", "analytics-wh")
    check("getConfig for warehouse analytics-wh: upstream lake", analytics.properties.get("prefix") == "analytics",
          analytics.properties.get("prefix"))
    raises("getConfig for a warehouse no upstream lists is 400",
           lambda: through(a.gate, "ann", "nowhere"), BadRequestError,
           "no upstream answers getConfig for warehouse `nowhere`")

    # Each catalog's tables, created and written through icegate.
    prod.create_namespace("sales")
    orders = prod.create_table(("sales", "orders"), schema=SCHEMA)
    orders.append(rows([1, 2], ["tea", "jam"]))
    analytics.create_namespace("events")
    clicks = analytics.create_table(("events", "clicks"), schema=SCHEMA)
    clicks.append(rows([7, 8, 9], ["a", "b", "c"]))
    check("prod's rows read back through icegate",
          sorted(r["id"] for r in prod_wh.load_table(("sales", "orders")).scan().to_arrow().to_pylist()) == [1, 2])
    check("analytics' rows read back through icegate",
          sorted(r["id"] for r in analytics.load_table(("events", "clicks")).scan().to_arrow().to_pylist()) == [7, 8, 9])
    check("each catalog lists only its own namespaces through icegate",
          (prod.list_namespaces(), analytics.list_namespaces()) == ([("sales",)], [("events",)]),
          (prod.list_namespaces(), analytics.list_namespaces()))

    # What each upstream holds: asked directly, and on disk.
    rest, lake = direct(a.rest), direct(a.lake)
    check("rest holds prod's namespace only", rest.list_namespaces() == [("sales",)], rest.list_namespaces())
    check("lake holds analytics' namespace only", lake.list_namespaces() == [("events",)], lake.list_namespaces())
    check("rest's table has prod's rows",
          sorted(r["id"] for r in rest.load_table(("sales", "orders")).scan().to_arrow().to_pylist()) == [1, 2])
    check("lake's table has analytics' rows",
          sorted(r["id"] for r in lake.load_table(("events", "clicks")).scan().to_arrow().to_pylist()) == [7, 8, 9])
    files = {side: sorted(str(p.relative_to(work / f"warehouse-{side}")).split("/")[0]
                          for p in (work / f"warehouse-{side}").rglob("*.parquet")) for side in ["rest", "lake"]}
    check("data files: prod's in rest's warehouse, analytics' in lake's",
          set(files["rest"]) == {"sales"} and set(files["lake"]) == {"events"}, files)

    # A catalog no upstream serves, and the one policy's denial, reach no upstream.
    # icegate's readiness probe (`GET /v1/config`, every few seconds) may reach either upstream
    # meanwhile: it is not a request of the caller's, so it is not counted
    def asked(side):
        return len([r for r in requests_at(work / f"catalog-{side}.log") if not r[1].startswith("/v1/config")])
    before = {side: asked(side) for side in ["rest", "lake"]}
    status, body = http("GET", f"{a.gate}/v1/orphan/namespaces")
    check("a catalog no upstream serves is 403 with icegate's message",
          status == 403 and "no upstream of this icegate serves its catalog" in body, (status, body))
    orphan = through(a.gate, "ann")
    orphan.properties["prefix"] = "orphan"  # as a client configured with that prefix would send
    raises("PyIceberg gets icegate's ForbiddenError for it", orphan.list_namespaces, ForbiddenError,
           "catalog prefix `orphan` is not served")
    status, body = http("GET", f"{a.gate}/v1/analytics/namespaces/events/tables/clicks", user="bob")
    check("bob, a reader of prod only, is refused analytics by the policy", status == 403, (status, body))
    check("bob reads prod (through the default upstream)",
          sorted(r["id"] for r in through(a.gate, "bob").load_table(("sales", "orders")).scan().to_arrow().to_pylist())
          == [1, 2])
    after = {side: asked(side) for side in ["rest", "lake"]}
    # nothing reached lake; what reached rest was bob's reading of prod (checked below: every
    # request rest received names prod)
    check("the refusals reached no upstream", after["lake"] == before["lake"], (before, after))

    # What each upstream recorded: only its own catalog's prefix, and getConfig with its own
    # warehouse (or none: the default's clients, readiness probes, and this script asking directly).
    for side, prefix, warehouses in [("rest", "prod", {"", "prod-wh"}), ("lake", "analytics", {"", "analytics-wh"})]:
        seen = requests_at(work / f"catalog-{side}.log")
        paths = [uri for _, uri, _ in seen if not uri.startswith("/v1/config")]
        configs = {re.sub(r"^/v1/config\??(warehouse=)?", "", uri) for _, uri, _ in seen if uri.startswith("/v1/config")}
        check(f"{side} received only /v1/{prefix}/... requests ({len(paths)})",
              paths and all(p.startswith(f"/v1/{prefix}/") for p in paths), [p for p in paths if not p.startswith(f"/v1/{prefix}/")])
        check(f"{side} received getConfig for its own warehouse only", configs <= warehouses and warehouses - {""} <= configs,
              configs)

    # Audit lines and metrics name the upstream.
    audit = [json.loads(line) for line in (work / "icegate.log").read_text().splitlines() if line.startswith("{")]
    by_upstream = {}
    for record in audit:
        for obj in record.get("objects") or []:
            name = obj.get("fullName", "")
            by_upstream.setdefault(name.split(".")[0], set()).add(record.get("upstream"))
    check("audit: prod's requests name upstream rest, analytics' lake, orphan's none",
          by_upstream.get("prod") == {"rest"} and by_upstream.get("analytics") == {"lake"}
          and by_upstream.get("orphan", {None}) == {None}, by_upstream)
    with urllib.request.urlopen(f"{a.admin}/metrics", timeout=5) as response:
        metrics = response.read().decode()
    for side in ["rest", "lake"]:
        check(f"metrics: upstream_reachable for {side}", f'icegate_upstream_reachable{{upstream="{side}"}} 1' in metrics,
              [m for m in metrics.splitlines() if "reachable" in m])
    status, ready = readyz(a.admin)
    check("readyz with both up: 200, both reachable",
          status == 200 and all(ready["upstreams"][s]["reachable"] for s in ["rest", "lake"]), (status, ready))

    # One upstream stopped: the other serves on, and /readyz says which is down.
    os.kill(a.lake_pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while True:
        status, ready = readyz(a.admin)
        if not ready["upstreams"]["lake"]["reachable"] or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    check("readyz with lake stopped: still 200, rest reachable, lake not",
          status == 200 and ready["upstreams"]["rest"]["reachable"] and not ready["upstreams"]["lake"]["reachable"],
          (status, ready))
    check("prod still serves with lake stopped",
          sorted(r["id"] for r in through(a.gate, "ann").load_table(("sales", "orders")).scan().to_arrow().to_pylist()) == [1, 2])
    status, body = http("GET", f"{a.gate}/v1/analytics/namespaces")
    check("analytics fails with its upstream stopped (5xx, icegate's JSON error)",
          status >= 500 and json.loads(body).get("error", {}).get("code") == status, (status, body))
    try:
        through(a.gate, "ann", "analytics-wh")
        raise SystemExit("FAIL: getConfig for analytics-wh answered with lake stopped")
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - PyIceberg maps 5xx to several error kinds
        check("getConfig for analytics-wh fails with lake stopped", True, e)
    try:
        analytics.list_namespaces()
        raise SystemExit("FAIL: analytics answered with lake stopped")
    except NoSuchNamespaceError as e:
        raise SystemExit(f"FAIL: analytics answered as if lake were up: {e}")
    except SystemExit:
        raise
    except Exception:  # noqa: BLE001
        check("PyIceberg's analytics catalog fails with lake stopped", True)
    print("many_upstreams: all checks passed")


if __name__ == "__main__":
    main()
