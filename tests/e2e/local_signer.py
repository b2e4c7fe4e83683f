"""End to end: icegate as the signer in front of a catalog that neither vends nor signs
(docs/design.md §8 "Signing without a catalog signer").

Usage: local_signer.py --gate URL --catalog URL --moto URL --bucket B --key-id ID --secret S
                       --role ARN --roles URL   (started by tests/e2e/local_signer.sh)

moto checks every request's signature; icegate signs with the credentials of the role it assumes
at moto's STS (`credentials.sts.role_arn`). The dev catalog keeps metadata on a file://
warehouse; each table's data path (`write.data.path`, chosen by olga, the catalog's owner) is on
moto's S3, so every data file read or written went through a signature icegate made:

- loadTable answers offer icegate's signer (its table-scoped route, every key spelling) and carry
  no credentials;
- PyIceberg (its REST signer in the fsspec FileIO) creates a table, appends and reads it back as
  alice (a writer); dana (a reader) reads, and her append gets no signature (403);
- botocore-formed requests signed through icegate (put, ranged get, a batch delete with its body)
  succeed on moto; a key outside the table gets no signature (403);
- a batch delete replayed with another body: icegate's signature binds the SHA-256 of the body it
  checked, so it is no signature of the other body (recomputed with botocore's SigV4 and the
  role's credentials). moto does not compare the payload hash with the body (it recomputes the
  signature from the `x-amz-content-sha256` header as sent), so it cannot show AWS S3's refusal
  (`XAmzContentSHA256Mismatch`): what moto did with the replay is printed, not checked;
- icegate assumed the role once for all of it.

One line per check; exits non-zero on any failure.
"""
import argparse
import base64
import hashlib
import json
import os
import sys
import traceback
import urllib.error
import urllib.parse
import urllib.request

# As in tests/e2e/signing.py: PyIceberg 0.12's fsspec FileIO races its signer registration
# across scan threads; one worker avoids that client bug.
os.environ["PYICEBERG_MAX_WORKERS"] = "1"

import botocore.session
import pyarrow as pa
from botocore import UNSIGNED
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from pyiceberg.catalog import load_catalog

parser = argparse.ArgumentParser()
for flag in ("--gate", "--catalog", "--moto", "--bucket", "--key-id", "--secret", "--role", "--roles"):
    parser.add_argument(flag, required=True)
args = parser.parse_args()
BUCKET = args.bucket
DATA = f"s3://{BUCKET}/wh/db/t/data"
TABLE_PATH = "v1/namespaces/db/tables/t"
failures = 0
checks = 0


def step(label, ok, detail=""):
    global failures, checks
    checks += 1
    print(f"{'ok  ' if ok else 'FAIL'} {label}{(': ' + detail) if detail and not ok else ''}", flush=True)
    if not ok:
        failures += 1
    return ok


def basic(user):
    return "Basic " + base64.b64encode(f"{user}:x".encode()).decode()


def http(method, url, body=None, headers=None, raw=None):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req) as r:
            text = r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        text, status = e.read(), e.code
    try:
        return status, json.loads(text) if text else None
    except ValueError:
        return status, text.decode(errors="replace")


def raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the caller checks what was raised
        return e
    return None


def catalog(user):
    # Where S3 is and its region are the client's own settings: the dev catalog knows neither.
    return load_catalog(f"local-{user}", type="rest", uri=args.gate,
                        auth={"type": "basic", "basic": {"username": user, "password": "x"}},
                        **{"py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO", "s3.endpoint": args.moto,
                           "s3.region": "us-east-1"})


def store():
    """moto's S3 with the test's own key (not through icegate), to look at what is there."""
    return botocore.session.get_session().create_client(
        "s3", endpoint_url=args.moto, region_name="us-east-1", aws_access_key_id=args.key_id,
        aws_secret_access_key=args.secret, config=Config(s3={"addressing_style": "path"}))


def keys(prefix):
    pages = store().get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return [o["Key"] for page in pages for o in page.get("Contents", [])]


class Refused(Exception):
    pass


def sign(user, req):
    status, answer = http("POST", f"{args.gate}/{TABLE_PATH}/sign", req, {"Authorization": basic(user)})
    if status != 200:
        raise Refused(f"{status} {answer}")
    return answer


