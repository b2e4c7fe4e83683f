# icegate's side calls through an egress proxy (issue 49), sourced by run.sh after its parts 1-3,
# whose identity providers (IDP: oauth2 tokens of TOKEN_TTL seconds; JWT_IDP: the jwt provider's
# JWKS), fake catalog and helpers it uses. The proxy is Debian's tinyproxy, installed with apt-get
# when missing; its log shows every request it is asked to forward.
#  a. HTTP_PROXY/HTTPS_PROXY set, NO_PROXY naming the catalog's host: the JWKS fetch and the token
#     requests go through the proxy, tokens verify and the upstream token is refreshed through it;
#     no forwarded request passes it.
#  a'. HTTPS_PROXY alone: an https:// JWK set (oidc-provider over TLS) through a CONNECT tunnel.
#  b. `[outbound] proxy` with credentials, to a proxy requiring them: the right ones get through
#     (the proxy opens the connection to the identity provider); none (407), wrong ones and a
#     proxy that is down are a 503 whose reason in /readyz names the proxy; its credentials are
#     in no log, readiness answer or error.
#  c. `[upstream] proxy` with credentials, beside HTTP_PROXY naming another proxy: the forwarded
#     requests go through the first (its log shows them, the client's calls succeed), the token
#     requests through the second, which sees no forwarded request; without `[upstream] proxy`,
#     HTTP_PROXY and no NO_PROXY, the forwarded requests pass no proxy.

if ! command -v tinyproxy >/dev/null || ! command -v openssl >/dev/null; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "upstream_auth: apt-get install tinyproxy openssl" >&2
  $SUDO apt-get update -qq >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tinyproxy openssl >&2
fi

# start_proxy NAME [USER PASSWORD]: tinyproxy on a free port (Basic credentials required when
# given); sets PROXY_PORT. Its log is $WORK/NAME.log.
start_proxy() {
  PROXY_PORT="$(free_port)"
  {
    printf 'Port %s\nListen 127.0.0.1\nTimeout 30\nLogFile "%s"\nLogLevel Info\nMaxClients 64\nAllow 127.0.0.1\n' \
      "$PROXY_PORT" "$WORK/$1.log"
    [ -z "${2:-}" ] || printf 'BasicAuth %s %s\n' "$2" "$3"
  } >"$WORK/$1.conf"
  tinyproxy -d -c "$WORK/$1.conf" >"$WORK/$1.out" 2>&1 &
  PIDS+=($!)
  wait_for "$WORK/$1.log" "Accepting connections" "${PIDS[-1]}"
}
# oauth2_upstream URL [PROXY]: an [upstream] on the fake catalog with IDP's client-credentials
# tokens, reached through PROXY when given
oauth2_upstream() {
  printf '[upstream]\nurl = "%s"\nauth = "oauth2"\n' "$1"
  [ -z "${2:-}" ] || printf 'proxy = "%s"\n' "$2"
  printf '[upstream.oauth2]\ntoken_endpoint = "%s/token"\nclient_id = "icegate"\nclient_secret_file = "%s"\nscope = "catalog"\n' \
    "$IDP" "$WORK/client-secret"
}
alice() { curl -s -o "$WORK/answer.json" -w '%{http_code}' -u alice:pw "$GATE/v1/namespaces/db"; }
# no_secret TEXT FILE...: fails when TEXT is in any FILE
no_secret() {
  local secret="$1"; shift
  if grep -aqF -e "$secret" "$@"; then fail "the proxy's password is in $(grep -alF -e "$secret" "$@" | tr '\n' ' ')"; fi
}

