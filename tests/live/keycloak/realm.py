"""Sets up a Keycloak realm for tests/live/trino.sh through Keycloak's admin REST API.

Usage: realm.py KEYCLOAK REALM AUDIENCE SCOPE CLIENT:SECRET:GROUP...

Logs in as the bootstrap admin (admin-cli, KC_ADMIN_USER / KC_ADMIN_PASSWORD from the
environment), creates REALM (tokens live 15 minutes, so no refresh happens during a run), a
client scope SCOPE whose tokens carry AUDIENCE in `aud` and the caller's groups (names, not
paths) in a `groups` claim, and for each CLIENT:SECRET:GROUP a confidential client with only the
client-credentials grant, SCOPE as an optional scope, and its service account in GROUP (created
when missing). Then fetches one token per client, as Iceberg's OAuth2 client does (client id and
secret in the form, `scope=SCOPE`), and prints its claims, one JSON line per client. Exits
non-zero on any failure.
"""
import base64
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

keycloak, realm, audience, scope, *clients = sys.argv[1:]


def call(method, path, body=None, token=None, form=None):
    headers = {}
    data = None
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    elif body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(keycloak + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            raw = resp.read()
            return resp.headers.get("Location"), (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as e:
        sys.exit(f"realm.py: {method} {path}: {e.code} {e.read().decode(errors='replace')}")


def token_for(realm_name, form):
    _, answer = call("POST", f"/realms/{realm_name}/protocol/openid-connect/token", form=form)
    return answer["access_token"]


admin = token_for("master", {
    "grant_type": "password", "client_id": "admin-cli",
    "username": os.environ.get("KC_ADMIN_USER", "admin"),
    "password": os.environ["KC_ADMIN_PASSWORD"],
})
base = f"/admin/realms/{realm}"
call("POST", "/admin/realms", {"realm": realm, "enabled": True, "accessTokenLifespan": 900}, admin)
call("POST", f"{base}/client-scopes", {
    "name": scope, "protocol": "openid-connect",
    "attributes": {"include.in.token.scope": "true", "display.on.consent.screen": "false"},
    "protocolMappers": [
        {"name": "audience", "protocol": "openid-connect", "protocolMapper": "oidc-audience-mapper",
         "config": {"included.custom.audience": audience, "access.token.claim": "true",
                    "id.token.claim": "false"}},
        {"name": "groups", "protocol": "openid-connect", "protocolMapper": "oidc-group-membership-mapper",
         "config": {"claim.name": "groups", "full.path": "false", "access.token.claim": "true",
                    "id.token.claim": "false", "userinfo.token.claim": "false"}},
    ],
}, admin)
_, scopes = call("GET", f"{base}/client-scopes", token=admin)
scope_id = next(s["id"] for s in scopes if s["name"] == scope)

groups = {}
for spec in clients:
    client_id, secret, group = spec.split(":", 2)
    if group not in groups:
        location, _ = call("POST", f"{base}/groups", {"name": group}, admin)
        groups[group] = location.rsplit("/", 1)[1]
    location, _ = call("POST", f"{base}/clients", {
        "clientId": client_id, "enabled": True, "protocol": "openid-connect",
        "publicClient": False, "clientAuthenticatorType": "client-secret", "secret": secret,
        "serviceAccountsEnabled": True, "standardFlowEnabled": False,
        "directAccessGrantsEnabled": False, "implicitFlowEnabled": False,
    }, admin)
    internal = location.rsplit("/", 1)[1]
    call("PUT", f"{base}/clients/{internal}/optional-client-scopes/{scope_id}", token=admin)
    _, account = call("GET", f"{base}/clients/{internal}/service-account-user", token=admin)
    call("PUT", f"{base}/users/{account['id']}/groups/{groups[group]}", token=admin)

for spec in clients:
    client_id, secret, _ = spec.split(":", 2)
    jwt = token_for(realm, {"grant_type": "client_credentials", "client_id": client_id,
                            "client_secret": secret, "scope": scope})
    payload = jwt.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    print(json.dumps({k: claims.get(k) for k in ("iss", "aud", "azp", "client_id", "groups", "scope")}))
