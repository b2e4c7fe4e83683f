"""Added latency of icegate over direct access for a loadTable: median of many requests, same run.

Usage: latency.py CATALOG_URL ICEGATE_URL [N]
Creates a namespace and a table directly on the catalog, then times N sequential keep-alive GETs
of the table directly and through icegate, interleaved in rounds so drift hits both alike.
"""
import http.client
import json
import statistics
import sys
import time
import urllib.parse

catalog, icegate = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
AUTH = {"Authorization": "Basic Ym9iOi0="}  # bob


def conn(url):
    u = urllib.parse.urlparse(url)
    return http.client.HTTPConnection(u.hostname, u.port)


c = conn(catalog)
for method, path, body in [
    ("POST", "/v1/namespaces", {"namespace": ["sales"]}),
    ("POST", "/v1/namespaces/sales/tables", {"name": "lat", "schema": {"type": "struct", "fields": [
        {"id": 1, "name": "id", "type": "long", "required": False}]}}),
]:
    c.request(method, path, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()

direct, proxied = conn(catalog), conn(icegate)
path = "/v1/namespaces/sales/tables/lat"


def once(connection):
    start = time.perf_counter_ns()
    connection.request("GET", path, headers=AUTH)
    r = connection.getresponse()
    r.read()
    elapsed = time.perf_counter_ns() - start
    assert r.status == 200, r.status
    return elapsed


for c in (direct, proxied):
    for _ in range(200):
        once(c)
d, p = [], []
for _ in range(n // 100):
    d += [once(direct) for _ in range(100)]
    p += [once(proxied) for _ in range(100)]
md, mp = statistics.median(d) / 1000, statistics.median(p) / 1000
print(f"loadTable median over {len(d)} requests: direct {md:.0f} µs, through icegate {mp:.0f} µs, added {mp - md:.0f} µs")