def s3_client(user="alice"):
    """botocore's S3 client, each request signed through icegate's signer for db.t, as Iceberg's
    S3V4RestSignerClient does it (the body only for a batch delete)."""
    client = botocore.session.get_session().create_client(
        "s3", endpoint_url=args.moto, region_name="us-east-1",
        config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}))

    def signed(request, **_):
        body = {"method": request.method, "region": "us-east-1", "uri": request.url,
                "headers": {k: [v] for k, v in request.headers.items()}}
        if request.method == "POST" and "delete" in urllib.parse.parse_qs(urllib.parse.urlsplit(request.url).query,
                                                                           keep_blank_values=True):
            body["body"] = request.body.decode() if isinstance(request.body, bytes) else request.body
        answer = sign(user, body)
        for k, v in answer["headers"].items():
            request.headers[k] = ", ".join(v)
        request.url = answer["uri"]

    client.meta.events.register_last("before-sign.s3", signed)
    return client


ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["tea", "jam", "oat"])})


def answers_offer_the_signer():
    status, v = http("GET", f"{args.gate}/{TABLE_PATH}", headers={"Authorization": basic("dana"),
                                                                  "X-Iceberg-Access-Delegation": "vended-credentials"})
    config = (v or {}).get("config") or {}
    ours = f"{TABLE_PATH}/sign"
    want = {"s3.remote-signing-enabled": "true", "s3.signer": "S3V4RestSigner", "s3.signer.endpoint": ours,
            "signer.endpoint": ours}
    step("loadTable offers icegate's table-scoped signer in every spelling",
         status == 200 and all(config.get(k) == w for k, w in want.items()), f"{status} {config}")
    step("loadTable carries no credentials", not (v or {}).get("storage-credentials")
         and not any("key" in k or "token" in k for k in config), json.dumps(v)[:400])


def pyiceberg():
    olga = catalog("olga")
    olga.create_namespace("db")
    olga.create_table("db.t", schema=ROWS.schema, properties={"write.data.path": DATA})
    alice = catalog("alice")
    table = alice.load_table("db.t")
    table.append(ROWS)
    table.append(ROWS.slice(0, 1))
    rows = sorted(alice.load_table("db.t").scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    want = sorted(ROWS.to_pylist() + ROWS.slice(0, 1).to_pylist(), key=lambda r: r["id"])
    step("PyIceberg as alice appends twice and reads back, every data file signed by icegate", rows == want,
         f"{rows}")
    files = [f["file_path"] for f in alice.load_table("db.t").inspect.files().to_pylist()]
    on_moto = set(keys("wh/db/t/data/"))
    step("PyIceberg's data files are objects in moto's bucket under the table's data path",
         len(files) == 2 and all(f.startswith(DATA + "/") and f.removeprefix(f"s3://{BUCKET}/") in on_moto
                                 for f in files), f"{files} vs {sorted(on_moto)}")
    dana = catalog("dana")
    rows = dana.load_table("db.t").scan().to_arrow().to_pylist()
    step("PyIceberg as dana (reader) reads the table", len(rows) == 4, f"{rows}")
    error = raised(lambda: dana.load_table("db.t").append(ROWS))
    step("dana's append gets no signature (403)", error is not None and "403" in str(error),
         f"{type(error).__name__}: {error}")


def shapes():
    s3 = s3_client()
    base = "wh/db/t/data/shapes"

    def check(label, fn, ok=lambda r: True):
        try:
            result = fn()
            return step(label, ok(result), repr(result)[:300])
        except Exception as e:  # noqa: BLE001
            return step(label, False, f"{type(e).__name__}: {e}")

    check("PutObject signed by icegate", lambda: s3.put_object(Bucket=BUCKET, Key=f"{base}/a.bin", Body=b"0123456789"))
    check("PutObject of a second key", lambda: s3.put_object(Bucket=BUCKET, Key=f"{base}/b.bin", Body=b"b"))
    check("GetObject with a range", lambda: s3.get_object(Bucket=BUCKET, Key=f"{base}/a.bin", Range="bytes=2-5"),
          lambda r: r["Body"].read() == b"2345")
    check("DeleteObjects of two keys, its body bound by icegate",
          lambda: s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": f"{base}/a.bin"},
                                                                       {"Key": f"{base}/b.bin"}]}),
          lambda r: len(r.get("Deleted", [])) == 2 and not r.get("Errors"))
    step("the batch delete removed both objects", keys(f"{base}/") == [], str(keys(f"{base}/")))
    # A real client asking for what the table does not cover gets no signature.
    error = raised(lambda: s3.get_object(Bucket=BUCKET, Key="wh/db/other/data/x.parquet"))
    step("botocore's GetObject outside the table gets no signature (403)",
         isinstance(error, Refused) and "403" in str(error), repr(error))
    error = raised(lambda: s3_client("dana").put_object(Bucket=BUCKET, Key=f"{base}/c.bin", Body=b"c"))
    step("botocore's PutObject as dana gets no signature (403)", isinstance(error, Refused) and "403" in str(error),
         repr(error))