# a. the environment's proxy; the catalog reached as localhost, which NO_PROXY names
start_proxy egress-proxy
PROXY="http://127.0.0.1:$PROXY_PORT"
LOCAL_CATALOG="http://localhost:$CATALOG_PORT"
export HTTP_PROXY="$PROXY" HTTPS_PROXY="$PROXY" NO_PROXY=localhost
start_gate egress "[identity]
providers = [\"jwt\"]
[identity.jwt]
issuer = \"$JWT_IDP\"
audience = \"urn:icegate:catalog\"
jwks_url = \"$JWT_IDP/jwks\"
user_claims = [\"client_id\"]
$(oauth2_upstream "$LOCAL_CATALOG")"
unset HTTP_PROXY HTTPS_PROXY NO_PROXY
grep -aqF "side calls go through an egress proxy" "$WORK/egress.log" || fail "the start-up log does not name the proxy"
TOKEN_A="$(token)"
[ "$(status "$TOKEN_A")" = 200 ] || fail "through the proxy, a valid token is refused or the upstream not reached"
grep -aqF "GET http://127.0.0.1:$JWT_PORT/jwks " "$WORK/egress-proxy.log" || fail "the JWK set was not fetched through the proxy"
grep -aqF "POST http://127.0.0.1:$IDP_PORT/token " "$WORK/egress-proxy.log" || fail "the upstream token was not asked through the proxy"
sleep "$TOKEN_TTL"  # the upstream token is due for replacement
[ "$(status "$TOKEN_A")" = 200 ] || fail "through the proxy, the upstream token was not refreshed"
POSTS="$(grep -acF "POST http://127.0.0.1:$IDP_PORT/token " "$WORK/egress-proxy.log")"
[ "$POSTS" -ge 2 ] || fail "the upstream token was refreshed without the proxy ($POSTS token requests through it)"
if grep -aqF ":$CATALOG_PORT" "$WORK/egress-proxy.log"; then fail "a forwarded request went through the proxy"; fi
echo "egress: the JWK set and $POSTS token requests through the proxy, the forwarded requests directly" >&2

# a'. HTTPS_PROXY alone: an https:// JWK set (oidc-provider over TLS, its CA in `[outbound]
# ca_file`) is fetched through a CONNECT tunnel; the http:// token endpoint is reached directly
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/ca.key" -out "$WORK/ca.crt" -days 1 \
  -subj /CN=icegate-e2e-ca 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$WORK/idp.key" -out "$WORK/idp.csr" -subj /CN=127.0.0.1 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$WORK/idp.ext"
openssl x509 -req -in "$WORK/idp.csr" -CA "$WORK/ca.crt" -CAkey "$WORK/ca.key" -CAcreateserial -days 1 \
  -extfile "$WORK/idp.ext" -out "$WORK/idp.crt" 2>/dev/null
TLS_PORT="$(free_port)"
TLS_IDP="https://127.0.0.1:$TLS_PORT"
export TLS_CERT="$WORK/idp.crt" TLS_KEY="$WORK/idp.key"
start_idp tls-idp "$TLS_PORT" 300 "$WORK/tls-keys.json" tls-key-1
unset TLS_CERT TLS_KEY
export HTTPS_PROXY="$PROXY"
start_gate egress-tls "[outbound]
ca_file = \"$WORK/ca.crt\"
[identity]
providers = [\"jwt\"]
[identity.jwt]
issuer = \"$TLS_IDP\"
audience = \"urn:icegate:catalog\"
jwks_url = \"$TLS_IDP/jwks\"
user_claims = [\"client_id\"]
$(oauth2_upstream "$LOCAL_CATALOG")"
unset HTTPS_PROXY
TLS_TOKEN="$(curl -fsS --cacert "$WORK/ca.crt" -u "etl:$ETL_SECRET" -d grant_type=client_credentials -d scope=catalog \
  "$TLS_IDP/token" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')"
[ "$(status "$TLS_TOKEN")" = 200 ] || fail "a token whose JWK set is fetched through a CONNECT tunnel is refused"
grep -aqF "CONNECT 127.0.0.1:$TLS_PORT " "$WORK/egress-proxy.log" || fail "the https:// JWK set was not fetched through the proxy"
[ "$(grep -acF "POST http://127.0.0.1:$IDP_PORT/token " "$WORK/egress-proxy.log")" = "$POSTS" ] \
  || fail "with HTTPS_PROXY alone, an http:// token request went through the proxy"
echo "egress: an https:// JWK set through HTTPS_PROXY's CONNECT tunnel, the http:// token endpoint directly" >&2

# b. `[outbound] proxy` with credentials
PROXY_SECRET="proxy-pw-$RANDOM$RANDOM"
start_proxy auth-proxy icegate "$PROXY_SECRET"
AUTH_PROXY="http://127.0.0.1:$PROXY_PORT"
start_gate proxy-ok "[outbound]
proxy = \"http://icegate:$PROXY_SECRET@127.0.0.1:$PROXY_PORT\"
no_proxy = [\"localhost\"]
$(oauth2_upstream "$LOCAL_CATALOG")"
[ "$(alice)" = 200 ] || fail "through the proxy with its credentials, the request failed: $(cat "$WORK/answer.json")"
grep -aqF "opening connection to 127.0.0.1:$IDP_PORT" "$WORK/auth-proxy.log" || fail "the proxy did not forward the token request"
no_secret "$PROXY_SECRET" "$WORK/proxy-ok.log"

# without credentials: the proxy answers 407
start_gate proxy-refused "[outbound]
proxy = \"$AUTH_PROXY\"
no_proxy = [\"localhost\"]
$(oauth2_upstream "$LOCAL_CATALOG")"
[ "$(alice)" = 503 ] || fail "a proxy refusing the request (407) is not a 503: $(cat "$WORK/answer.json")"
curl -s "$ADMIN/readyz" >"$WORK/readyz-refused.json"
grep -aqF "407 (through the proxy \`$AUTH_PROXY\`)" "$WORK/readyz-refused.json" \
  || fail "/readyz does not say the proxy refused: $(cat "$WORK/readyz-refused.json")"
# wrong credentials (tinyproxy answers them 401, closing the connection)
WRONG_SECRET="wrong-pw-$RANDOM$RANDOM"
start_gate proxy-wrong "[outbound]
proxy = \"http://icegate:$WRONG_SECRET@127.0.0.1:$PROXY_PORT\"
no_proxy = [\"localhost\"]
$(oauth2_upstream "$LOCAL_CATALOG")"
[ "$(alice)" = 503 ] || fail "a proxy refusing the credentials is not a 503: $(cat "$WORK/answer.json")"
curl -s "$ADMIN/readyz" >"$WORK/readyz-wrong.json"
grep -aqF "(through the proxy \`$AUTH_PROXY\`)" "$WORK/readyz-wrong.json" \
  || fail "/readyz does not name the proxy that refused the credentials: $(cat "$WORK/readyz-wrong.json")"
no_secret "$WRONG_SECRET" "$WORK/proxy-wrong.log" "$WORK/readyz-wrong.json" "$WORK/answer.json"

DOWN_PORT="$(free_port)"  # nothing listens there
export HTTP_PROXY="http://icegate:$WRONG_SECRET@127.0.0.1:$DOWN_PORT" NO_PROXY=localhost
start_gate proxy-down "$(oauth2_upstream "$LOCAL_CATALOG")"
unset HTTP_PROXY NO_PROXY
[ "$(alice)" = 503 ] || fail "a proxy that is down is not a 503: $(cat "$WORK/answer.json")"
curl -s "$ADMIN/readyz" >"$WORK/readyz-down.json"
grep -aqF "(through the proxy \`http://127.0.0.1:$DOWN_PORT\`)" "$WORK/readyz-down.json" \
  || fail "/readyz does not name the proxy that is down: $(cat "$WORK/readyz-down.json")"
no_secret "$WRONG_SECRET" "$WORK/proxy-down.log" "$WORK/readyz-down.json" "$WORK/answer.json"
echo "egress: a proxy's credentials sent and never logged; a refusing (407, 401) or down proxy is a 503 named in /readyz" >&2

# c. `[upstream] proxy`: the forwarded requests through the proxy requiring credentials, the side
# calls through the environment's; the catalog as 127.0.0.1, which no NO_PROXY names
forwarded() { grep -acF "GET http://127.0.0.1:$CATALOG_PORT/v1/namespaces/db " "$1" || true; }
side_posts() { grep -acF "POST http://127.0.0.1:$IDP_PORT/token " "$WORK/egress-proxy.log" || true; }
POSTS_BEFORE="$(side_posts)"
export HTTP_PROXY="$PROXY"
start_gate upstream-proxy "$(oauth2_upstream "$CATALOG" "http://icegate:$PROXY_SECRET@127.0.0.1:$PROXY_PORT")"
unset HTTP_PROXY
grep -aqF "forwarded requests go through the upstream's proxy" "$WORK/upstream-proxy.log" \
  || fail "the start-up log does not say the upstream is reached through a proxy"
for _ in 1 2 3; do
  [ "$(alice)" = 200 ] || fail "through [upstream] proxy, the request failed: $(cat "$WORK/answer.json")"
done
THROUGH="$(forwarded "$WORK/auth-proxy.log")"
[ "$THROUGH" -ge 3 ] || fail "the forwarded requests did not go through [upstream] proxy ($THROUGH in its log)"
[ "$(side_posts)" -gt "$POSTS_BEFORE" ] || fail "the token request did not go through HTTP_PROXY"
if grep -aqF ":$CATALOG_PORT" "$WORK/egress-proxy.log"; then fail "a forwarded request went through HTTP_PROXY"; fi
curl -s "$ADMIN/readyz" >"$WORK/readyz-upstream-proxy.json"
no_secret "$PROXY_SECRET" "$WORK/upstream-proxy.log" "$WORK/readyz-upstream-proxy.json" "$WORK/answer.json"

# without `[upstream] proxy`, HTTP_PROXY set and the catalog in no NO_PROXY: still directly
export HTTP_PROXY="$PROXY"
start_gate upstream-direct "$(oauth2_upstream "$CATALOG")"
unset HTTP_PROXY
[ "$(alice)" = 200 ] || fail "directly, the request failed: $(cat "$WORK/answer.json")"
if grep -aqF ":$CATALOG_PORT" "$WORK/egress-proxy.log"; then fail "HTTP_PROXY carried a forwarded request"; fi
[ "$(forwarded "$WORK/auth-proxy.log")" = "$THROUGH" ] || fail "a forwarded request went through a proxy unasked"
echo "egress: $THROUGH forwarded requests through [upstream] proxy with its credentials, never through HTTP_PROXY" >&2
