//! Profiles of the recording fake upstream that answer as real catalogs do (issue 29, "a page per
//! catalog"): each catalog's base path, getConfig answer and prefix, loadTable `config` and
//! `storage-credentials`, list answers, its own S3 signer where it has one, and the upstream
//! authentication it takes (an OAuth2 client-credentials token from its token endpoint, or AWS
//! SigV4 for its signing name, verified on every request). Each profile was written from the
//! catalog's public source or documentation, named in its file and in its docs/catalogs page;
//! none was checked against the running product. `served` runs the same served-path checks
//! against every profile; each catalog's file adds what is particular to it.

use crate::fake_upstream::{FakeUpstream, Recorded, Reply};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

mod glue;
mod gravitino;
mod iceberg_rest;
mod lakekeeper;
mod lakekeeper_073;
mod nessie;
mod polaris;
mod s3tables;
mod served;
mod unity;

/// How the catalog authenticates icegate.
#[derive(Clone, Copy, Debug)]
pub enum Auth {
    /// The caller's own `Authorization` (HTTP Basic in these tests) reaches the catalog.
    Passthrough,
    /// Client-credentials tokens from `token_path` on the catalog's own origin; `scope` is the
    /// one the catalog requires.
    OAuth2 { token_path: &'static str, scope: &'static str },
    /// AWS SigV4 for `service` in `region`; an unsigned or badly signed request is 403.
    SigV4 { service: &'static str, region: &'static str },
}

/// What a real catalog answers, as the recording fake plays it.
#[derive(Clone, Copy, Debug)]
pub struct Profile {
    /// The policy's name for the catalog.
    pub catalog: &'static str,
    /// The `catalogs` entry's `prefix` (decoded); `None`: the prefix is the catalog's name, or
    /// (when `path_prefix` is empty) the catalog is the policy's `default_catalog`.
    pub declared: Option<&'static str>,
    /// The catalog's base path in front of `/v1`.
    pub base: &'static str,
    /// The `warehouse` query of getConfig, encoded as clients send it.
    pub warehouse: &'static str,
    /// The prefix segment(s) as clients put them in paths (empty: no prefix).
    pub path_prefix: &'static str,
    /// getConfig's answer, given the catalog's own origin (`http://127.0.0.1:PORT`).
    pub config: fn(&str) -> Value,
    /// loadTable's `config` given the catalog's origin and the request's
    /// `X-Iceberg-Access-Delegation`.
    pub table_config: fn(&str, Option<&str>) -> Value,
    /// The config keys that carry the catalog's vended credentials.
    pub secret_keys: &'static [&'static str],
    /// Whether loadTable also answers `storage-credentials` (the same keys, for the table).
    pub storage_credentials: bool,
    /// Where the catalog keeps tables: `{root}/{namespace}/{table}`.
    pub root: &'static str,
    pub auth: Auth,
    /// The path on the catalog's origin where it signs S3 requests (its own signer), if any.
    pub signer: Option<&'static str>,
}

/// The client secret the fake token endpoints accept.
pub const SECRET: &str = "catalog-client-secret";

impl Profile {
    /// `/v1/{prefix}` as clients send it, or `/v1` without a prefix.
    pub fn v1(&self) -> String {
        if self.path_prefix.is_empty() { "/v1".to_owned() } else { format!("/v1/{}", self.path_prefix) }
    }

    pub fn location(&self, namespace: &str, table: &str) -> String {
        format!("{}/{namespace}/{table}", self.root)
    }

