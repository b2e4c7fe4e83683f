"""Sends N GET requests on one keep-alive connection, as the load harness's client does, and
checks that each is answered 200 (for benches/load/callgrind.sh).

    python3 requests.py PORT PATH N
"""

import base64
import http.client
import sys

AUTH = "Basic " + base64.b64encode(b"bench:x").decode()


def main():
    port, path, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    for _ in range(n):
        c.request("GET", path, headers={"Authorization": AUTH, "X-Gravitino-Active-Roles": "reader"})
        r = c.getresponse()
        r.read()
        if r.status != 200:
            raise SystemExit(f"requests: GET {path} answered {r.status}")
    c.close()


if __name__ == "__main__":
    main()
