"""End to end: remote signing through icegate against a real S3 (docs/design.md §8).

Usage: signing.py --gate URL --catalog URL --moto URL --bucket B   (started by tests/e2e/signing.sh)

moto checks every request's signature, and only the test's catalog holds a key it knows, so an
S3 request succeeds only when icegate had it signed. In front of the catalog's two prefixes
(tests/e2e/signing_catalog.py: `lk` advertises a Lakekeeper-like signer of its own and serves
no table-scoped route; `tr` serves the table-scoped route), icegate on
tests/e2e/signing-policy.yaml:

- PyIceberg (its REST signer in the fsspec FileIO, as a user configures it) creates a table,
  writes and reads it as alice (a writer), reads it as dana (a reader) whose write is refused;
- the S3 request shapes Iceberg's S3FileIO and PyIceberg send (objects, ranges, copies,
  multipart uploads, tags, listings, batch deletes with their body), formed by botocore and
  signed through icegate, succeed on moto;
- the shapes icegate refuses (bucket sub-resources with a `prefix` under the table, object
  sub-resources, listings outside the table, a batch delete with two keys in one object or
  without its body) get no signature: 403, and the signer never sees them; the signer itself
  would have signed one of them, and moto would have served it.

Each sign request reaches the signer by the way its prefix signs (the catalog's sign log).

In front of two warehouses as Lakekeeper 0.7.3 serves them (`alpha` and `beta`: the signer
advertised in getConfig only, getConfig answering only `?warehouse=<name>`, `s3.signer` only when
credentials were asked for, a signer that signs every header it is given), with the clients'
plain configuration (no `s3.signer` of their own):

- a reader narrowed to its `reader` role (no credentials are asked for it) reads through
  icegate's signer, offered whole; the two warehouses' requests each reach their own signer;
- an upload with `Expect: 100-continue` is accepted by moto (the signer that would sign `Expect`
  never sees it), where the same upload signed by that signer directly is refused;
- a long-running job (tables loaded before) across a restart of icegate that knows no warehouse
  gets a 502 that says the signer cannot be learnt, and after a restart with `warehouses`
  (and no client's getConfig) reads again, each warehouse at its own signer.

One line per check; exits non-zero on any failure.
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import traceback
import urllib.error
import urllib.parse
import urllib.request

# PyIceberg 0.12's fsspec FileIO builds its S3 filesystem once per thread, but fsspec hands every
# thread the same cached instance, and each build unregisters and re-registers the REST signer on
# it: a request of one scan thread made in that moment goes out unsigned (seen here as moto's 403
# on a HEAD that never reached the signer). One worker thread avoids that race of the client.
os.environ["PYICEBERG_MAX_WORKERS"] = "1"

import botocore.session
import pyarrow as pa
from botocore import UNSIGNED
from botocore.config import Config
from pyiceberg.catalog import load_catalog

parser = argparse.ArgumentParser()
for flag in ("--gate", "--catalog", "--moto", "--bucket", "--restart"):
    parser.add_argument(flag, required=True)
parser.add_argument("--configs", nargs=2, required=True, metavar=("PLAIN", "WAREHOUSES"))
args = parser.parse_args()
BUCKET = args.bucket
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


def http(method, url, body=None, headers=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json",
                                                                          **(headers or {})})
    try:
        with urllib.request.urlopen(req) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, raw.decode(errors="replace")


def sign_log():
    return http("GET", f"{args.catalog}/dev/sign-log")[1]


def catalog(prefix, user, roles=None):
    """PyIceberg's REST catalog through icegate as a user configures it: no signer setting."""
    extra = {"header.X-Gravitino-Active-Roles": roles} if roles else {}
    return load_catalog(f"{prefix}-{user}-{roles}", type="rest", uri=args.gate, warehouse=prefix,
                        auth={"type": "basic", "basic": {"username": user, "password": "x"}},
                        **{"py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO"}, **extra)


def raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the caller checks what was raised
        return e
    return None


ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["tea", "jam", "oat"])})


