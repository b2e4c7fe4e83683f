// The OpenID provider of tests/upstream_auth/run.sh: oidc-provider (a certified implementation)
// issuing client-credentials JWT access tokens for the fake catalog's resource, expiring in
// TOKEN_TTL seconds, signed with the RSA key of KEYS_FILE (made with kid KID when missing).
// With TRINO_SECRET set, a third client `trino` (client_secret_post, as Iceberg's Java client
// sends its credential) serves tests/e2e/trino_way.sh. GET /test/stats says how many token
// requests it answered. With TLS_CERT and TLS_KEY (PEM files) set, it serves HTTPS.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:https';
import Provider from 'oidc-provider';
import { generateKeyPair, exportJWK } from 'jose';

const port = Number(process.env.PORT);
const ttl = Number(process.env.TOKEN_TTL || '5');
const keysFile = process.env.KEYS_FILE;
const resource = 'urn:icegate:catalog';

if (!existsSync(keysFile)) {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: process.env.KID, alg: 'RS256', use: 'sig' };
  writeFileSync(keysFile, JSON.stringify({ keys: [jwk] }));
}
const { keys } = JSON.parse(readFileSync(keysFile, 'utf8'));

const client = (id, secret, method) => ({
  client_id: id,
  client_secret: secret,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  token_endpoint_auth_method: method,
});

const tls = process.env.TLS_CERT && { cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) };
const provider = new Provider(`${tls ? 'https' : 'http'}://127.0.0.1:${port}`, {
  clients: [
    client('icegate', process.env.ICEGATE_SECRET, 'client_secret_post'),
    client('etl', process.env.ETL_SECRET, 'client_secret_basic'),
    ...(process.env.TRINO_SECRET ? [client('trino', process.env.TRINO_SECRET, 'client_secret_post')] : []),
  ],
  jwks: { keys },
  scopes: ['catalog'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'catalog',
        audience: resource,
        accessTokenTTL: ttl,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
});

let tokenRequests = 0;
let bearersDropped = 0;
provider.use(async (ctx, next) => {
  if (ctx.method === 'GET' && ctx.path === '/test/stats') {
    ctx.body = { token_requests: tokenRequests, bearers_dropped: bearersDropped };
    return;
  }
  if (ctx.method === 'POST' && ctx.path === '/token') {
    tokenRequests += 1;
    // Iceberg's Java client (Trino's, with a credential and session type NONE) asks for a token
    // per call carrying the catalog's own `Authorization: Bearer` besides client_secret in the
    // body; oidc-provider refuses two client authentications (RFC 6749 §2.3), token endpoints
    // that ignore an Authorization they do not use accept it. Only when the `trino` client is
    // configured (tests/e2e/trino_way.sh) is such a Bearer dropped, as those endpoints would.
    const auth = ctx.get('authorization');
    if (process.env.TRINO_SECRET && auth.startsWith('Bearer ')) {
      delete ctx.req.headers.authorization;
      bearersDropped += 1;
    }
  }
  await next();
});

const listening = () => console.log(`idp listening on ${port} with key ${keys[0].kid}, tokens for ${ttl} s`);
if (tls) {
  createServer(tls, provider.callback()).listen(port, '127.0.0.1', listening);
} else {
  provider.listen(port, '127.0.0.1', listening);
}