def delete_xml(key):
    return f'<?xml version="1.0" encoding="UTF-8"?><Delete><Object><Key>{key}</Key></Object></Delete>'


def assumed_roles():
    with urllib.request.urlopen(f"{args.roles}/assumed-roles") as r:
        return [a for a in json.loads(r.read()) if a["role_arn"] == args.role]


def replayed_batch_delete():
    """A writer gets icegate's signature for deleting a key of the table (body A) and sends S3 a
    body B naming another table's file with it."""
    inside = "wh/db/t/data/replay/a.bin"
    victim = "wh/db/other/data/victim.parquet"
    store().put_object(Bucket=BUCKET, Key=inside, Body=b"a")
    store().put_object(Bucket=BUCKET, Key=victim, Body=b"v")
    uri = f"{args.moto}/{BUCKET}?delete"
    body_a, body_b = delete_xml(inside), delete_xml(victim)
    answer = sign("alice", {"method": "POST", "region": "us-east-1", "uri": uri, "body": body_a,
                            "headers": {"Content-Type": ["application/xml"]}})
    headers = {k: ", ".join(v) for k, v in answer["headers"].items()}
    lower = {k.lower(): v for k, v in headers.items()}
    authorization = lower["authorization"]
    signed_headers = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
    sha_a = hashlib.sha256(body_a.encode()).hexdigest()
    step("icegate's signature of the batch delete signs x-amz-content-sha256 = SHA-256 of the checked body",
         "x-amz-content-sha256" in signed_headers and lower.get("x-amz-content-sha256") == sha_a,
         f"{signed_headers} {lower.get('x-amz-content-sha256')} vs {sha_a}")

    # Recompute with botocore's SigV4 and the role's credentials: body A's request gives icegate's
    # signature, body B's (as S3 hashes the body it receives) does not.
    key_id = authorization.split("Credential=")[1].split("/")[0]
    role = next((r for r in assumed_roles() if r["access_key_id"] == key_id), None)
    step("icegate signed with the credentials of the role it assumed at moto's STS", role is not None
         and role["session_name"] == "icegate-signer", f"{key_id} not among {assumed_roles()}")
    if role is not None:
        def signature(body):
            # the headers icegate signed, the payload hash as S3 computes it from the body received
            names = {h: v for h, v in headers.items()
                     if h.lower() in signed_headers and h.lower() not in ("host", "x-amz-content-sha256")}
            names["X-Amz-Content-SHA256"] = hashlib.sha256(body.encode()).hexdigest()
            request = AWSRequest(method="POST", url=uri, data=body.encode(), headers=names)
            request.context["timestamp"] = lower["x-amz-date"]
            auth = S3SigV4Auth(Credentials(role["access_key_id"], role["secret_access_key"], role["session_token"]),
                               "s3", "us-east-1")
            return auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)

        given = authorization.split("Signature=")[1]
        step("botocore's SigV4 of body A's request is icegate's signature", signature(body_a) == given,
             f"{signature(body_a)} vs {given}")
        step("botocore's SigV4 of body B's request is not: the signature does not cover body B",
             signature(body_b) != given)

    status, _ = http("POST", uri, headers=headers, raw=body_b.encode())
    survived = victim in keys("wh/db/other/")
    print(f"info moto's answer to the replayed body: {status}; the other table's file "
          f"{'survived' if survived else 'was deleted (moto does not check the payload hash against the body)'}",
          flush=True)


def role_assumed_once():
    sessions = [r for r in assumed_roles() if r["session_name"] == "icegate-signer"]
    step("icegate assumed its signing role once for every signature of the run", len(sessions) == 1,
         json.dumps([r["access_key_id"] for r in sessions]))
    status, _ = http("GET", f"{args.moto}/{BUCKET}?list-type=2")
    step("moto refuses an unsigned request", status >= 400, str(status))


for part in (answers_offer_the_signer, shapes, replayed_batch_delete, role_assumed_once):
    if part is answers_offer_the_signer:
        try:
            pyiceberg()
        except Exception as e:  # noqa: BLE001 - report and go on
            traceback.print_exc()
            step("PyIceberg through icegate's signer", False, f"{type(e).__name__}: {e}")
    try:
        part()
    except Exception as e:  # noqa: BLE001 - report and go on
        traceback.print_exc()
        step(part.__name__, False, f"{type(e).__name__}: {e}")
print(f"local signer e2e: {checks - failures} of {checks} checks passed", flush=True)
sys.exit(1 if failures else 0)