def pyiceberg(prefix):
    """A real client signing through icegate: writes and reads as a writer, reads as a reader."""
    before = len(sign_log())
    alice = catalog(prefix, "alice")
    alice.create_namespace("db")
    table = alice.create_table("db.t", schema=ROWS.schema)
    table.append(ROWS)
    table.append(ROWS.slice(0, 1))
    rows = sorted(alice.load_table("db.t").scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    want = sorted(ROWS.to_pylist() + ROWS.slice(0, 1).to_pylist(), key=lambda r: r["id"])
    step(f"[{prefix}] PyIceberg as alice appends twice and reads back through signed requests", rows == want,
         f"{rows}")
    signed = sign_log()[before:]
    methods = {e["method"] for e in signed}
    step(f"[{prefix}] the signer saw PyIceberg's writes and reads ({sorted(methods)}), all via `{prefix}`",
         {"PUT", "GET"} <= methods and all(e["via"] == prefix for e in signed), json.dumps(signed[:3]))

    dana = catalog(prefix, "dana")
    rows = dana.load_table("db.t").scan().to_arrow().to_pylist()
    step(f"[{prefix}] PyIceberg as dana (reader) reads the table", len(rows) == 4, f"{rows}")
    before = sign_log()
    error = raised(lambda: dana.load_table("db.t").append(ROWS))
    after = sign_log()
    step(f"[{prefix}] dana's append gets no signature (403)", error is not None and "403" in str(error),
         f"{type(error).__name__}: {error}")
    step(f"[{prefix}] none of dana's writes reached the signer",
         not [e for e in after[len(before):] if e["method"] != "GET" and e["method"] != "HEAD"],
         json.dumps(after[len(before):]))
    # PyIceberg's signer never sends a request's body; its deletes are batch deletes (s3fs), whose
    # keys icegate must read: refused.
    data_file = next(iter(alice.load_table("db.t").inspect.files().to_pylist()))["file_path"]
    error = raised(lambda: alice.load_table("db.t").io.delete(data_file))
    step(f"[{prefix}] PyIceberg's batch delete, sent without its body, gets no signature (403)",
         error is not None and "403" in str(error), f"{type(error).__name__}: {error}")


class Refused(Exception):
    pass


def s3_client(table_path, user="alice"):
    """botocore's S3 client, each request signed through icegate's sign endpoint for the table,
    as Iceberg's S3V4RestSignerClient does it (the body only for a batch delete)."""
    client = botocore.session.get_session().create_client(
        "s3", endpoint_url=args.moto, region_name="us-east-1",
        config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}))

    def sign(request, **_):
        body = {"method": request.method, "region": "us-east-1", "uri": request.url,
                "headers": {k: [v] for k, v in request.headers.items()}}
        if request.method == "POST" and "delete" in urllib.parse.parse_qs(urllib.parse.urlsplit(request.url).query,
                                                                           keep_blank_values=True):
            body["body"] = request.body.decode() if isinstance(request.body, bytes) else request.body
        status, answer = http("POST", f"{args.gate}/{table_path}/sign", body, {"Authorization": basic(user)})
        if status != 200:
            raise Refused(f"{status} {answer}")
        for k, v in answer["headers"].items():
            request.headers[k] = ", ".join(v)
        request.url = answer["uri"]

    client.meta.events.register_last("before-sign.s3", sign)
    return client


