//! One icegate, one policy, several upstreams (docs/design.md §7 "One gate, many catalogs"):
//! in-process fake catalogs that record what they receive, each serving its own catalogs.

use crate::fake_upstream::{FakeUpstream, Gate, Recorded, Reply, basic, send, serve_config};
use crate::support::TempDir;
use icegate::serve::pipeline::state::Shared;
use serde_json::json;
use std::sync::Arc;

/// `prod` (the default catalog) is served by `rest`, `analytics` by `glue`; `orphan` is in the
/// policy but no upstream serves it.
const POLICY: &str = r#"
version: 1
metalake: lake
default_catalog: prod
users:
  - { name: alice, roles: [reader] }
roles:
  - name: reader
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }, { name: USE_SCHEMA, condition: ALLOW }, { name: SELECT_TABLE, condition: ALLOW }] }
      - { type: CATALOG, fullName: analytics, privileges: [{ name: USE_CATALOG, condition: ALLOW }, { name: USE_SCHEMA, condition: ALLOW }, { name: SELECT_TABLE, condition: ALLOW }] }
      - { type: CATALOG, fullName: orphan, privileges: [{ name: USE_CATALOG, condition: ALLOW }, { name: USE_SCHEMA, condition: ALLOW }, { name: SELECT_TABLE, condition: ALLOW }] }
"#;

/// A catalog that answers getConfig with `prefix` and every other request `{}` 200, tables
/// existing.
fn catalog(prefix: &'static str) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        if r.target.contains("/v1/config") {
            Reply::json(200, json!({"defaults": {}, "overrides": {"prefix": prefix}}))
        } else if r.target.ends_with("/tables") {
            Reply::json(200, json!({"identifiers": [{"namespace": ["db"], "name": "t"}]}))
        } else {
            Reply::ok()
        }
    }
}

struct Two {
    rest: FakeUpstream,
    glue: FakeUpstream,
    gate: Gate,
    shared: Arc<Shared>,
    dir: TempDir,
}

/// The `[[upstreams]]` of `rest` (at `rest_url`) and `glue` (at `glue_url`), plus `extra` TOML.
fn config_text(rest_url: &str, glue_url: &str, rest_extra: &str, glue_extra: &str) -> String {
    format!(
        r#"
[[upstreams]]
name = "rest"
url = "{rest_url}"
catalogs = ["prod"]
warehouses = ["lake"]
{rest_extra}

[[upstreams]]
name = "glue"
url = "{glue_url}"
catalogs = ["analytics"]
warehouses = ["123456789012"]
{glue_extra}
"#
    )
}

async fn start_text(text: &str, rest: FakeUpstream, glue: FakeUpstream, audit: bool) -> Two {
    let dir = TempDir::new("many-upstreams");
    let file = dir.write("icegate.toml", text);
    let overrides = icegate::config::Overrides { policy: Some("unused.yaml".into()), ..Default::default() };
    let mut config = icegate::config::Config::load(Some(&file), overrides).unwrap();
    config.owners.store = Some(icegate::ops::owners::StoreKind::Off);
    config.audit.enabled = audit;
    config.audit.file = Some(dir.path().join("audit.jsonl"));
    let (gate, shared) = serve_config(config, POLICY, |_| {}, icegate::core::clock::Clock::real()).await;
    Two { rest, glue, gate, shared, dir }
}

/// Two fake catalogs, `rest` the default upstream.
async fn two() -> Two {
    let (rest, glue) = (FakeUpstream::start(catalog("prod")).await, FakeUpstream::start(catalog("analytics")).await);
    let text = config_text(&rest.url(""), &glue.url("/iceberg"), "default = true", "");
    start_text(&text, rest, glue, true).await
}

fn targets(upstream: &FakeUpstream) -> Vec<String> {
    upstream.requests().iter().map(|r| format!("{} {}", r.method, r.target)).collect()
}

async fn get(g: &Gate, target: &str) -> crate::fake_upstream::Answer {
    send(g.addr, "GET", target, &[("authorization", &basic("alice"))], b"").await
}

