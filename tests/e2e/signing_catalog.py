"""A small Iceberg REST catalog with a real S3 signer, for tests/e2e/signing.sh.

Usage: signing_catalog.py --moto URL --bucket B --key-id ID --secret S
(the sign venv's python, target/e2e-sign-venv)

One in-memory catalog (namespaces, tables, createTable, loadTable, commits, built on PyIceberg's
own metadata functions) served under two prefixes that differ only in how they sign:

  /v1/lk/...  Lakekeeper-like: each table's `config` advertises the catalog's own signer
              (`s3.signer.uri` = http://THIS/catalog/, `s3.signer.endpoint` =
              v1/lk/v1/aws/s3/sign), which answers at POST /catalog/v1/lk/v1/aws/s3/sign; the
              table-scoped route is not served (404), as Lakekeeper does not serve it.
  /v1/tr/...  the spec's table-scoped route POST /v1/tr/namespaces/{ns}/tables/{t}/sign; no
              signer address in the table's config.
  /v1/{id}/... two warehouses as Lakekeeper 0.7.3 serves them (`alpha` and `beta`, each prefix
              the warehouse's id): the signer is advertised only in getConfig's overrides
              (`s3.signer.uri` = http://THIS/catalog/v1/{id}, the default endpoint), answering at
              POST /catalog/v1/{id}/v1/aws/s3/sign and signing every header it is given but
              aws-sigv4's exclusions (`Expect` included, as Lakekeeper does); a table's config
              has `s3.remote-signing-enabled` and no signer keys, and `s3.signer` only when
              vended credentials were asked for; no table-scoped sign route.

getConfig answers only `?warehouse=<name>` (lk, tr, alpha, beta): 400 without it, 404 for an id,
as Lakekeeper does.

Tables live at s3://B/wh/{prefix}/{namespace}/{table} on moto; the catalog writes metadata
files there itself with the key ID/secret, and signs with them (botocore's SigV4, the payload
unsigned unless the sign request carries a `body`, as a batch delete does, whose SHA-256 is
then signed). GET /dev/sign-log lists the sign requests received, in order, as
`{"via": "lk"|"tr"|"alpha"|"beta", "method", "uri", "headers"}` (the names of the headers it
was given, lower case); GET /dev/config-log the getConfig queries received; POST /dev/sign answers a sign request directly (the
test's proof that a shape icegate refuses is one the signer itself would sign).
Prints `signing catalog listening on http://127.0.0.1:P` once ready; runs until killed.
"""
import argparse
import json
import re
import threading
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from pyiceberg.catalog.rest import CreateTableRequest
from pyiceberg.io import load_file_io
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.serializers import ToOutputFile
from pyiceberg.table import CommitTableRequest
from pyiceberg.table.metadata import new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.table.update import update_table_metadata

parser = argparse.ArgumentParser()
parser.add_argument("--moto", required=True)
parser.add_argument("--bucket", required=True)
parser.add_argument("--key-id", required=True)
parser.add_argument("--secret", required=True)
args = parser.parse_args()

IO = load_file_io({"s3.endpoint": args.moto, "s3.access-key-id": args.key_id, "s3.secret-access-key": args.secret,
                   "s3.region": "us-east-1", "s3.force-virtual-addressing": "false"})
# Lakekeeper 0.7.3's warehouses: name -> id (the prefix)
LAKEKEEPER = {"alpha": "0195c3a1-8f2e-7d41-9a6b-3c5d7e9f1a2b", "beta": "0195c3a1-9999-7d41-9a6b-3c5d7e9f1a2b"}
BY_ID = {v: k for k, v in LAKEKEEPER.items()}
PREFIXES = ("lk", "tr", *LAKEKEEPER.values())
lock = threading.Lock()
namespaces = {p: set() for p in PREFIXES}
tables = {}  # (prefix, namespace, name) -> (metadata_location, TableMetadata)
sign_log = []
config_log = []
own_url = ""


