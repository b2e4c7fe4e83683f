"""The identity provider the gateway manifests name, as far as icegate meets it (tests/pod/gateway.sh):
a JWK set served over HTTPS at the manifests' `jwks_url`, and RS256 tokens with their issuer
and audience. Python's standard library and the openssl command only.

usage: idp.py serve WORK ADDRESS   serves https://ADDRESS:443 with WORK/idp.crt and idp.key
                                   (the test CA's certificate for idp.example.com) until killed;
                                   prints `serving` once listening
       idp.py token WORK USER [KEY]  prints a token for USER (its `sub`), valid for an hour,
                                   signed with WORK/jwt.key or with the key in the file KEY

WORK/jwt.key is the RSA key that signs tokens; the JWK set holds its public half.
"""

import base64
import http.server
import json
import re
import ssl
import subprocess
import sys
import time

ISSUER = "https://idp.example.com/realms/lake"
AUDIENCE = "icegate"
JWKS_PATH = "/realms/lake/protocol/openid-connect/certs"
KID = "pod-test-1"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwks(work: str) -> bytes:
    out = subprocess.run(["openssl", "rsa", "-in", f"{work}/jwt.key", "-noout", "-modulus"], check=True, capture_output=True, text=True).stdout
    modulus = bytes.fromhex(re.fullmatch(r"Modulus=([0-9A-F]+)\s*", out).group(1))
    key = {"kty": "RSA", "use": "sig", "alg": "RS256", "kid": KID, "n": b64(modulus), "e": b64((65537).to_bytes(3, "big"))}
    return json.dumps({"keys": [key]}).encode()


def token(work: str, user: str, key: str = "") -> str:
    now = int(time.time())
    header = b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": KID}).encode())
    claims = b64(json.dumps({"iss": ISSUER, "aud": AUDIENCE, "sub": user, "iat": now, "exp": now + 3600}).encode())
    signing_input = f"{header}.{claims}".encode()
    signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key or f"{work}/jwt.key"], input=signing_input, check=True, capture_output=True).stdout
    return f"{header}.{claims}.{b64(signature)}"


def serve(work: str, address: str) -> None:
    body = jwks(work)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the standard library's name
            if self.path != JWKS_PATH:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *args):
            print(f"idp: {fmt % args}", file=sys.stderr, flush=True)

    server = http.server.ThreadingHTTPServer((address, 443), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(f"{work}/idp.crt", f"{work}/idp.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("serving", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "token":
        print(token(*sys.argv[2:5]))
    else:
        sys.exit(f"unknown `{sys.argv[1]}`")
