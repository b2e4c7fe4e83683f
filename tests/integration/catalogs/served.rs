//! The served-path checks every catalog profile runs: icegate in front of the profile, with the
//! upstream authentication the catalog takes; getConfig relayed with its prefix and without its
//! secrets or signer; a denial that forwards nothing; filtered lists; vended credentials kept for
//! a caller at full scope and removed for a narrowed one (docs/design.md §8); and, where the
//! catalog has a signer, a sign request forwarded to it and one outside the table refused.

use super::{Auth, Catalog, Profile, SECRET, SIGNED};
use crate::fake_upstream::{Answer, Gate, basic, gate_then, send};
use crate::support::TempDir;
use serde_json::{Value, json};

/// icegate in front of a profile's catalog.
pub struct Fixture {
    pub catalog: Catalog,
    pub gate: Gate,
    _dir: TempDir,
}

/// The S3 URL of an object of `namespace.table` in a profile's bucket (virtual-hosted on AWS).
pub fn object(p: &Profile, namespace: &str, table: &str) -> String {
    let location = p.location(namespace, table);
    let (bucket, key) = location.trim_start_matches("s3://").split_once('/').unwrap();
    format!("https://{bucket}.s3.us-east-1.amazonaws.com/{key}/data/00000-0-f.parquet")
}

impl Fixture {
    pub async fn start(profile: Profile) -> Self {
        let catalog = Catalog::start(profile).await;
        let dir = TempDir::new("catalog-profile");
        let secret = dir.write("client-secret", SECRET);
        let token_endpoint = match profile.auth {
            Auth::OAuth2 { token_path, .. } => Some(catalog.server.url(token_path)),
            _ => None,
        };
        let tweak = move |c: &mut icegate::config::Config| match profile.auth {
            Auth::Passthrough => {}
            Auth::OAuth2 { scope, .. } => {
                c.upstream.auth = icegate::config::UpstreamAuth::OAuth2;
                c.upstream.oauth2 = Some(icegate::config::OAuth2 {
                    token_endpoint: token_endpoint.unwrap_or_default(),
                    client_id: "icegate".into(),
                    client_secret_file: Some(secret),
                    scope: Some(scope.into()),
                    ..icegate::config::OAuth2::default()
                });
            }
            Auth::SigV4 { service, region } => {
                c.upstream.auth = icegate::config::UpstreamAuth::SigV4;
                c.upstream.sigv4 =
                    Some(icegate::config::SigV4 { service: service.into(), region: region.into(), sts_endpoint: None });
            }
        };
        let prepare = |shared: &icegate::serve::pipeline::state::Shared| {
            if matches!(profile.auth, Auth::SigV4 { .. }) {
                crate::upstream_sigv4::chain(&crate::upstream_sigv4::KEYS)(shared);
            }
        };
        let gate = gate_then(&catalog.server.url(profile.base), &profile.policy(), tweak, prepare).await;
        Self { catalog, gate, _dir: dir }
    }

    /// `GET target` as `user`, with `headers` besides.
    pub async fn get(&self, user: &str, target: &str, headers: &[(&str, &str)]) -> Answer {
        let auth = basic(user);
        let mut all = vec![("authorization", auth.as_str())];
        all.extend_from_slice(headers);
        send(self.gate.addr, "GET", target, &all, b"").await
    }

    pub async fn sign(&self, user: &str, uri: &str) -> Answer {
        let body = json!({"region": "us-east-1", "method": "GET", "uri": uri, "headers": {"User-Agent": ["engine"]}});
        let target = format!("{}/namespaces/sales/tables/orders/sign", self.catalog.profile.v1());
        send(self.gate.addr, "POST", &target, &[("authorization", &basic(user))], body.to_string().as_bytes()).await
    }

    /// The catalog's requests since `before` of them.
    fn since(&self, before: usize) -> Vec<crate::fake_upstream::Recorded> {
        self.catalog.catalog_requests().into_iter().skip(before).collect()
    }

    /// Every request the catalog received carried the authentication it takes (the fake
    /// answers anything else 401 or 403, so this also says none was refused for it).
    fn assert_authenticated_as_the_catalog_requires(&self) {
        for r in self.catalog.catalog_requests() {
            let auth = r.header("authorization").unwrap_or_default().to_owned();
            match self.catalog.profile.auth {
                Auth::Passthrough => assert!(auth.starts_with("Basic "), "{r:?}"),
                Auth::OAuth2 { .. } => assert!(auth.starts_with("Bearer catalog-token-"), "{r:?}"),
                Auth::SigV4 { service, .. } => {
                    assert!(
                        auth.starts_with("AWS4-HMAC-SHA256") && auth.contains(&format!("/{service}/aws4_request")),
                        "{r:?}"
                    );
                }
            }
        }
    }
}

