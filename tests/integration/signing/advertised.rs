//! A signer the upstream advertises in getConfig only (docs/design.md §8): Lakekeeper before 0.9
//! names it there, not in the table's config, and does not serve the table-scoped route.

use super::*;

/// A catalog that behaves as Lakekeeper 0.7 does: its signer is advertised in getConfig only
/// (`s3.signer.uri` in the overrides, the default endpoint `v1/aws/s3/sign`), getConfig needs
/// the `warehouse`, the table's config names no signer, and the table-scoped sign route is an
/// empty-bodied 404.
async fn lakekeeper_07() -> FakeUpstream {
    let own: Arc<OnceLock<String>> = Arc::default();
    let url = Arc::clone(&own);
    let upstream = FakeUpstream::start(move |r: &Recorded| match (r.method.as_str(), r.target.as_str()) {
        ("GET", "/v1/config?warehouse=demo") => Reply::json(
            200,
            json!({"defaults": {}, "overrides": {"prefix": "prod", "s3.signer.uri": format!("{}/catalog/", url.get().unwrap())}}),
        ),
        ("GET", TABLE) => Reply::raw(200, &load_table(&json!({"s3.remote-signing-enabled": "true"}))),
        ("POST", "/catalog/v1/aws/s3/sign") => {
            Reply::json(200, json!({"uri": OBJECT, "headers": {"Authorization": [SIGNED]}}))
        }
        ("GET", _) if r.target.starts_with("/v1/config") => {
            Reply::json(400, json!({"error": {"message": "warehouse is required", "type": "BadRequestException", "code": 400}}))
        }
        _ => Reply::raw(404, ""),
    })
    .await;
    own.set(upstream.url("")).unwrap();
    upstream
}

#[tokio::test]
async fn finding_a_signer_advertised_in_get_config_only_is_followed() {
    for cache in [30, 0] {
        let upstream = lakekeeper_07().await;
        let g = gate(&upstream.url(""), POLICY, |c| c.credentials.location_cache_seconds = cache).await;
        let auth = basic("alice");
        let config = send(g.addr, "GET", "/v1/config?warehouse=demo", &[("authorization", &auth)], b"").await;
        assert_eq!(config.status, 200, "{}", config.text());
        assert!(!config.text().contains("catalog/"), "getConfig never names the upstream's signer: {}", config.text());
        let a = sign(&g, &sign_body("GET", OBJECT)).await;
        assert_eq!(a.status, 200, "cache {cache}: {}", a.text());
        assert_eq!(a.json()["headers"]["Authorization"][0], SIGNED);
        let targets: Vec<String> = upstream.requests().into_iter().map(|r| r.target).collect();
        // remembered from the relayed getConfig, or (not cached) asked again with its query
        let expected: &[&str] = match cache {
            0 => &["/v1/config?warehouse=demo", TABLE, "/v1/config?warehouse=demo", "/catalog/v1/aws/s3/sign"],
            _ => &["/v1/config?warehouse=demo", TABLE, "/catalog/v1/aws/s3/sign"],
        };
        assert_eq!(targets, expected, "cache {cache}");
        let signed = upstream.requests().pop().unwrap();
        assert_eq!(signed.header("authorization"), Some(auth.as_str()));
    }
}

#[tokio::test]
async fn finding_a_replica_that_cannot_learn_the_signer_answers_502_not_the_table_routes_404() {
    // a replica that relayed no getConfig and knows no warehouse cannot learn the signer: the
    // table-scoped route this catalog does not serve is never guessed
    let upstream = lakekeeper_07().await;
    let g = gate(&upstream.url(""), POLICY, |_| {}).await;
    let a = sign(&g, &sign_body("GET", OBJECT)).await;
    let message = a.assert_error(502, "BadGatewayException");
    assert!(message.contains("prefix `prod` cannot be learnt") && message.contains("answered 400"), "{message}");
    let targets: Vec<String> = upstream.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, [TABLE, "/v1/config"]);

    // with the warehouse configured, the same replica signs
    let g = gate(&upstream.url(""), POLICY, |c| c.upstream.warehouses = vec!["demo".into()]).await;
    let a = sign(&g, &sign_body("GET", OBJECT)).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let targets: Vec<String> = upstream.requests().into_iter().map(|r| r.target).skip(2).collect();
    assert_eq!(targets, [TABLE, "/v1/config?warehouse=demo", "/catalog/v1/aws/s3/sign"]);
}