class Unsigned(S3SigV4Auth):
    """SigV4 for S3 with an unsigned payload unless the request carries its body."""

    def _should_sha256_sign_payload(self, request):
        return bool(request.body)


class SignsEveryHeader(Unsigned):
    """As Lakekeeper's signer (aws-sigv4): every header given is signed, `Expect` too, but
    aws-sigv4's own exclusions."""

    def headers_to_sign(self, request):
        headers = super().headers_to_sign(request)
        for name, value in request.headers.items():
            lower = name.lower()
            if lower not in ("authorization", "user-agent", "x-amzn-trace-id", "transfer-encoding") \
                    and lower not in headers:
                headers[lower] = value
        return headers


def sign(req, auth=Unsigned):
    """Signs a RemoteSignRequest; answers the headers the client must add (the signer's own)."""
    given = {k: ", ".join(v) for k, v in (req.get("headers") or {}).items()}
    body = req.get("body")
    request = AWSRequest(method=req["method"], url=req["uri"], headers=dict(given),
                         data=body.encode() if body else None)
    auth(Credentials(args.key_id, args.secret), "s3", req.get("region") or "us-east-1").add_auth(request)
    added = {k: [v] for k, v in request.headers.items() if given.get(k) != v}
    return {"uri": req["uri"], "headers": added}


def logged(via, req):
    return {"via": via, "method": req["method"], "uri": req["uri"],
            "headers": sorted(k.lower() for k in (req.get("headers") or {}))}


def error(status, kind, message):
    return status, {"error": {"message": message, "type": kind, "code": status}}


def table_config(prefix, delegation):
    config = {"s3.endpoint": args.moto, "s3.path-style-access": "true", "client.region": "us-east-1",
              "s3.remote-signing-enabled": "true"}
    # Lakekeeper 0.7.3 names PyIceberg's signer only when asked for credentials it cannot vend
    if prefix not in BY_ID or "vended-credentials" in delegation:
        config["s3.signer"] = "S3V4RestSigner"
    if prefix == "lk":
        config["s3.signer.uri"] = f"{own_url}/catalog/"
        config["s3.signer.endpoint"] = "v1/lk/v1/aws/s3/sign"
    return config


def load_result(prefix, namespace, name, delegation=""):
    location, metadata = tables[(prefix, namespace, name)]
    return {"metadata-location": location, "metadata": json.loads(metadata.model_dump_json(by_alias=True)),
            "config": table_config(prefix, delegation)}


def write_metadata(metadata, version):
    path = f"{metadata.location}/metadata/{version:05d}-{uuid.uuid4()}.metadata.json"
    ToOutputFile.table_metadata(metadata, IO.new_output(path))
    return path


