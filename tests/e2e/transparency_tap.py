"""A recording HTTP tap for tests/e2e/transparency.sh: relays every request to UPSTREAM as it came
and every answer back as it came, and appends each exchange to RECORD (one JSON object a line,
bodies base64, so the comparison sees the exact bytes).

Usage: transparency_tap.py UPSTREAM_URL RECORD [--number]
Prints `tap listening on http://127.0.0.1:PORT` once it accepts connections.

With --number (the tap in front of icegate) each request gets `X-Transparency-Seq: N` before it
is relayed; icegate forwards that header with the request and with every request it makes on
the request's behalf, so the tap behind icegate records which client request each upstream
exchange served. Standard library only: it runs in any of the e2e venvs.
"""
import base64
import http.client
import json
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UPSTREAM = urllib.parse.urlsplit(sys.argv[1])
RECORD = open(sys.argv[2], "a", encoding="utf-8")  # noqa: SIM115 - open for the process' life
NUMBER = "--number" in sys.argv[3:]
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
lock = threading.Lock()
counter = 0


class Tap(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet: the record is the log
        pass

    def relay(self):
        global counter
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | {"host", "content-length"}}
        with lock:
            counter += 1
            seq = counter
        if NUMBER:
            headers["X-Transparency-Seq"] = str(seq)
        if body or self.command in ("POST", "PUT", "PATCH"):
            headers["Content-Length"] = str(len(body))
        conn = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=120)
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            answer = conn.getresponse()
            data = answer.read()
            status, reason, answer_headers = answer.status, answer.reason, answer.getheaders()
        except OSError as e:
            status, reason, answer_headers, data = 599, "tap", [], f"tap could not relay: {e}".encode()
        finally:
            conn.close()
        record = {
            "seq": seq,
            "parent": self.headers.get("X-Transparency-Seq"),
            "method": self.command,
            "path": self.path,
            "request_body": base64.b64encode(body).decode(),
            "status": status,
            "content_type": dict((k.lower(), v) for k, v in answer_headers).get("content-type"),
            "body": base64.b64encode(data).decode(),
        }
        with lock:
            RECORD.write(json.dumps(record) + "\n")
            RECORD.flush()
        self.send_response(status, reason)
        for k, v in answer_headers:
            if k.lower() not in HOP_BY_HOP | {"content-length", "date", "server"}:
                self.send_header(k, v)
        no_body = self.command == "HEAD" or status in (204, 304) or 100 <= status < 200
        if not no_body:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not no_body:
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = relay


server = ThreadingHTTPServer(("127.0.0.1", 0), Tap)
server.daemon_threads = True
print(f"tap listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