def shapes(prefix):
    """The shapes of S3FileIO and PyIceberg, formed by botocore, signed through icegate."""
    s3 = s3_client(f"v1/{prefix}/namespaces/db/tables/t")
    base = f"wh/{prefix}/db/t/data/shapes"
    before = len(sign_log())

    def check(label, fn, ok=lambda r: True):
        try:
            result = fn()
            return step(f"[{prefix}] {label}", ok(result), repr(result)[:300])
        except Exception as e:  # noqa: BLE001
            return step(f"[{prefix}] {label}", False, f"{type(e).__name__}: {e}")

    check("PutObject", lambda: s3.put_object(Bucket=BUCKET, Key=f"{base}/a.bin", Body=b"0123456789"))
    check("HeadObject", lambda: s3.head_object(Bucket=BUCKET, Key=f"{base}/a.bin"),
          lambda r: r["ContentLength"] == 10)
    check("GetObject with a range", lambda: s3.get_object(Bucket=BUCKET, Key=f"{base}/a.bin", Range="bytes=2-5"),
          lambda r: r["Body"].read() == b"2345")
    check("CopyObject within the table",
          lambda: s3.copy_object(Bucket=BUCKET, Key=f"{base}/b.bin", CopySource={"Bucket": BUCKET, "Key": f"{base}/a.bin"}))
    part = b"x" * (5 * 1024 * 1024)

    def multipart():
        upload = s3.create_multipart_upload(Bucket=BUCKET, Key=f"{base}/big.bin")["UploadId"]
        etags = [s3.upload_part(Bucket=BUCKET, Key=f"{base}/big.bin", UploadId=upload, PartNumber=n, Body=body)["ETag"]
                 for n, body in ((1, part), (2, b"tail"))]
        s3.complete_multipart_upload(Bucket=BUCKET, Key=f"{base}/big.bin", UploadId=upload, MultipartUpload={
            "Parts": [{"ETag": e, "PartNumber": n} for n, e in enumerate(etags, 1)]})
        return s3.head_object(Bucket=BUCKET, Key=f"{base}/big.bin")["ContentLength"]

    check("multipart upload: create, two parts, complete", multipart, lambda n: n == len(part) + 4)

    def aborted():
        upload = s3.create_multipart_upload(Bucket=BUCKET, Key=f"{base}/gone.bin")["UploadId"]
        return s3.abort_multipart_upload(Bucket=BUCKET, Key=f"{base}/gone.bin", UploadId=upload)

    check("multipart upload: create and abort", aborted)
    check("object tags: put, get, delete", lambda: (
        s3.put_object_tagging(Bucket=BUCKET, Key=f"{base}/a.bin", Tagging={"TagSet": [{"Key": "k", "Value": "v"}]}),
        s3.get_object_tagging(Bucket=BUCKET, Key=f"{base}/a.bin")["TagSet"],
        s3.delete_object_tagging(Bucket=BUCKET, Key=f"{base}/a.bin"))[1], lambda tags: tags == [{"Key": "k", "Value": "v"}])

    def listing_v2():
        keys, token = [], None
        while True:
            extra = {"ContinuationToken": token} if token else {}
            page = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"{base}/", MaxKeys=1, **extra)
            keys += [o["Key"] for o in page.get("Contents", [])]
            token = page.get("NextContinuationToken")
            if not token:
                return keys

    want = [f"{base}/a.bin", f"{base}/b.bin", f"{base}/big.bin"]
    check("ListObjectsV2 of the table's prefix, one key a page", listing_v2, lambda keys: keys == want)
    check("ListObjects (v1) with a delimiter", lambda: s3.list_objects(Bucket=BUCKET, Prefix=f"wh/{prefix}/db/t/",
                                                                       Delimiter="/"),
          lambda r: [p["Prefix"] for p in r.get("CommonPrefixes", [])] == [f"wh/{prefix}/db/t/data/",
                                                                           f"wh/{prefix}/db/t/metadata/"])
    check("DeleteObjects of two keys, its body signed",
          lambda: s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": f"{base}/a.bin"}, {"Key": f"{base}/b.bin"}]}),
          lambda r: len(r.get("Deleted", [])) == 2 and not r.get("Errors"))
    check("DeleteObject", lambda: s3.delete_object(Bucket=BUCKET, Key=f"{base}/big.bin"))
    check("the table's shapes prefix is empty again", lambda: s3.list_objects_v2(Bucket=BUCKET, Prefix=f"{base}/"),
          lambda r: r["KeyCount"] == 0)
    signed = sign_log()[before:]
    step(f"[{prefix}] every shape was signed via `{prefix}`", signed and all(e["via"] == prefix for e in signed),
         json.dumps(signed[:2]))
    return s3