def route(method, path, query, body, delegation):
    if path == "/dev/sign-log":
        with lock:
            return 200, list(sign_log)
    if path == "/dev/config-log":
        with lock:
            return 200, list(config_log)
    if path == "/dev/sign" and method == "POST":
        return 200, sign(body)
    if path == "/v1/config":
        warehouse = query.get("warehouse", [""])[0]
        with lock:
            config_log.append(warehouse)
        if not warehouse:
            return error(400, "BadRequestException", "No warehouse specified. Please specify the 'warehouse' "
                                                     "parameter in the GET /config request.")
        if warehouse in LAKEKEEPER:
            wid = LAKEKEEPER[warehouse]
            return 200, {"defaults": {"s3.delete-enabled": "false"},
                         "overrides": {"prefix": wid, "uri": f"{own_url}/catalog",
                                       "s3.signer.uri": f"{own_url}/catalog/v1/{wid}"}}
        if warehouse in ("lk", "tr"):
            return 200, {"defaults": {}, "overrides": {"prefix": warehouse}}
        return error(404, "WarehouseNotFound", f"Warehouse {warehouse} not found")
    m = re.fullmatch(r"/catalog/v1/(lk|[0-9a-f-]{36})/v1/aws/s3/sign", path)
    if m and method == "POST" and m.group(1) in ("lk", *BY_ID):
        via = BY_ID.get(m.group(1), "lk")
        with lock:
            sign_log.append(logged(via, body))
        return 200, sign(body, Unsigned if via == "lk" else SignsEveryHeader)
    m = re.fullmatch(r"/v1/(lk|tr|[0-9a-f-]{36})/namespaces(?:/([^/]+)(?:/tables(?:/([^/]+)(/sign)?)?)?)?", path)
    if m and m.group(1) not in PREFIXES:
        m = None
    if not m:
        return error(404, "NotFoundException", f"no route for {method} {path}")
    prefix, namespace, name, signs = m.groups()
    namespace = urllib.parse.unquote(namespace) if namespace else None
    name = urllib.parse.unquote(name) if name else None
    with lock:
        if namespace is None:
            if method == "POST":
                ns = ".".join(body["namespace"])
                if ns in namespaces[prefix]:
                    return error(409, "AlreadyExistsException", "namespace exists")
                namespaces[prefix].add(ns)
                return 200, {"namespace": body["namespace"], "properties": {}}
            return 200, {"namespaces": [[n] for n in sorted(namespaces[prefix])]}
        if namespace not in namespaces[prefix]:
            return error(404, "NoSuchNamespaceException", "no such namespace")
        if name is None:
            if method == "POST":
                create = CreateTableRequest.model_validate({"location": None, "partition-spec": None,
                                                            "write-order": None, **body})
                key = (prefix, namespace, create.name)
                if key in tables:
                    return error(409, "AlreadyExistsException", "table exists")
                location = f"s3://{args.bucket}/wh/{prefix}/{namespace}/{create.name}"
                metadata = new_table_metadata(create.table_schema, create.partition_spec or UNPARTITIONED_PARTITION_SPEC,
                                              create.write_order or UNSORTED_SORT_ORDER, location, create.properties)
                tables[key] = (write_metadata(metadata, 0), metadata)
                return 200, load_result(*key, delegation)
            names = [k[2] for k in tables if k[:2] == (prefix, namespace)]
            return 200, {"identifiers": [{"namespace": [namespace], "name": n} for n in sorted(names)]}
        key = (prefix, namespace, name)
        if key not in tables:
            return error(404, "NoSuchTableException", "no such table")
        if signs:
            if prefix != "tr":  # Lakekeeper serves no table-scoped sign route
                return error(404, "NotFoundException", f"no route for {method} {path}")
            sign_log.append(logged("tr", body))
            return 200, sign(body)
        if method == "GET":
            return 200, load_result(*key, delegation)
        if method == "HEAD":
            return 204, None
        if method == "POST":
            commit = CommitTableRequest.model_validate(body)
            location, base = tables[key]
            try:
                for requirement in commit.requirements:
                    requirement.validate(base)
            except Exception as e:  # noqa: BLE001 - a failed requirement is a conflict
                return error(409, "CommitFailedException", str(e))
            updated = update_table_metadata(base, commit.updates, metadata_location=location)
            new_location = write_metadata(updated, len(updated.metadata_log))
            tables[key] = (new_location, updated)
            return 200, {"metadata-location": new_location,
                         "metadata": json.loads(updated.model_dump_json(by_alias=True))}
    return error(405, "BadRequestException", f"{method} {path}")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):  # quiet
        pass

    def handle_one(self):
        url = urllib.parse.urlsplit(self.path)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            status, answer = route(self.command, url.path, urllib.parse.parse_qs(url.query),
                                   json.loads(raw) if raw else None,
                                   self.headers.get("X-Iceberg-Access-Delegation") or "")
        except Exception as e:  # noqa: BLE001 - report, do not hang the client
            status, answer = error(500, "ServiceFailureException", f"{type(e).__name__}: {e}")
        data = b"" if answer is None else json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_POST = do_HEAD = do_DELETE = handle_one


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
own_url = f"http://127.0.0.1:{server.server_address[1]}"
print(f"signing catalog listening on {own_url}", flush=True)
server.serve_forever()
