"""Graceful shutdown of icegate's container in the sidecar pod (tests/pod/run.sh).

usage: inflight.py PORT CONTAINER GRACE_SECONDS ADMIN_PORT

Sends bob's createNamespace request with half its body, waits until icegate holds the
connection (its open-connections gauge), stops the container as the kubelet does (SIGTERM, then
SIGKILL after GRACE_SECONDS), and checks: new connections are refused while the request is still
open; the rest of the body, sent then, gets its 200 from the catalog; icegate exits 0 before the
grace period ends.
"""

import base64
import json
import re
import socket
import subprocess
import sys
import time
import urllib.request

PORT, CONTAINER, GRACE, ADMIN = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


def fail(message):
    sys.exit(f"inflight: {message}")


def open_connections():
    with urllib.request.urlopen(f"http://127.0.0.1:{ADMIN}/metrics", timeout=5) as r:
        text = r.read().decode()
    found = re.search(r"^icegate_open_connections (\d+)", text, re.M)
    return int(found.group(1)) if found else fail("no icegate_open_connections in /metrics")


body = json.dumps({"namespace": ["inflight"]}).encode()
auth = base64.b64encode(b"bob:-").decode()
head = (
    f"POST /v1/namespaces HTTP/1.1\r\nHost: icegate\r\nAuthorization: Basic {auth}\r\n"
    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
).encode()
client = socket.create_connection(("127.0.0.1", PORT), timeout=GRACE + 10)
client.sendall(head + body[:10])
deadline = time.monotonic() + 10
while open_connections() < 1:
    if time.monotonic() > deadline:
        fail("icegate never counted the connection")
    time.sleep(0.05)

started = time.monotonic()
stop = subprocess.Popen(["podman", "stop", "-t", str(GRACE), CONTAINER], stdout=subprocess.DEVNULL)
while True:  # until icegate's listener is closed (a guard against one that never closes)
    try:
        socket.create_connection(("127.0.0.1", PORT), timeout=2).close()
    except OSError:
        break
    if time.monotonic() - started > GRACE:
        fail("new connections were still accepted after SIGTERM")
    time.sleep(0.05)
refused_after = time.monotonic() - started
if stop.poll() is not None:
    fail("the container stopped before the request in flight finished")

client.sendall(body[10:])
answer = b""
while chunk := client.recv(65536):
    answer += chunk
status = answer.split(b"\r\n", 1)[0].decode(errors="replace")
if " 200 " not in status + " " or b"inflight" not in answer:
    fail(f"the request in flight got `{status}`: {answer[-300:]!r}")
stop.wait(timeout=GRACE + 10)
took = time.monotonic() - started
code = subprocess.run(["podman", "inspect", "-f", "{{.State.ExitCode}}", CONTAINER], capture_output=True, text=True)
if code.stdout.strip() != "0":
    fail(f"icegate exited with {code.stdout.strip()} (137: killed when the grace period ran out)")
if took >= GRACE:
    fail(f"icegate took {took:.1f} s to stop, the grace period is {GRACE} s")
print(f"refused new connections {refused_after:.2f} s after SIGTERM; the request in flight answered 200; "
      f"icegate exited 0 {took:.2f} s after SIGTERM", flush=True)
