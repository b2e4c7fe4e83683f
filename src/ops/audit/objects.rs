//! The `objects` of an audit line: what a request names in its path, and what its body adds
//! (the created table, view or namespace, a rename's source and destination, every table of a
//! transaction), so that "who created `prod.finance.payroll`?" is answered by the audit log.

use super::Object;
use crate::core::iceberg::body::Body;
use crate::core::iceberg::routes::Route;
use crate::core::iceberg::{OperationId, TableIdent};

/// The objects a route's path names: the leaf (table, view, function), else the namespace,
/// else the catalog.
pub fn of_path(route: &Route, catalog: &str) -> Vec<Object> {
    use OperationId as Op;
    let name = route.name.as_deref();
    let leaf = |kind| {
        route.namespace.as_ref().zip(name).map(|(ns, n)| Object { kind, full_name: ns.full_name(catalog, Some(n)) })
    };
    let object = match route.operation {
        Op::LoadView | Op::ReplaceView | Op::DropView | Op::ViewExists => leaf("VIEW"),
        Op::LoadFunction => leaf("FUNCTION"),
        _ if name.is_some() => leaf("TABLE"),
        _ => route.namespace.as_ref().map(|ns| Object { kind: "SCHEMA", full_name: ns.full_name(catalog, None) }),
    };
    match object {
        Some(o) => vec![o],
        None if catalog.is_empty() => Vec::new(),
        None => vec![Object { kind: "CATALOG", full_name: catalog.to_owned() }],
    }
}

/// The objects an inspected body names beyond the path, in the body's order.
pub fn of_body(route: &Route, catalog: &str, body: &Body) -> Vec<Object> {
    let in_path = |kind, name: &str| {
        route.namespace.as_ref().map(|ns| Object { kind, full_name: ns.full_name(catalog, Some(name)) })
    };
    let ident = |kind, id: &TableIdent| Object { kind, full_name: id.namespace.full_name(catalog, Some(&id.name)) };
    match body {
        Body::CreateNamespace { namespace, .. } => {
            vec![Object { kind: "SCHEMA", full_name: namespace.full_name(catalog, None) }]
        }
        Body::CreateTable { name, .. } | Body::RegisterTable { name } => in_path("TABLE", name).into_iter().collect(),
        Body::CreateView { name } | Body::RegisterView { name } => in_path("VIEW", name).into_iter().collect(),
        Body::Rename { source, destination } => {
            let kind = if route.operation == OperationId::RenameView { "VIEW" } else { "TABLE" };
            vec![ident(kind, source), ident(kind, destination)]
        }
        Body::CommitTransaction(changes) => changes.iter().map(|c| ident("TABLE", &c.identifier)).collect(),
        Body::UpdateTable(_) | Body::UpdateProperties { .. } | Body::SignRequest(_) | Body::ReplaceView => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::iceberg::routes::{Classified, RouteOptions, classify};

    fn objects(method: &str, target: &str, body: &str) -> Vec<(&'static str, String)> {
        let options = RouteOptions { base_path: "", namespace_separators: &[], folding: None, prefixes: None };
        let Ok(Classified::Route(route)) = classify(method, target, &options) else { panic!("{target}") };
        let mut all = of_path(&route, "prod");
        if !body.is_empty() {
            all.extend(of_body(
                &route,
                "prod",
                &crate::core::iceberg::body::inspect(&route, body.as_bytes(), &Default::default()).unwrap(),
            ));
        }
        all.into_iter().map(|o| (o.kind, o.full_name)).collect()
    }

    fn named(list: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
        list.iter().map(|(k, n)| (*k, (*n).to_owned())).collect()
    }

    #[test]
    fn creates_name_what_they_create() {
        let schema = r#"{"type":"struct","fields":[]}"#;
        let create = format!(r#"{{"name":"payroll","schema":{schema}}}"#);
        assert_eq!(
            objects("POST", "/v1/namespaces/finance/tables", &create),
            named(&[("SCHEMA", "prod.finance"), ("TABLE", "prod.finance.payroll")])
        );
        let register = r#"{"name":"t","metadata-location":"file:///m.json"}"#;
        assert_eq!(objects("POST", "/v1/namespaces/a%1Fb/register", register)[1], ("TABLE", "prod.a:b.t".to_owned()));
        assert_eq!(
            objects("POST", "/v1/namespaces", r#"{"namespace":["a","b"]}"#),
            named(&[("CATALOG", "prod"), ("SCHEMA", "prod.a:b")])
        );
        let view = format!(
            r#"{{"name":"v","schema":{schema},"view-version":{{"version-id":1,"timestamp-ms":0,"schema-id":0,"summary":{{}},"representations":[],"default-namespace":["s"]}},"properties":{{}}}}"#
        );
        assert_eq!(objects("POST", "/v1/namespaces/s/views", &view)[1], ("VIEW", "prod.s.v".to_owned()));
    }

    #[test]
    fn renames_and_transactions_name_every_object() {
        let rename = r#"{"source":{"namespace":["s"],"name":"t"},"destination":{"namespace":["u"],"name":"t2"}}"#;
        assert_eq!(
            objects("POST", "/v1/tables/rename", rename),
            named(&[("CATALOG", "prod"), ("TABLE", "prod.s.t"), ("TABLE", "prod.u.t2")])
        );
        assert_eq!(objects("POST", "/v1/views/rename", rename)[2], ("VIEW", "prod.u.t2".to_owned()));
        let tx = r#"{"table-changes":[{"identifier":{"namespace":["s"],"name":"a"},"requirements":[],"updates":[]},{"identifier":{"namespace":["u"],"name":"b"},"requirements":[],"updates":[]}]}"#;
        assert_eq!(
            objects("POST", "/v1/transactions/commit", tx),
            named(&[("CATALOG", "prod"), ("TABLE", "prod.s.a"), ("TABLE", "prod.u.b")])
        );
        // a commit names its table in the path already
        let commit = r#"{"requirements":[],"updates":[]}"#;
        assert_eq!(objects("POST", "/v1/namespaces/s/tables/t", commit), named(&[("TABLE", "prod.s.t")]));
    }
}