#[tokio::test]
async fn each_catalogs_requests_reach_only_its_upstream() {
    let t = two().await;
    for target in [
        "/v1/prod/namespaces/db/tables/t",
        "/v1/namespaces/db/tables/t",
        "/v1/analytics/namespaces/db/tables/t",
        "/v1/analytics/namespaces/db/tables",
        "/v1/analytics/namespaces/db/tables/t/credentials",
    ] {
        let a = get(&t.gate, target).await;
        assert_eq!(a.status, 200, "{target}: {}", a.text());
    }
    assert_eq!(targets(&t.rest), ["GET /v1/prod/namespaces/db/tables/t", "GET /v1/namespaces/db/tables/t"]);
    assert_eq!(
        targets(&t.glue),
        [
            "GET /iceberg/v1/analytics/namespaces/db/tables/t",
            "GET /iceberg/v1/analytics/namespaces/db/tables",
            "GET /iceberg/v1/analytics/namespaces/db/tables/t/credentials",
        ],
        "the glue upstream's own base path, and only its catalog"
    );
}

#[tokio::test]
async fn a_catalog_no_upstream_serves_is_403_and_nothing_is_forwarded() {
    let t = two().await;
    for (target, prefix) in
        [("/v1/orphan/namespaces/db/tables/t", "orphan"), ("/v1/elsewhere/namespaces/db", "elsewhere")]
    {
        let a = get(&t.gate, target).await;
        let message = a.assert_error(403, "ForbiddenException");
        assert!(message.contains(&format!("catalog prefix `{prefix}` is not served")), "{message}");
    }
    t.rest.assert_untouched();
    t.glue.assert_untouched();
}

#[tokio::test]
async fn get_config_goes_to_the_upstream_of_its_warehouse_or_the_default() {
    let t = two().await;
    let a = get(&t.gate, "/v1/config?warehouse=123456789012").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["overrides"]["prefix"], "analytics");
    assert_eq!(get(&t.gate, "/v1/config?warehouse=lake").await.json()["overrides"]["prefix"], "prod");
    assert_eq!(get(&t.gate, "/v1/config").await.json()["overrides"]["prefix"], "prod", "no warehouse: the default");
    assert_eq!(targets(&t.glue), ["GET /iceberg/v1/config?warehouse=123456789012"]);
    assert_eq!(targets(&t.rest), ["GET /v1/config?warehouse=lake", "GET /v1/config"]);
    let a = get(&t.gate, "/v1/config?warehouse=nowhere").await;
    assert!(
        a.assert_error(400, "BadRequestException").contains("no upstream answers getConfig for warehouse `nowhere`")
    );
    assert_eq!(t.rest.requests().len() + t.glue.requests().len(), 3, "the unknown warehouse went nowhere");
}

#[tokio::test]
async fn without_a_default_upstream_get_config_needs_a_warehouse_and_get_token_is_off() {
    let (rest, glue) = (FakeUpstream::start(catalog("prod")).await, FakeUpstream::start(catalog("analytics")).await);
    let text = config_text(&rest.url(""), &glue.url(""), "", "");
    let t = start_text(&text, rest, glue, false).await;
    let a = get(&t.gate, "/v1/config").await;
    assert!(a.assert_error(400, "BadRequestException").contains("needs a `warehouse`"));
    let form = [("content-type", "application/x-www-form-urlencoded")];
    let a = send(t.gate.addr, "POST", "/v1/oauth/tokens", &form, b"grant_type=client_credentials").await;
    assert!(a.assert_error(403, "ForbiddenException").contains("getToken is not available"));
    t.rest.assert_untouched();
    t.glue.assert_untouched();
}

#[tokio::test]
async fn get_token_goes_to_the_default_upstream() {
    let t = two().await;
    let form = [("content-type", "application/x-www-form-urlencoded")];
    let a = send(t.gate.addr, "POST", "/v1/oauth/tokens", &form, b"grant_type=client_credentials").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(targets(&t.rest), ["POST /v1/oauth/tokens"]);
    t.glue.assert_untouched();
}

#[tokio::test]
async fn a_config_prefix_of_another_upstreams_catalog_is_a_502() {
    // glue answers with the prefix of rest's catalog: its clients would be sent to rest
    let (rest, glue) = (FakeUpstream::start(catalog("prod")).await, FakeUpstream::start(catalog("prod")).await);
    let text = config_text(&rest.url(""), &glue.url(""), "default = true", "");
    let t = start_text(&text, rest, glue, false).await;
    let a = get(&t.gate, "/v1/config?warehouse=123456789012").await;
    a.assert_error(502, "BadGatewayException");
    assert_eq!(get(&t.gate, "/v1/config?warehouse=lake").await.status, 200, "rest may name its own catalog");
}