/// The served-path checks, in order; returns the fixture for a catalog's own further checks.
pub async fn served_path(p: Profile) -> Fixture {
    let f = Fixture::start(p).await;
    let v1 = p.v1();

    // getConfig: relayed, its prefix as the catalog gave it, no signer address, no secret
    let config = f.get("dave", &format!("/v1/config?warehouse={}", p.warehouse), &[]).await;
    assert_eq!(config.status, 200, "{}", config.text());
    let sent = (p.config)(&f.catalog.server.url(""));
    let prefix = |v: &Value| v["overrides"].get("prefix").or_else(|| v["defaults"].get("prefix")).cloned();
    assert_eq!(prefix(&config.json()), prefix(&sent), "{}", config.text());
    let own = f.catalog.server.url("");
    assert!(
        !config.text().contains(&own),
        "the catalog's address would send clients around icegate: {}",
        config.text()
    );
    for key in ["s3.signer.uri", "signer.uri", "token", "s3.secret-access-key"] {
        assert!(!config.text().contains(&format!("\"{key}\"")), "{key} in {}", config.text());
    }
    assert_eq!(f.catalog.catalog_requests()[0].target, format!("{}/v1/config?warehouse={}", p.base, p.warehouse));

    // a denial forwards nothing
    let before = f.catalog.catalog_requests().len();
    f.get("dave", &format!("{v1}/namespaces/sales/tables/salaries"), &[]).await.assert_error(403, "ForbiddenException");
    f.get("erin", &format!("{v1}/namespaces"), &[]).await.assert_error(403, "ForbiddenException");
    assert!(f.since(before).is_empty(), "forwarded: {:#?}", f.since(before));

    // lists are filtered by the caller's grants
    let tables = f.get("dave", &format!("{v1}/namespaces/sales/tables"), &[]).await;
    assert_eq!(tables.json()["identifiers"], json!([{"namespace": ["sales"], "name": "orders"}]), "{}", tables.text());
    let namespaces = f.get("dave", &format!("{v1}/namespaces"), &[]).await;
    assert_eq!(namespaces.json()["namespaces"], json!([["sales"]]), "{}", namespaces.text());

    credentials(&f).await;
    if p.signer.is_some() {
        signing(&f).await;
    }
    f.assert_authenticated_as_the_catalog_requires();
    f
}

/// Vended credentials: kept for `alice` at her full scope (WRITE), removed when she narrows to
/// `analyst` (READ), with `X-Iceberg-Access-Delegation` not forwarded for her then.
async fn credentials(f: &Fixture) {
    let p = f.catalog.profile;
    let orders = format!("{}/namespaces/sales/tables/orders", p.v1());
    let vended = [("x-iceberg-access-delegation", "vended-credentials")];
    let full = f.get("alice", &orders, &vended).await;
    assert_eq!(full.status, 200, "{}", full.text());
    assert_eq!(full.headers.get("cache-control").map(|v| v.to_str().unwrap()), Some("no-store"));
    let full = full.json();
    for key in p.secret_keys {
        assert!(full["config"].get(*key).is_some(), "{key} kept at full scope: {full}");
    }
    if p.storage_credentials {
        assert_eq!(full["storage-credentials"][0]["prefix"], json!(p.location("sales", "orders")), "{full}");
    }

    let before = f.catalog.catalog_requests().len();
    let narrowed = [vended[0], ("x-gravitino-active-roles", "analyst")];
    let answer = f.get("alice", &orders, &narrowed).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    let narrow = answer.json();
    for key in p.secret_keys {
        assert!(narrow["config"].get(*key).is_none(), "{key} left to a narrowed caller: {narrow}");
    }
    assert!(narrow["storage-credentials"].as_array().is_none_or(Vec::is_empty), "{narrow}");
    if narrow["config"].get("client.region").is_some() || full["config"].get("client.region").is_some() {
        assert_eq!(narrow["config"]["client.region"], full["config"]["client.region"], "non-secret keys stay");
    }
    // a refresh endpoint names icegate's loadCredentials route (relative to the client's `uri`,
    // which is icegate), whose check applies again; with the credentials it goes too
    if let Some(refresh) = full["config"].get("client.refresh-credentials-endpoint") {
        assert_eq!(refresh, &json!(format!("{}/credentials", orders.trim_start_matches('/'))), "through icegate");
    }
    assert!(narrow["config"].get("client.refresh-credentials-endpoint").is_none(), "{narrow}");
    let forwarded = f.since(before);
    assert_eq!(forwarded.len(), 1, "{forwarded:#?}");
    assert_eq!(forwarded[0].header("x-iceberg-access-delegation"), None, "not asked for the narrowed caller");
    assert_eq!(forwarded[0].header("x-gravitino-active-roles"), Some("analyst"));
}

/// A sign request for the table's object reaches the catalog's own signer with the caller's
/// credential; one for another table's object is 403 and goes nowhere; the table's answer points
/// clients at icegate's signer, never the catalog's.
async fn signing(f: &Fixture) {
    let p = f.catalog.profile;
    let signer = p.signer.unwrap();
    let orders = format!("{}/namespaces/sales/tables/orders", p.v1());
    let table = f.get("alice", &orders, &[]).await.json();
    let own = f.catalog.server.url("");
    assert!(!table.to_string().contains(&own), "the catalog's address reached the client: {table}");
    let ours = format!("{}/sign", orders.trim_start_matches('/'));
    assert_eq!(table["config"]["s3.signer.endpoint"], json!(ours), "{table}");

    let a = f.sign("alice", &object(&p, "sales", "orders")).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["headers"]["Authorization"][0], SIGNED);
    let signs: Vec<_> = f.catalog.catalog_requests().into_iter().filter(|r| r.method == "POST").collect();
    assert_eq!(signs.len(), 1, "{signs:#?}");
    assert!(signs[0].target.starts_with(signer), "sent to {}, not the catalog's signer {signer}", signs[0].target);
    if let Auth::Passthrough = p.auth {
        assert_eq!(signs[0].header("authorization"), Some(basic("alice").as_str()));
    }

    f.sign("alice", &object(&p, "hr", "payroll")).await.assert_error(403, "ForbiddenException");
    f.sign("dave", &object(&p, "sales", "salaries")).await.assert_error(403, "ForbiddenException");
    let after = f.catalog.catalog_requests().into_iter().filter(|r| r.method == "POST").count();
    assert_eq!(after, 1, "a refused sign request reached the signer");
}
