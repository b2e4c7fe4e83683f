"""moto's S3 for tests/e2e/signing.sh, checking every request's signature.

Usage: signing_moto.py BUCKET   (the moto venv's python, target/e2e-moto-venv)

Starts moto's server in this process on 127.0.0.1 (a free port), creates BUCKET and an IAM user
whose access key may do anything on S3 (the key the test's signer signs with), and then turns
on moto's request authentication (its INITIAL_NO_AUTH_ACTION_COUNT, read on every request, set
to 0): from then on a request without a valid SigV4 signature of a known key is refused (403),
so a request that succeeds was signed. Prints one line once ready:

  moto listening on http://127.0.0.1:P key ID secret SECRET

Runs until killed.
"""
import json
import sys
import threading

import boto3
from moto import settings
from moto.server import ThreadedMotoServer

BUCKET = sys.argv[1]
moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
moto.start()
_, port = moto.get_host_and_port()
url = f"http://127.0.0.1:{port}"
session = boto3.session.Session(aws_access_key_id="setup", aws_secret_access_key="setup", region_name="us-east-1")
session.client("s3", endpoint_url=url).create_bucket(Bucket=BUCKET)
iam = session.client("iam", endpoint_url=url)
iam.create_user(UserName="signer")
policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
iam.put_user_policy(UserName="signer", PolicyName="s3", PolicyDocument=json.dumps(policy))
key = iam.create_access_key(UserName="signer")["AccessKey"]
settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
print(f"moto listening on {url} key {key['AccessKeyId']} secret {key['SecretAccessKey']}", flush=True)
threading.Event().wait()