/// An answer without a `prefix` is relayed whichever upstream gave it (docs/design.md §7): a
/// client of a catalog that never answers with one (Iceberg's REST server) sets its own `prefix`,
/// which icegate cannot see, and each of its requests is routed by its own path's catalog.
#[tokio::test]
async fn a_config_answer_without_a_prefix_is_relayed_and_requests_go_by_their_own_prefix() {
    let no_prefix = |r: &Recorded| {
        if r.target.contains("/v1/config") {
            Reply::json(200, json!({"defaults": {"warehouse": "s3://glue"}, "overrides": {}}))
        } else {
            Reply::ok()
        }
    };
    let (rest, glue) = (FakeUpstream::start(catalog("prod")).await, FakeUpstream::start(no_prefix).await);
    let text = config_text(&rest.url(""), &glue.url(""), "default = true", "");
    let t = start_text(&text, rest, glue, false).await;
    let a = get(&t.gate, "/v1/config?warehouse=123456789012").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["defaults"]["warehouse"], "s3://glue");
    assert_eq!(get(&t.gate, "/v1/analytics/namespaces/db").await.status, 200, "the client's own prefix");
    assert_eq!(targets(&t.glue), ["GET /v1/config?warehouse=123456789012", "GET /v1/analytics/namespaces/db"]);
    // without a prefix of its own, a client's requests are the default catalog's: rest's
    assert_eq!(get(&t.gate, "/v1/namespaces/db").await.status, 200);
    assert_eq!(targets(&t.rest), ["GET /v1/namespaces/db"]);
}

#[tokio::test]
async fn one_upstream_down_leaves_the_other_serving() {
    let rest = FakeUpstream::start(catalog("prod")).await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let glue = FakeUpstream::start(catalog("analytics")).await;
    let text = config_text(&rest.url(""), &format!("http://{closed}"), "default = true", "");
    let t = start_text(&text, rest, glue, false).await;
    let down = get(&t.gate, "/v1/analytics/namespaces/db/tables/t").await;
    down.assert_error(502, "BadGatewayException");
    let up = get(&t.gate, "/v1/prod/namespaces/db/tables/t").await;
    assert_eq!(up.status, 200, "{}", up.text());
    icegate::serve::listen::admin::probe_all(&t.shared).await;
    let (ready, body) = icegate::serve::listen::admin::readiness(&t.shared);
    assert!(ready, "one upstream answering keeps icegate ready: {body}");
    assert_eq!(body["upstream"]["reachable"], false, "not every upstream answered: {body}");
    assert_eq!(body["upstreams"], json!({"rest": {"reachable": true}, "glue": {"reachable": false}}));
    let metrics = t.shared.metrics.render();
    for line in ["icegate_upstream_reachable{upstream=\"rest\"} 1", "icegate_upstream_reachable{upstream=\"glue\"} 0"] {
        assert!(metrics.contains(line), "{line} not in\n{metrics}");
    }
}