    /// The policy: `dave` reads `sales` but not `salaries`, `alice` reads and modifies `sales`
    /// (roles `analyst` and `editor`), `erin` holds nothing.
    pub fn policy(&self) -> String {
        let cat = self.catalog;
        let catalogs = match (self.declared, self.path_prefix.is_empty()) {
            (_, true) => format!("default_catalog: {cat}\n"),
            (Some(prefix), false) => format!("catalogs:\n  - {{ prefix: \"{prefix}\", name: {cat} }}\n"),
            (None, false) => format!("catalogs:\n  - {{ name: {cat} }}\n"),
        };
        format!(
            r#"
version: 1
metalake: lake
{catalogs}users:
  - {{ name: alice, roles: [analyst, editor] }}
  - {{ name: dave, roles: [analyst] }}
  - {{ name: erin, roles: [] }}
roles:
  - name: analyst
    securableObjects:
      - {{ type: CATALOG, fullName: {cat}, privileges: [{{ name: USE_CATALOG, condition: ALLOW }}] }}
      - type: SCHEMA
        fullName: {cat}.sales
        privileges:
          - {{ name: USE_SCHEMA, condition: ALLOW }}
          - {{ name: SELECT_TABLE, condition: ALLOW }}
      - {{ type: TABLE, fullName: {cat}.sales.salaries, privileges: [{{ name: SELECT_TABLE, condition: DENY }}] }}
  - name: editor
    securableObjects:
      - {{ type: CATALOG, fullName: {cat}, privileges: [{{ name: USE_CATALOG, condition: ALLOW }}] }}
      - type: SCHEMA
        fullName: {cat}.sales
        privileges:
          - {{ name: USE_SCHEMA, condition: ALLOW }}
          - {{ name: MODIFY_TABLE, condition: ALLOW }}
"#
        )
    }

    /// A loadTable answer for `namespace.table`.
    fn load_table(&self, own: &str, namespace: &str, table: &str, delegation: Option<&str>) -> Value {
        let location = self.location(namespace, table);
        let config = (self.table_config)(own, delegation);
        let mut answer = json!({
            "metadata-location": format!("{location}/metadata/00001-u.metadata.json"),
            "metadata": {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
                         "location": location, "last-updated-ms": 1, "properties": {},
                         "schemas": [{"type": "struct", "schema-id": 0, "fields": []}], "current-schema-id": 0},
            "config": config,
        });
        let secrets: serde_json::Map<String, Value> = config
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| self.secret_keys.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if self.storage_credentials && !secrets.is_empty() {
            answer["storage-credentials"] = json!([{"prefix": location, "config": secrets}]);
        }
        answer
    }
}

/// The recording fake, playing `profile`, with the tokens its token endpoint issued.
pub struct Catalog {
    pub server: FakeUpstream,
    pub profile: Profile,
    pub token_fetches: Arc<AtomicUsize>,
}

/// The signature every sign request gets from a catalog's signer.
pub const SIGNED: &str = "AWS4-HMAC-SHA256 Credential=catalog, SignedHeaders=host;x-amz-content-sha256, Signature=0";

fn error(code: u16, kind: &str, message: &str) -> Reply {
    Reply::json(code, json!({"error": {"message": message, "type": kind, "code": code}}))
}

impl Catalog {
    pub async fn start(profile: Profile) -> Self {
        let own: Arc<OnceLock<String>> = Arc::default();
        let issued: Arc<Mutex<HashSet<String>>> = Arc::default();
        let token_fetches = Arc::new(AtomicUsize::new(0));
        let (url, tokens, fetches) = (own.clone(), issued, token_fetches.clone());
        let server = FakeUpstream::start(move |r: &Recorded| {
            let own = url.get().map_or("", String::as_str);
            if let Auth::OAuth2 { token_path, scope } = profile.auth
                && r.target == token_path
            {
                return token(r, scope, &tokens, &fetches);
            }
            let authorized = match profile.auth {
                Auth::Passthrough => r.header("authorization").is_some_and(|a| a.starts_with("Basic ")),
                Auth::OAuth2 { .. } => r.header("authorization").is_some_and(|a| tokens.lock().unwrap().contains(a)),
                Auth::SigV4 { service, region } => signature_verifies(r, service, region),
            };
            if !authorized {
                return match profile.auth {
                    Auth::SigV4 { .. } => error(
                        403,
                        "ForbiddenException",
                        "The request signature we calculated does not match the signature you provided",
                    ),
                    _ => error(401, "NotAuthorizedException", "not authenticated"),
                };
            }
            answer(&profile, own, r)
        })
        .await;
        let _ = own.set(server.url(""));
        Self { server, profile, token_fetches }
    }

