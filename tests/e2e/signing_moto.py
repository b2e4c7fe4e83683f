"""moto's S3 for tests/e2e/signing.sh, checking every request's signature.

Usage: signing_moto.py BUCKET   (the moto venv's python, target/e2e-moto-venv)

Starts moto's server in this process on 127.0.0.1 (a free port), creates BUCKET and an IAM user
whose access key may do anything on S3 (the key the test's signer signs with), and then turns
on moto's request authentication (its INITIAL_NO_AUTH_ACTION_COUNT, read on every request, set
to 0): from then on a request without a valid SigV4 signature of a known key is refused (403),
so a request that succeeds was signed. The user may also assume the role `icegate-signer`
(which may do anything on S3), as icegate's local signer does with `credentials.sts.role_arn`
(tests/e2e/local_signer.sh). Prints one line once ready:

  moto listening on http://127.0.0.1:P key ID secret SECRET role ARN roles http://127.0.0.1:Q

moto checks a signature against the request's `x-amz-content-sha256` header as sent, never
against a hash of the body it received (moto 5.2.5, `iam/access_control.py`): a batch delete
replayed with another body is not refused here, as AWS S3 refuses it.

The second address answers `GET /assumed-roles`: moto's STS backend's record of every AssumeRole
(access key, secret, session token, role, session name), read in this process, so that a test
can recompute the signatures icegate made with the role's credentials. Runs until killed.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
from moto import settings
from moto.server import ThreadedMotoServer
from moto.sts.models import sts_backends

BUCKET = sys.argv[1]
moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
moto.start()
_, port = moto.get_host_and_port()
url = f"http://127.0.0.1:{port}"
session = boto3.session.Session(aws_access_key_id="setup", aws_secret_access_key="setup", region_name="us-east-1")
session.client("s3", endpoint_url=url).create_bucket(Bucket=BUCKET)
iam = session.client("iam", endpoint_url=url)
iam.create_user(UserName="signer")
policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:*", "sts:AssumeRole"],
                                                 "Resource": "*"}]}
iam.put_user_policy(UserName="signer", PolicyName="s3", PolicyDocument=json.dumps(policy))
key = iam.create_access_key(UserName="signer")["AccessKey"]
user_arn = iam.get_user(UserName="signer")["User"]["Arn"]
trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": user_arn},
                                                "Action": "sts:AssumeRole"}]}
role = iam.create_role(RoleName="icegate-signer", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
s3_only = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
iam.put_role_policy(RoleName="icegate-signer", PolicyName="s3", PolicyDocument=json.dumps(s3_only))


class Roles(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        fields = ["access_key_id", "secret_access_key", "session_token", "role_arn", "session_name"]
        roles = [{f: getattr(r, f) for f in fields}
                 for account in list(sts_backends.values()) for backend in list(account.values())
                 for r in list(backend.assumed_roles)]
        body = json.dumps(roles).encode() if self.path == "/assumed-roles" else b"{}"
        self.send_response(200 if self.path == "/assumed-roles" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


roles = ThreadingHTTPServer(("127.0.0.1", 0), Roles)
threading.Thread(target=roles.serve_forever, daemon=True).start()
settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
print(f"moto listening on {url} key {key['AccessKeyId']} secret {key['SecretAccessKey']} role {role} "
      f"roles http://127.0.0.1:{roles.server_address[1]}", flush=True)
threading.Event().wait()