#[tokio::test]
async fn no_upstream_answering_is_not_ready() {
    let closed = |_: ()| {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let (rest, glue) = (FakeUpstream::start(catalog("prod")).await, FakeUpstream::start(catalog("analytics")).await);
    let text = config_text(&closed(()), &closed(()), "", "");
    let t = start_text(&text, rest, glue, false).await;
    icegate::serve::listen::admin::probe_all(&t.shared).await;
    let (ready, body) = icegate::serve::listen::admin::readiness(&t.shared);
    assert!(!ready, "{body}");
}

#[tokio::test]
async fn each_upstream_gets_its_own_credential_and_never_anothers() {
    let idp = FakeUpstream::start(|_: &Recorded| {
        Reply::json(200, json!({"access_token": "glue-token", "token_type": "bearer", "expires_in": 3600}))
    })
    .await;
    let dir = TempDir::new("many-upstreams-secret");
    let secret = dir.write("secret", "s3cr3t\n");
    let (rest, glue) = (FakeUpstream::start(catalog("prod")).await, FakeUpstream::start(catalog("analytics")).await);
    let lake = FakeUpstream::start(catalog("raw")).await;
    let text = format!(
        "{}\n[[upstreams]]\nname = \"lake\"\nurl = \"{}\"\ncatalogs = [\"orphan\"]\n",
        config_text(
            &rest.url(""),
            &glue.url(""),
            "default = true\nauth = \"service\"\nservice_authorization = \"Bearer rest-static\"",
            &format!(
                "auth = \"oauth2\"\n[upstreams.oauth2]\ntoken_endpoint = \"{}\"\nclient_id = \"icegate\"\nclient_secret_file = \"{}\"",
                idp.url("/token"),
                secret.display()
            ),
        ),
        lake.url("")
    );
    let t = start_text(&text, rest, glue, false).await;
    for target in
        ["/v1/prod/namespaces/db/tables/t", "/v1/analytics/namespaces/db/tables/t", "/v1/orphan/namespaces/db"]
    {
        assert_eq!(get(&t.gate, target).await.status, 200, "{target}");
    }
    let caller = basic("alice");
    assert_eq!(t.rest.only().header("authorization"), Some("Bearer rest-static"));
    assert_eq!(t.glue.only().header("authorization"), Some("Bearer glue-token"));
    assert_eq!(lake.only().header("authorization"), Some(caller.as_str()), "passthrough: the caller's own");
    assert_eq!(idp.requests().len(), 1, "one token, for glue only");
    let (_, body) = icegate::serve::listen::admin::readiness(&t.shared);
    assert_eq!(body["upstreams"]["glue"]["auth"]["mode"], "oauth2", "{body}");
    assert!(body["upstreams"]["rest"].get("auth").is_none(), "{body}");
    let metrics = t.shared.metrics.render();
    assert!(metrics.contains("icegate_upstream_auth_held{upstream=\"glue\"} 1"), "{metrics}");
    assert!(!metrics.contains("upstream_auth_held{upstream=\"rest\"}"), "{metrics}");
}

#[tokio::test]
async fn audit_lines_and_metrics_name_the_upstream() {
    let t = two().await;
    for target in
        ["/v1/prod/namespaces/db/tables/t", "/v1/analytics/namespaces/db/tables/t", "/v1/orphan/namespaces/db"]
    {
        get(&t.gate, target).await;
    }
    get(&t.gate, "/v1/config?warehouse=123456789012").await;
    let path = t.dir.path().join("audit.jsonl");
    let mut lines = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while lines.len() < 4 {
        assert!(std::time::Instant::now() < deadline, "{lines:?}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        lines = text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()).collect();
    }
    let named: Vec<(&str, &serde_json::Value)> =
        lines.iter().map(|l| (l["operation"].as_str().unwrap(), &l["upstream"])).collect();
    assert_eq!(
        named,
        [
            ("loadTable", &json!("rest")),
            ("loadTable", &json!("glue")),
            ("loadNamespaceMetadata", &json!(null)),
            ("getConfig", &json!("glue")),
        ]
    );
    let metrics = t.shared.metrics.render();
    for line in [
        "icegate_upstream_duration_seconds_count{upstream=\"rest\"} 1",
        "icegate_upstream_duration_seconds_count{upstream=\"glue\"} 2",
    ] {
        assert!(metrics.contains(line), "{line} not in\n{metrics}");
    }
}

#[tokio::test]
async fn the_single_upstream_is_named_default_in_readyz_audit_and_metrics() {
    let upstream = FakeUpstream::start(catalog("prod")).await;
    let (g, shared) =
        crate::fake_upstream::gate_clocked(&upstream.url(""), POLICY, |_| {}, icegate::core::clock::Clock::real())
            .await;
    assert_eq!(get(&g, "/v1/orphan/namespaces/db").await.status, 200, "the single upstream serves every catalog");
    icegate::serve::listen::admin::probe_all(&shared).await;
    let (ready, body) = icegate::serve::listen::admin::readiness(&shared);
    assert!(ready, "{body}");
    assert_eq!(body["upstream"], json!({"reachable": true}));
    assert_eq!(body["upstreams"], json!({"default": {"reachable": true}}));
    let metrics = shared.metrics.render();
    assert!(metrics.contains("icegate_upstream_duration_seconds_count{upstream=\"default\"} 1"), "{metrics}");
}

#[test]
fn check_with_a_config_warns_about_catalogs_no_upstream_serves() {
    use crate::cli::{icegate, stderr};
    let dir = TempDir::new("many-upstreams-check");
    let policy = dir.write("p.yaml", POLICY);
    let text = config_text("http://127.0.0.1:1", "http://127.0.0.1:2", "", "")
        .replace("catalogs = [\"analytics\"]", "catalogs = [\"analytics\", \"ghost\"]");
    let config = dir.write("icegate.toml", &text);
    let out = icegate(&["check", "--config", config.to_str().unwrap(), "--policy", policy.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("warning: catalog `orphan` is served by no upstream"), "{err}");
    assert!(err.contains("warning: upstream `glue` serves catalog `ghost`, which the policy does not name"), "{err}");
    assert!(!err.contains("`prod` is served by no") && !err.contains("`analytics` is served by no"), "{err}");
    // without --config, nothing is said of upstreams
    let out = icegate(&["check", "--policy", policy.to_str().unwrap()]);
    assert!(!stderr(&out).contains("served by no upstream"), "{}", stderr(&out));
    // a config error names the key and the upstream
    let both = dir.write("both.toml", &format!("[upstream]\nurl = \"http://x:1\"\n{text}"));
    let out = icegate(&["check", "--config", both.to_str().unwrap(), "--policy", policy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("invalid `upstreams`: set either `[upstream]`"), "{}", stderr(&out));
}

#[test]
fn check_with_a_config_warns_when_the_default_upstream_does_not_serve_the_default_catalog() {
    use crate::cli::{icegate, stderr};
    let dir = TempDir::new("many-upstreams-check-default");
    let policy = dir.write("p.yaml", POLICY);
    let check = |rest_extra: &str, glue_extra: &str| {
        let text = config_text("http://127.0.0.1:1", "http://127.0.0.1:2", rest_extra, glue_extra);
        let config = dir.write("icegate.toml", &text);
        let out = icegate(&["check", "--config", config.to_str().unwrap(), "--policy", policy.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    // glue (analytics) answers getConfig without a warehouse, but unprefixed requests go to prod's rest
    let err = check("", "default = true");
    assert!(err.contains("warning: the default upstream `glue` does not serve the default catalog `prod`"), "{err}");
    assert!(!check("default = true", "").contains("does not serve the default catalog"));
    assert!(!check("", "").contains("does not serve the default catalog"), "no default upstream: nothing to say");
}

/// Each fetched credential's metrics are its upstream's series (docs/operations.md): a failing
/// token endpoint, a held token and a 401 retry are counted on the upstream they happened to.
#[tokio::test]
async fn upstream_auth_metrics_carry_each_upstreams_label() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let failing = FakeUpstream::start(|_: &Recorded| Reply::json(500, json!({"error": "down"}))).await;
    let issued = std::sync::atomic::AtomicUsize::new(0);
    let idp = FakeUpstream::start(move |_: &Recorded| {
        let n = issued.fetch_add(1, Ordering::SeqCst) + 1;
        Reply::json(200, json!({"access_token": format!("glue-{n}"), "token_type": "bearer", "expires_in": 3600}))
    })
    .await;
    // glue refuses its first token once, as an upstream that revoked it would
    let refused = AtomicBool::new(false);
    let glue = FakeUpstream::start(move |r: &Recorded| {
        if r.header("authorization") == Some("Bearer glue-1") && !refused.swap(true, Ordering::SeqCst) {
            Reply::json(401, json!({"error": {"message": "expired", "type": "NotAuthorizedException", "code": 401}}))
        } else {
            catalog("analytics")(r)
        }
    })
    .await;
    let rest = FakeUpstream::start(catalog("prod")).await;
    let dir = TempDir::new("many-upstreams-auth-metrics");
    let secret = dir.write("secret", "s3cr3t\n");
    let oauth2 = |endpoint: String| {
        format!(
            "auth = \"oauth2\"\n[upstreams.oauth2]\ntoken_endpoint = \"{endpoint}\"\nclient_id = \"icegate\"\nclient_secret_file = \"{}\"",
            secret.display()
        )
    };
    let text = config_text(&rest.url(""), &glue.url(""), &oauth2(failing.url("/token")), &oauth2(idp.url("/token")));
    let t = start_text(&text, rest, glue, false).await;
    let a = get(&t.gate, "/v1/prod/namespaces/db/tables/t").await;
    assert!(a.status >= 500, "rest has no token: {}", a.text());
    t.rest.assert_untouched();
    let a = get(&t.gate, "/v1/analytics/namespaces/db/tables/t").await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(idp.requests().len(), 2, "glue's token, then a fresh one after the 401");
    let metrics = t.shared.metrics.render();
    for line in [
        "icegate_upstream_auth_refreshes_total{upstream=\"rest\",result=\"failure\"} 1",
        "icegate_upstream_auth_refreshes_total{upstream=\"glue\",result=\"ok\"} 2",
        "icegate_upstream_auth_held{upstream=\"rest\"} 0",
        "icegate_upstream_auth_held{upstream=\"glue\"} 1",
        "icegate_upstream_auth_retries_total{upstream=\"rest\"} 0",
        "icegate_upstream_auth_retries_total{upstream=\"glue\"} 1",
        "icegate_upstream_auth_expiry_timestamp_seconds{upstream=\"rest\"} 0",
    ] {
        assert!(metrics.contains(line), "{line} not in\n{metrics}");
    }
    assert!(!metrics.contains("upstream_auth_refreshes_total{upstream=\"glue\",result=\"failure\"}"), "{metrics}");
    assert!(!metrics.contains("upstream=\"default\""), "no series of an upstream that does not exist: {metrics}");
}
