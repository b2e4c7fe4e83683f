"""The clients of tests/upstream_auth/run.sh.

oauth2: WORKERS threads call icegate (in `oauth2` mode in front of the fake catalog) for SECONDS,
across many expiries of the provider's tokens; halfway, the catalog revokes the token it sees
next. Every request must succeed, the provider must have answered about one token request per
token lifetime (not one per waiting request), and icegate must have retried once after the 401.

sigv4: a GET, a create with a body and a commit through icegate (in `sigv4` mode) all verify
with botocore at the fake catalog, which refuses requests botocore signed with a wrong secret and
accepts botocore's own correctly signed one.
"""

import argparse
import base64
import json
import math
import threading
import time
import urllib.error
import urllib.request


def call(url, method="GET", body=None, headers=None):
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def alice():
    return {"Authorization": "Basic " + base64.b64encode(b"alice:pw").decode(), "Content-Type": "application/json"}


def get_json(url):
    status, body = call(url)
    assert status == 200, (url, status, body)
    return json.loads(body)


def metric(admin, name):
    _, text = call(f"{admin}/metrics")
    for line in text.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    return None


def oauth2(args):
    statuses = {}
    lock = threading.Lock()
    stop = time.monotonic() + args.seconds

    def worker(n):
        i = 0
        while time.monotonic() < stop:
            i += 1
            if i % 5 == 0:
                body = json.dumps({"namespace": [f"w{n}_{i}"], "properties": {}}).encode()
                status, text = call(f"{args.gate}/v1/namespaces", "POST", body, alice())
            else:
                status, text = call(f"{args.gate}/v1/namespaces/db", headers=alice())
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
                if status != 200:
                    print(f"worker {n}: {status} {text[:200]!r}", flush=True)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(args.workers)]
    for t in threads:
        t.start()
    time.sleep(args.seconds / 2)
    call(f"{args.catalog}/_revoke_next", "POST", b"")
    for t in threads:
        t.join()
    fetches = get_json(f"{args.idp}/test/stats")["token_requests"]
    catalog = get_json(f"{args.catalog}/_stats")
    retries = metric(args.admin, "icegate_upstream_auth_retries_total")
    total = sum(statuses.values())
    print(f"oauth2: {total} requests in {args.seconds} s by {args.workers} workers: {statuses}; "
          f"{fetches} token requests (tokens live {args.ttl} s); catalog accepted {catalog['accepted']}, "
          f"refused {catalog['refused']} {set(catalog['reasons'])}; icegate retried {retries}", flush=True)
    assert statuses == {200: total} and total > 100, statuses
    # a token is replaced a fifth of its lifetime before it expires: one request per 0.8 TTL,
    # plus the first, the one after the revocation and one of slack
    most = math.ceil(args.seconds / (0.8 * args.ttl)) + 3
    least = math.floor(args.seconds / args.ttl)
    assert least <= fetches <= most, f"{fetches} token requests, expected {least}..{most}"
    # the requests in flight with the revoked token were each refused once and sent again
    assert catalog["refused"] >= 1 and set(catalog["reasons"]) == {"token revoked"}, catalog
    assert retries == catalog["refused"], (retries, catalog["refused"])


def sigv4(args):
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    steps = [
        ("GET", "/v1/namespaces/db", None),
        ("POST", "/v1/namespaces", {"namespace": ["sales"], "properties": {"owner": "ops"}}),
        ("POST", "/v1/namespaces/db/tables/t", {"requirements": [], "updates": [
            {"action": "set-properties", "updates": {"commit": "1"}}]}),
        ("GET", "/v1/namespaces/db%1Fq1", None),
    ]
    for method, path, body in steps:
        data = json.dumps(body).encode() if body is not None else None
        status, text = call(f"{args.gate}{path}", method, data, alice())
        assert status == 200, (method, path, status, text)
    stats = get_json(f"{args.catalog}/_stats")
    print(f"sigv4: catalog accepted {stats['accepted']}, refused {stats['refused']}", flush=True)
    assert stats["refused"] == 0, stats["reasons"]
    assert stats["accepted"] >= len(steps), stats
    for _, _, body in steps:
        if body is not None:
            assert json.dumps(body) in stats["bodies"], (body, stats["bodies"])

    # the verifier refuses what it must and accepts botocore's own signature
    def signed(secret, body=b'{"namespace":["x"]}'):
        request = AWSRequest(method="POST", url=f"{args.catalog}/v1/namespaces", data=body,
                             headers={"Content-Type": "application/json"})
        request.headers["X-Amz-Content-Sha256"] = __import__("hashlib").sha256(body).hexdigest()
        SigV4Auth(Credentials(args.key, secret, args.token), args.service, args.region).add_auth(request)
        return call(request.url, "POST", body, dict(request.headers))[0]

    assert signed(args.secret) == 200, "botocore's own signature must verify"
    assert signed("wrong-secret") == 403, "a bad signature must be refused"
    assert call(f"{args.catalog}/v1/namespaces/db")[0] == 403, "an unsigned request must be refused"
    # a body other than the signed one
    request = AWSRequest(method="POST", url=f"{args.catalog}/v1/namespaces", data=b'{"a":1}')
    request.headers["X-Amz-Content-Sha256"] = __import__("hashlib").sha256(b'{"a":1}').hexdigest()
    SigV4Auth(Credentials(args.key, args.secret, args.token), args.service, args.region).add_auth(request)
    assert call(request.url, "POST", b'{"a":2}', dict(request.headers))[0] == 403, "a changed body must be refused"
    print("sigv4: botocore verified every forwarded request and refused the bad ones", flush=True)


parser = argparse.ArgumentParser()
sub = parser.add_subparsers(dest="mode", required=True)
o = sub.add_parser("oauth2")
for flag in ("--gate", "--catalog", "--idp", "--admin"):
    o.add_argument(flag, required=True)
o.add_argument("--seconds", type=int, default=60)
o.add_argument("--workers", type=int, default=8)
o.add_argument("--ttl", type=int, required=True)
s = sub.add_parser("sigv4")
for flag in ("--gate", "--catalog", "--key", "--secret", "--token", "--service", "--region"):
    s.add_argument(flag, required=True)
args = parser.parse_args()
oauth2(args) if args.mode == "oauth2" else sigv4(args)