    /// The requests that reached the catalog's own routes (not its token endpoint).
    pub fn catalog_requests(&self) -> Vec<Recorded> {
        let token_path = match self.profile.auth {
            Auth::OAuth2 { token_path, .. } => Some(token_path),
            _ => None,
        };
        self.server.requests().into_iter().filter(|r| Some(r.target.as_str()) != token_path).collect()
    }

    pub fn tokens_fetched(&self) -> usize {
        self.token_fetches.load(Ordering::SeqCst)
    }
}

/// The catalog's answer to an authenticated request.
fn answer(profile: &Profile, own: &str, r: &Recorded) -> Reply {
    let Some(rest) = r.target.strip_prefix(profile.base) else {
        return error(404, "NotFoundException", "no such route");
    };
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    if let Some(signer) = profile.signer
        && r.method == "POST"
        && r.target.starts_with(signer)
    {
        let uri = serde_json::from_slice::<Value>(&r.body).ok().and_then(|b| b["uri"].as_str().map(str::to_owned));
        return Reply::json(200, json!({"uri": uri, "headers": {"Authorization": [SIGNED]}}));
    }
    if path == "/v1/config" {
        let wanted = format!("warehouse={}", profile.warehouse);
        return if query.split('&').any(|q| q == wanted) {
            Reply::json(200, (profile.config)(own))
        } else {
            error(400, "BadRequestException", "a warehouse is required")
        };
    }
    let v1 = profile.v1();
    let Some(route) = path.strip_prefix(v1.as_str()) else {
        return error(404, "NotFoundException", "no such catalog");
    };
    let delegation = r.header("x-iceberg-access-delegation");
    match (r.method.as_str(), route) {
        ("GET", "/namespaces") => Reply::json(200, json!({"namespaces": [["sales"], ["hr"]]})),
        ("GET", "/namespaces/sales/tables") => Reply::json(
            200,
            json!({"identifiers": [{"namespace": ["sales"], "name": "orders"}, {"namespace": ["sales"], "name": "salaries"}]}),
        ),
        ("HEAD", _) => Reply::raw(204, ""),
        ("GET", table) => match table.strip_prefix("/namespaces/sales/tables/") {
            Some(name) if !name.contains('/') => Reply::json(200, profile.load_table(own, "sales", name, delegation)),
            _ => error(404, "NoSuchTableException", "no such table"),
        },
        _ => error(404, "NotFoundException", "no such route"),
    }
}

