//! Prefixes of real catalogs (docs/design.md §2, issue 29): a declared prefix that holds `/` (AWS
//! Glue's and Unity Catalog's `catalogs/<id>`, S3 Tables' bucket ARN) on the served path, in a
//! getConfig answer, and in the policy loader. Each test is named after the rule it guards.

use crate::fake_upstream::{FakeUpstream, Gate, Reply, basic, gate, send};
use serde_json::json;

const GLUE: &str = "catalogs/123456789012";
const ARN_SENT: &str = "arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fanalytics";

const POLICY: &str = r#"
version: 1
metalake: lake
catalogs:
  - { prefix: "catalogs/123456789012", name: glue }
  - { prefix: "catalogs/123456789012/deep", name: deep }
  - { prefix: "arn:aws:s3tables:us-east-1:111122223333:bucket/analytics", name: tables }
  - { name: prod }
users:
  - { name: al, roles: [reader] }
roles:
  - name: reader
    securableObjects:
      - type: METALAKE
        fullName: lake
        privileges:
          - { name: USE_CATALOG, condition: ALLOW }
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: SELECT_TABLE, condition: ALLOW }
      - { type: TABLE, fullName: glue.db.secret, privileges: [{ name: SELECT_TABLE, condition: DENY }] }
      - { type: TABLE, fullName: tables.db.secret, privileges: [{ name: SELECT_TABLE, condition: DENY }] }
      - { type: CATALOG, fullName: deep, privileges: [{ name: USE_CATALOG, condition: DENY }] }
"#;

async fn setup(
    script: impl Fn(&crate::fake_upstream::Recorded) -> Reply + Send + Sync + 'static,
) -> (FakeUpstream, Gate) {
    let upstream = FakeUpstream::start(script).await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    (upstream, g)
}

async fn get(g: &Gate, target: &str) -> crate::fake_upstream::Answer {
    send(g.addr, "GET", target, &[("authorization", &basic("al"))], b"").await
}

fn targets(up: &FakeUpstream) -> Vec<String> {
    up.requests().into_iter().map(|r| r.target).collect()
}

#[tokio::test]
async fn a_two_segment_prefix_reaches_its_catalog_and_is_forwarded_as_sent() {
    let (up, g) = setup(Reply::empty_catalog).await;
    let orders = format!("/v1/{GLUE}/namespaces/db/tables/orders");
    assert_eq!(get(&g, &orders).await.status, 200);
    // the DENY on `glue.db.secret` holds
    get(&g, &format!("/v1/{GLUE}/namespaces/db/tables/secret")).await.assert_error(403, "ForbiddenException");
    // a list through it is filtered by `glue`'s grants
    let (up2, g2) = setup(|_| {
        Reply::json(
            200,
            json!({"identifiers": [{"namespace": ["db"], "name": "orders"}, {"namespace": ["db"], "name": "secret"}]}),
        )
    })
    .await;
    let a = get(&g2, &format!("/v1/{GLUE}/namespaces/db/tables")).await;
    assert_eq!(a.json(), json!({"identifiers": [{"namespace": ["db"], "name": "orders"}]}));
    assert_eq!(targets(&up2), [format!("/v1/{GLUE}/namespaces/db/tables")]);
    assert_eq!(targets(&up)[0], orders);
}

#[tokio::test]
async fn a_prefix_with_a_slash_sent_whole_with_2f_reaches_its_catalog_as_one_segment() {
    let (up, g) = setup(Reply::empty_catalog).await;
    let orders = format!("/v1/{ARN_SENT}/namespaces/db/tables/orders");
    assert_eq!(get(&g, &orders).await.status, 200);
    get(&g, &format!("/v1/{ARN_SENT}/namespaces/db/tables/secret")).await.assert_error(403, "ForbiddenException");
    // Glue's prefix sent whole is Glue's catalog too, forwarded in the form it came in
    get(&g, "/v1/catalogs%2F123456789012/namespaces/db/tables/secret").await.assert_error(403, "ForbiddenException");
    assert_eq!(get(&g, "/v1/catalogs%2f123456789012/namespaces/db/tables/orders").await.status, 200);
    assert_eq!(targets(&up)[0], orders);
    assert!(targets(&up).contains(&"/v1/catalogs%2F123456789012/namespaces/db/tables/orders".to_owned()));
}

#[tokio::test]
async fn the_longest_declared_prefix_wins() {
    let (up, g) = setup(Reply::empty_catalog).await;
    // `catalogs/123456789012/deep` is the catalog `deep`, whose USE_CATALOG al is denied; read as
    // `glue` it would be the namespace `deep`'s table
    get(&g, &format!("/v1/{GLUE}/deep/namespaces/db/tables/orders")).await.assert_error(403, "ForbiddenException");
    up.assert_untouched();
}

#[tokio::test]
async fn an_undeclared_prefix_with_2f_is_400_and_an_undeclared_two_segment_one_no_route() {
    let (up, g) = setup(Reply::empty_catalog).await;
    let other = ARN_SENT.replace("analytics", "other");
    get(&g, &format!("/v1/{other}/namespaces/db/tables/orders")).await.assert_error(400, "BadRequestException");
    get(&g, "/v1/catalogs/999999999999/namespaces/db/tables/orders").await.assert_error(403, "ForbiddenException");
    // after a declared prefix, `%2F` in a segment is refused as everywhere
    get(&g, &format!("/v1/{GLUE}/namespaces/d%2Fb/tables/orders")).await.assert_error(400, "BadRequestException");
    up.assert_untouched();
}

#[tokio::test]
async fn a_get_config_prefix_is_mapped_by_the_rule_of_the_path() {
    for (prefix, status) in [
        (GLUE, 200),
        (ARN_SENT, 200),
        ("arn:aws:s3tables:us-east-1:111122223333:bucket/analytics", 200),
        ("prod", 200),
        ("catalogs/999999999999", 502),
        ("arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fother", 502),
        ("elsewhere", 502),
    ] {
        let (_up, g) = setup(move |_| Reply::json(200, json!({"defaults": {}, "overrides": {"prefix": prefix}}))).await;
        let a = get(&g, "/v1/config").await;
        assert_eq!(a.status, status, "{prefix}: {}", a.text());
        if status == 200 {
            assert_eq!(a.json()["overrides"]["prefix"], prefix, "passed as the catalog gave it");
        } else {
            // the 502 does not quote what the upstream sent
            assert!(!a.text().contains("999999999999") && !a.text().contains("elsewhere"), "{}", a.text());
        }
    }
}

#[test]
fn check_refuses_a_prefix_no_path_can_carry() {
    for (prefix, says) in [
        ("catalogs//1", "empty segment"),
        ("/catalogs/1", "empty segment"),
        ("catalogs/../1", "dot segment"),
        ("arn%3Aaws%3As3tables", "write the prefix decoded"),
        ("a;b", "contains `;`"),
    ] {
        let policy = POLICY.replace("catalogs/123456789012/deep", prefix);
        let e = icegate::core::policy::load_str("p.yaml", &policy).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("p.yaml:6") && e.contains(says), "{prefix}: {e}");
    }
}