def refused(prefix, s3):
    """Shapes icegate refuses: 403 from icegate, nothing reaches the signer."""
    table_path = f"v1/{prefix}/namespaces/db/tables/t"
    inside = f"wh/{prefix}/db/t/"
    enc = urllib.parse.quote(inside, safe="")
    moto = f"{args.moto}/{BUCKET}"

    def raw(method, uri, body=None, headers=None):
        req = {"method": method, "region": "us-east-1", "uri": uri, "headers": headers or {}}
        if body is not None:
            req["body"] = body
        return http("POST", f"{args.gate}/{table_path}/sign", req, {"Authorization": basic("alice")})

    def delete_xml(objects):
        return f'<?xml version="1.0" encoding="UTF-8"?><Delete>{objects}</Delete>'

    cases = [
        ("PUT ?policy with a prefix under the table", "PUT", f"{moto}?policy&prefix={enc}", None),
        ("PUT ?lifecycle with a prefix under the table", "PUT", f"{moto}?lifecycle&prefix={enc}", None),
        ("DELETE of the bucket with a prefix under the table", "DELETE", f"{moto}?prefix={enc}", None),
        ("GET ?acl of the bucket with a prefix under the table", "GET", f"{moto}?acl&prefix={enc}", None),
        ("PUT ?acl of an object in the table", "PUT", f"{moto}/{inside}data/x?acl", None),
        ("a listing of the namespace around the table", "GET",
         f"{moto}?list-type=2&prefix={urllib.parse.quote(f'wh/{prefix}/db/', safe='')}", None),
        ("a listing whose prefix is the table's location without its slash", "GET",
         f"{moto}?list-type=2&prefix={urllib.parse.quote(f'wh/{prefix}/db/t', safe='')}", None),
        ("a GET of the other prefix's table", "GET", f"{moto}/wh/{'tr' if prefix == 'lk' else 'lk'}/db/t/data/x", None),
        ("a batch delete with two keys in one object", "POST", f"{moto}?delete",
         delete_xml(f"<Object><Key>{inside}data/x</Key><Key>wh/{prefix}/db/other</Key></Object>")),
        ("a batch delete without its body (PyIceberg's signer)", "POST", f"{moto}?delete", None),
    ]
    # A signer signs the Host it is given: one naming another server is refused.
    other_host = {"Host": [urllib.parse.urlsplit(args.moto).hostname + ":1"]}
    cases = [(label, method, uri, body, None) for label, method, uri, body in cases]
    cases.append(("a GET in the table with a Host header naming another server", "GET", f"{moto}/{inside}data/x", None,
                  other_host))
    for label, method, uri, body, headers in cases:
        before = len(sign_log())
        status, answer = raw(method, uri, body, headers)
        kind = (answer or {}).get("error", {}).get("type") if isinstance(answer, dict) else None
        step(f"[{prefix}] refused: {label} (403)", status == 403 and kind == "ForbiddenException", f"{status} {answer}")
        step(f"[{prefix}] refused: {label}: the signer never saw it", len(sign_log()) == before)
    error = raised(lambda: s3.get_bucket_acl(Bucket=BUCKET))
    step(f"[{prefix}] botocore's GetBucketAcl gets no signature", isinstance(error, Refused) and "403" in str(error),
         repr(error))


def the_refused_shapes_are_real():
    """The signer would sign a refused shape, and moto would serve it: icegate is what stops it."""
    uri = f"{args.moto}/{BUCKET}?acl&prefix=wh%2Ftr%2Fdb%2Ft%2F"
    status, signed = http("POST", f"{args.catalog}/dev/sign", {"method": "GET", "region": "us-east-1", "uri": uri,
                                                                 "headers": {}})
    headers = {k: ", ".join(v) for k, v in signed["headers"].items()}
    req = urllib.request.Request(signed["uri"], headers=headers, method="GET")
    try:
        with urllib.request.urlopen(req) as r:
            served = r.status
    except urllib.error.HTTPError as e:
        served = e.code
    step("signed by the catalog's signer directly, GET ?acl&prefix=... is served by moto (200)", served == 200,
         f"sign {status}, moto {served}")
    req = urllib.request.Request(f"{args.moto}/{BUCKET}?list-type=2", method="GET")
    try:
        with urllib.request.urlopen(req) as r:
            unsigned = r.status
    except urllib.error.HTTPError as e:
        unsigned = e.code
    step("moto refuses an unsigned request", unsigned >= 400, str(unsigned))


