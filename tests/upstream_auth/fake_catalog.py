"""A recording fake Iceberg REST catalog for tests/upstream_auth/run.sh, in one of two modes.

oauth2: accepts only Bearer tokens of the OpenID provider (PyJWT verifies each against the
provider's JWKS: signature, issuer, audience, expiry); `POST /_revoke_next` makes it refuse the
next token it sees, as a catalog that revoked it would (401).

sigv4: accepts only requests signed with AWS SigV4 by the access key it knows: botocore's own
`SigV4Auth` recomputes the signature over the request as received (the headers it names as
signed, the path, the query and the body's SHA-256) and compares; anything else is 403.

`GET /_stats` answers what it saw: accepted and refused requests, and the refusals' reasons.
"""

import hashlib
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
PORT = int(sys.argv[2])
LOCK = threading.Lock()
STATS = {"accepted": 0, "refused": 0, "reasons": [], "bodies": []}
REVOKE_NEXT = [False]
REVOKED = set()

if MODE == "oauth2":
    import jwt

    JWKS_URL, ISSUER, AUDIENCE = sys.argv[3], sys.argv[4], sys.argv[5]
    # fetches the set again when a token names a key it does not hold
    JWKS = jwt.PyJWKClient(JWKS_URL, cache_keys=True, lifespan=3600)
else:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    ACCESS_KEY, SECRET_KEY, SESSION_TOKEN = sys.argv[3], sys.argv[4], sys.argv[5]

AUTH_RE = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
    r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$"
)


def check_token(handler):
    auth = handler.headers.get("Authorization", "")
    if not auth.startswith("Bearer "):
        return "no bearer token"
    token = auth[len("Bearer "):]
    try:
        key = JWKS.get_signing_key_from_jwt(token)
        claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=AUDIENCE, issuer=ISSUER)
    except Exception as e:  # every failure is a refusal, said in the stats
        return f"token refused: {type(e).__name__}: {e}"
    with LOCK:
        if claims["jti"] in REVOKED:
            return "token revoked"
        if REVOKE_NEXT[0]:
            REVOKE_NEXT[0] = False
            REVOKED.add(claims["jti"])
            return "token revoked"
    return None


def check_signature(handler, body):
    auth = handler.headers.get("Authorization", "")
    m = AUTH_RE.match(auth)
    if not m:
        return f"no SigV4 Authorization: {auth[:40]!r}"
    key, _date, region, service, signed, signature = m.groups()
    if key != ACCESS_KEY:
        return "unknown access key"
    names = signed.split(";")
    for must in ("host", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"):
        if must not in names:
            return f"{must} is not signed"
    if handler.headers.get("X-Amz-Content-Sha256") != hashlib.sha256(body).hexdigest():
        return "x-amz-content-sha256 is not the body's SHA-256"
    headers = {n: handler.headers.get(n) for n in names}
    if any(v is None for v in headers.values()):
        return "a signed header is missing"
    request = AWSRequest(method=handler.command, url=f"http://{headers['host']}{handler.path}", data=body, headers=headers)
    request.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY, SESSION_TOKEN), service, region)
    if signer.payload(request) != headers["x-amz-content-sha256"]:
        return "botocore's payload hash differs"
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if expected != signature:
        return f"signature mismatch; botocore's canonical request:\n{canonical}"
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path == "/_stats":
            with LOCK:
                return self.answer(200, STATS)
        if self.path == "/_revoke_next":
            REVOKE_NEXT[0] = True
            return self.answer(200, {})
        why = check_token(self) if MODE == "oauth2" else check_signature(self, body)
        with LOCK:
            if why:
                STATS["refused"] += 1
                STATS["reasons"].append(why)
            else:
                STATS["accepted"] += 1
                if body:
                    STATS["bodies"].append(body.decode())
        if why:
            status, kind = (401, "NotAuthorizedException") if MODE == "oauth2" else (403, "ForbiddenException")
            return self.answer(status, {"error": {"message": why.split("\n")[0], "type": kind, "code": status}})
        path = self.path.split("?")[0]
        if path.endswith("/v1/config"):
            return self.answer(200, {"defaults": {}, "overrides": {}})
        if self.command == "HEAD":
            return self.answer(404 if "/tables/" in path or path.count("/namespaces/") else 200, {})
        if self.command == "GET" and path.endswith("/namespaces"):
            return self.answer(200, {"namespaces": [["db"]]})
        if self.command == "GET" and "/namespaces/" in path and "/tables" not in path:
            return self.answer(200, {"namespace": ["db"], "properties": {}})
        return self.answer(200, {})

    do_GET = do_POST = do_DELETE = do_HEAD = handle_any


ThreadingHTTPServer.daemon_threads = True
print(f"fake catalog ({MODE}) listening on {PORT}", flush=True)
ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