/// A token endpoint's answer: a new bearer token for the client that sent the secret and the
/// scope the catalog requires.
fn token(r: &Recorded, scope: &str, tokens: &Mutex<HashSet<String>>, fetches: &AtomicUsize) -> Reply {
    let form: Vec<(String, String)> = form_urlencoded::parse(&r.body).into_owned().collect();
    let has = |k: &str, v: &str| form.iter().any(|(fk, fv)| fk == k && fv == v);
    if !(has("grant_type", "client_credentials") && has("client_id", "icegate") && has("client_secret", SECRET)) {
        return Reply::json(401, json!({"error": "invalid_client"}));
    }
    if !has("scope", scope) {
        return Reply::json(400, json!({"error": "invalid_scope"}));
    }
    let n = fetches.fetch_add(1, Ordering::SeqCst) + 1;
    let access = format!("catalog-token-{n}");
    tokens.lock().unwrap().insert(format!("Bearer {access}"));
    Reply::json(
        200,
        json!({"access_token": access, "token_type": "bearer", "expires_in": 3600,
               "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}),
    )
}

/// Whether `r` carries a SigV4 signature for `service` in `region`, by the test's AWS keys,
/// over what arrived (method, path and query, the headers it says it signed, the body's hash):
/// the request is signed again and the two compared.
fn signature_verifies(r: &Recorded, service: &str, region: &str) -> bool {
    use sha2::Digest;
    let Some(auth) = r.header("authorization") else { return false };
    if !auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDTEST/")
        || !auth.contains(&format!("/{region}/{service}/aws4_request"))
    {
        return false;
    }
    let hash: String = sha2::Sha256::digest(&r.body).iter().map(|b| format!("{b:02x}")).collect();
    let (Some(date), Some(host)) = (r.header("x-amz-date"), r.header("host")) else { return false };
    if r.header("x-amz-content-sha256") != Some(hash.as_str()) {
        return false;
    }
    let Some(signed) = auth.split("SignedHeaders=").nth(1).and_then(|s| s.split(',').next()) else { return false };
    let uri: http::Uri = format!("http://{host}{}", r.target).parse().unwrap();
    let mut request = http::Request::builder().method(r.method.as_str()).uri(uri).body(()).unwrap();
    for name in
        signed.split(';').filter(|n| !["x-amz-date", "x-amz-security-token", "x-amz-content-sha256"].contains(n))
    {
        let Some(value) = r.headers.get(name) else { return false };
        request.headers_mut().insert(http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.clone());
    }
    let (mut parts, ()) = request.into_parts();
    let credentials =
        aws_credential_types::Credentials::new("AKIDTEST", "secret-key", Some("session-tok".into()), None, "t");
    let time = crate::upstream_sigv4::amz_date(date);
    icegate::serve::upstream::upstream_auth::sigv4::sign_parts(
        &mut parts,
        &r.body,
        &credentials,
        (service, region),
        time,
    )
    .is_ok_and(|()| parts.headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(auth))
}

/// The fakes refuse what the real catalogs would, so a served-path test that passes says icegate
/// authenticated as each catalog requires: no token or a wrong one is 401, an unsigned or
/// tampered request 403, a token request without the catalog's scope 400.
#[tokio::test]
async fn the_profiles_refuse_requests_the_real_catalogs_would_refuse() {
    use crate::fake_upstream::send;
    let polaris = Catalog::start(polaris::POLARIS).await;
    let load = "/api/catalog/v1/analytics/namespaces/sales/tables/orders";
    for auth in ["Bearer forged", "Basic YWxpY2U6cHc="] {
        assert_eq!(send(polaris.server.addr, "GET", load, &[("authorization", auth)], b"").await.status, 401);
    }
    let form = format!("grant_type=client_credentials&client_id=icegate&client_secret={SECRET}&scope=other");
    let token = send(polaris.server.addr, "POST", "/api/catalog/v1/oauth/tokens", &[], form.as_bytes()).await;
    assert_eq!(token.status, 400, "{}", token.text());
    assert_eq!(polaris.tokens_fetched(), 0);

    let glue = Catalog::start(glue::GLUE).await;
    let tables = "/iceberg/v1/catalogs/123456789012/namespaces/sales/tables";
    assert_eq!(send(glue.server.addr, "GET", tables, &[], b"").await.status, 403, "unsigned");
    // a request signed for `glue`, then its body changed on the way
    let upstream =
        crate::fake_upstream::FakeUpstream::start(|_: &Recorded| Reply::json(200, json!({"identifiers": []}))).await;
    let sigv4 = |c: &mut icegate::config::Config| {
        c.upstream.auth = icegate::config::UpstreamAuth::SigV4;
        c.upstream.sigv4 =
            Some(icegate::config::SigV4 { service: "glue".into(), region: "eu-west-1".into(), sts_endpoint: None });
    };
    let g = crate::fake_upstream::gate_then(
        &upstream.url("/iceberg"),
        &glue::GLUE.policy(),
        sigv4,
        crate::upstream_sigv4::chain(&crate::upstream_sigv4::KEYS),
    )
    .await;
    let target = "/v1/catalogs/123456789012/namespaces/sales/tables";
    let a = send(g.addr, "GET", target, &[("authorization", &crate::fake_upstream::basic("dave"))], b"").await;
    assert_eq!(a.status, 200, "{}", a.text());
    let mut signed = upstream.only();
    assert!(signature_verifies(&signed, "glue", "eu-west-1"));
    assert!(!signature_verifies(&signed, "s3tables", "eu-west-1"), "another service's signature");
    signed.body = bytes::Bytes::from_static(b"{}");
    assert!(!signature_verifies(&signed, "glue", "eu-west-1"), "a changed body");
}