LAKEKEEPER = {"alpha": "0195c3a1-8f2e-7d41-9a6b-3c5d7e9f1a2b", "beta": "0195c3a1-9999-7d41-9a6b-3c5d7e9f1a2b"}


def config_log():
    return http("GET", f"{args.catalog}/dev/config-log")[1]


def put_with_expect(sign_url, user, key):
    """A PutObject botocore sends with `Expect: 100-continue`, signed at `sign_url`; the
    signer's answer, or the exception."""
    client = botocore.session.get_session().create_client(
        "s3", endpoint_url=args.moto, region_name="us-east-1",
        config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}))

    def expect(request, **_):
        request.headers["Expect"] = "100-continue"

    def sign(request, **_):
        body = {"method": request.method, "region": "us-east-1", "uri": request.url,
                "headers": {k: [v] for k, v in request.headers.items()}}
        status, answer = http("POST", sign_url, body, {"Authorization": basic(user)})
        if status != 200:
            raise Refused(f"{status} {answer}")
        for k, v in answer["headers"].items():
            request.headers[k] = ", ".join(v)

    client.meta.events.register_first("before-sign.s3", expect)
    client.meta.events.register_last("before-sign.s3", sign)
    return raised(lambda: client.put_object(Bucket=BUCKET, Key=key, Body=b"0123456789"))


