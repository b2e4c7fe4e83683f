//! Every path and method of the Iceberg REST and S3 signer OpenAPI specs is classified as its
//! `operationId`, with and without the optional `{prefix}`.

use crate::support::shared_dir;
use icegate::core::iceberg::OperationId;
use icegate::core::iceberg::routes::{Classified, RouteOptions, classify};
use serde_json::Value;

const METHODS: [&str; 7] = ["get", "put", "post", "delete", "head", "patch", "options"];

fn concrete(path: &str) -> String {
    path.replace("{prefix}", "prod")
        .replace("{namespace}", "sales")
        .replace("{table}", "t")
        .replace("{view}", "v")
        .replace("{function}", "f")
        .replace("{plan-id}", "p1")
}

#[test]
fn every_openapi_route_is_classified() {
    let dir = shared_dir("specs");
    let mut seen = Vec::new();
    let mut missing = Vec::new();
    for file in ["iceberg-rest-catalog-open-api.yaml", "iceberg-s3-signer-open-api.yaml"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let spec: Value = serde_saphyr::from_str(&text).unwrap();
        for (path, item) in spec["paths"].as_object().unwrap() {
            for method in METHODS {
                let Some(id) = item.get(method).and_then(|op| op["operationId"].as_str()) else { continue };
                let method = method.to_uppercase();
                let mut targets = vec![concrete(path)];
                if path.contains("{prefix}/") {
                    targets.push(concrete(&path.replace("{prefix}/", "")));
                }
                for target in targets {
                    match classify(&method, &target, &RouteOptions::default()) {
                        Ok(Classified::Route(r)) if r.operation.as_str() == id => {}
                        other => missing.push(format!("{method} {target} ({id}): {other:?}")),
                    }
                }
                seen.push(id.to_owned());
            }
        }
    }
    assert!(missing.is_empty(), "unclassified routes:\n{}", missing.join("\n"));
    let unknown: Vec<_> = OperationId::ALL.iter().filter(|op| !seen.iter().any(|s| s == op.as_str())).collect();
    assert!(unknown.is_empty(), "operations in no spec: {unknown:?}");
    assert_eq!(seen.len(), OperationId::ALL.len());
}
