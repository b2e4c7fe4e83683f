"""moto (S3 and STS on loopback) for tests/e2e/downscope.sh, with a recorder in front of its STS.

Usage: downscope_moto.py BUCKET   (run with the moto venv's python, target/e2e-moto-venv)

Starts moto's server in this process on 127.0.0.1 (a free port), creates BUCKET with boto3, and
starts a small HTTP recorder on another free port: it records the form parameters of every POST
(icegate's STS calls: moto does not keep the session tags, which the test checks), forwards
the request unchanged to moto, and notes the `Authorization` header and the AccessKeyId moto
returned (`_authorization`, `_status`, `_access_key_id`). Prints one line once both are ready:

  moto listening on http://127.0.0.1:P, sts recorder on http://127.0.0.1:Q

The recorder also answers (not an AWS route):
  GET /assumed-roles        moto's STS backend's own record of every AssumeRole (access key, secret,
                            session token, role, session name, session policy), read in this
                            process (moto 5.2.5's `/moto-api/data.json` fails with a 500 once
                            PyArrow has written objects, on a FakeKey's `status`)
  GET /recorded             the recorded STS calls, `[{"Action": ..., "Tags.member.1.Key": ..., "_access_key_id": ...}]`
  GET /objects?prefix=K     the keys under K in BUCKET, as moto holds them (boto3, not icegate's keys)
Runs until killed.
"""
import http.client
import json
import re
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
from moto.server import ThreadedMotoServer
from moto.sts.models import sts_backends

BUCKET = sys.argv[1]
moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
moto.start()
_, MOTO_PORT = moto.get_host_and_port()
MOTO = f"http://127.0.0.1:{MOTO_PORT}"
s3 = boto3.client("s3", endpoint_url=MOTO, region_name="us-east-1", aws_access_key_id="testing",
                  aws_secret_access_key="testing")
s3.create_bucket(Bucket=BUCKET)

recorded = []
lock = threading.Lock()


class Recorder(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def reply(self, status, body, content_type="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/recorded":
            with lock:
                body = json.dumps(recorded).encode()
            return self.reply(200, body)
        if url.path == "/assumed-roles":
            fields = ["access_key_id", "secret_access_key", "session_token", "role_arn", "session_name", "policy",
                      "external_id"]
            roles = [{f: getattr(r, f) for f in fields}
                     for account in list(sts_backends.values()) for backend in list(account.values())
                     for r in list(backend.assumed_roles)]
            return self.reply(200, json.dumps(roles).encode())
        if url.path == "/objects":
            prefix = urllib.parse.parse_qs(url.query).get("prefix", [""])[0]
            pages = s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
            keys = [o["Key"] for page in pages for o in page.get("Contents", [])]
            return self.reply(200, json.dumps(keys).encode())
        self.reply(404, b"{}")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        call = dict(urllib.parse.parse_qsl(body.decode(), keep_blank_values=True))
        call["_authorization"] = self.headers.get("Authorization")
        # Forwarded as it came: moto does not check signatures, and the Host header stays the one
        # icegate signed.
        conn = http.client.HTTPConnection("127.0.0.1", MOTO_PORT, timeout=10)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "transfer-encoding")}
        conn.request("POST", self.path, body=body, headers=headers)
        r = conn.getresponse()
        answer = r.read()
        conn.close()
        key = re.search(r"<AccessKeyId>([^<]*)</AccessKeyId>", answer.decode(errors="replace"))
        call["_status"], call["_access_key_id"] = r.status, key and key.group(1)
        with lock:
            recorded.append(call)
        self.reply(r.status, answer, r.getheader("Content-Type") or "text/xml")


recorder = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
print(f"moto listening on {MOTO}, sts recorder on http://127.0.0.1:{recorder.server_address[1]}", flush=True)
recorder.serve_forever()