def lakekeeper_073():
    """Two warehouses as Lakekeeper 0.7.3 serves them, the clients' configuration plain."""
    for name, wid in LAKEKEEPER.items():
        before = len(sign_log())
        alice = catalog(name, "alice")
        alice.create_namespace("db")
        alice.create_table("db.t", schema=ROWS.schema).append(ROWS)
        signed = sign_log()[before:]
        step(f"[{name}] PyIceberg as alice writes; every request signed by `{name}`'s own signer",
             signed and all(e["via"] == name and f"/wh/{wid}/" in e["uri"] for e in signed), json.dumps(signed[:3]))

    # a reader narrowed to `reader`: icegate asks no credentials for it, so the catalog names
    # no `s3.signer`; icegate's offer must be whole
    nora = catalog("alpha", "nora", roles="reader")
    table = nora.load_table("db.t")
    offered = {k: table.io.properties.get(k) for k in ("s3.remote-signing-enabled", "s3.signer", "s3.signer.endpoint")}
    step("[alpha] the narrowed reader's table offers icegate's signer whole",
         offered["s3.remote-signing-enabled"] == "true" and offered["s3.signer"] == "S3V4RestSigner"
         and offered["s3.signer.endpoint"] == f"v1/{LAKEKEEPER['alpha']}/namespaces/db/tables/t/sign", json.dumps(offered))
    before = len(sign_log())
    rows = raised(lambda: table.scan().to_arrow())
    rows = table.scan().to_arrow().to_pylist() if rows is None else rows
    step("[alpha] the narrowed reader reads with a plain client configuration", isinstance(rows, list) and len(rows) == 3,
         f"{type(rows).__name__}: {rows}")
    step("[alpha] ... signed by `alpha`'s signer", all(e["via"] == "alpha" for e in sign_log()[before:]))
    error = raised(lambda: nora.load_table("db.t").append(ROWS))
    step("[alpha] the narrowed reader's append gets no signature (403)", error is not None and "403" in str(error),
         f"{type(error).__name__}: {error}")

    # `Expect: 100-continue`: Lakekeeper's signer signs every header it is given
    wid = LAKEKEEPER["alpha"]
    key = f"wh/{wid}/db/t/data/expect.bin"
    before = len(sign_log())
    error = put_with_expect(f"{args.gate}/v1/{wid}/namespaces/db/tables/t/sign", "alice", key)
    seen = sign_log()[before:]
    step("[alpha] a PUT with `Expect: 100-continue` signed through icegate is accepted by moto", error is None,
         f"{type(error).__name__}: {error}")
    step("[alpha] ... its sign request reached `alpha`'s signer without `Expect`",
         len(seen) == 1 and seen[0]["via"] == "alpha" and "expect" not in seen[0]["headers"], json.dumps(seen))
    error = put_with_expect(f"{args.catalog}/catalog/v1/{wid}/v1/aws/s3/sign", "alice", key)
    step("[alpha] the same PUT signed by that signer directly (`Expect` signed) is refused by moto",
         error is not None and "SignatureDoesNotMatch" in str(error), f"{type(error).__name__}: {error}")

    # a long-running job across rolling restarts: its tables were loaded before
    job = catalog("alpha", "nora", roles="reader").load_table("db.t")
    other = catalog("beta", "alice").load_table("db.t")
    subprocess.run([args.restart, args.configs[0]], check=True)
    before = len(sign_log())
    status, answer = http("POST", f"{args.gate}/v1/{wid}/namespaces/db/tables/t/sign",
                          {"method": "GET", "region": "us-east-1", "uri": f"{args.moto}/{BUCKET}/{key}",
                           "headers": {}}, {"Authorization": basic("alice")})
    message = (answer or {}).get("error", {}).get("message", "") if isinstance(answer, dict) else str(answer)
    step("restarted without `warehouses`: a sign request is 502, saying the signer cannot be learnt",
         status == 502 and "cannot be learnt" in message and "warehouses" in message, f"{status} {answer}")
    step("... and nothing was signed", len(sign_log()) == before, json.dumps(sign_log()[before:]))
    subprocess.run([args.restart, args.configs[1]], check=True)
    configs = len(config_log())
    before = len(sign_log())
    rows = raised(lambda: job.scan().to_arrow())
    rows = job.scan().to_arrow().to_pylist() if rows is None else rows
    step("restarted with `warehouses`, no client's getConfig: the narrowed job reads `alpha` again",
         isinstance(rows, list) and len(rows) == 3, f"{type(rows).__name__}: {rows}")
    rows = raised(lambda: other.scan().to_arrow())
    rows = other.scan().to_arrow().to_pylist() if rows is None else rows
    step("... and alice's job reads `beta`", isinstance(rows, list) and len(rows) == 3, f"{type(rows).__name__}: {rows}")
    signed = sign_log()[before:]
    by = {name: {e["via"] for e in signed if f"/wh/{wid}/" in e["uri"]} for name, wid in LAKEKEEPER.items()}
    step("... each warehouse's requests signed by its own signer, never the other's",
         by == {"alpha": {"alpha"}, "beta": {"beta"}}, json.dumps(by, default=sorted))
    asked = config_log()[configs:]
    step("... icegate learnt them asking getConfig with the configured warehouses",
         sorted(asked) == ["alpha", "beta"], json.dumps(asked))


for prefix in ("lk", "tr"):
    try:
        pyiceberg(prefix)
    except Exception as e:  # noqa: BLE001 - report and go on
        traceback.print_exc()
        step(f"[{prefix}] PyIceberg through icegate", False, f"{type(e).__name__}: {e}")
    client = shapes(prefix)
    refused(prefix, client)
the_refused_shapes_are_real()
try:
    lakekeeper_073()
except Exception as e:  # noqa: BLE001 - report
    traceback.print_exc()
    step("Lakekeeper 0.7.3's warehouses through icegate", False, f"{type(e).__name__}: {e}")
print(f"signing e2e: {checks - failures} of {checks} checks passed", flush=True)
sys.exit(1 if failures else 0)
