//! Which ownership changes a request makes if the upstream carries it out: creates (at the
//! commit of a staged create, not at the stage), drops and renames, with each object's full
//! name and upstream path.

use super::change::{Change, Object};
use crate::core::iceberg::body::Body;
use crate::core::iceberg::path::encode;
use crate::core::iceberg::routes::Route;
use crate::core::iceberg::{Namespace, OperationId, TableIdent};
use crate::core::ownership::Kind;

/// Names objects of one request's catalog.
struct Namer<'a> {
    catalog: &'a str,
    /// `/v1` or `/v1/{prefix}` (of one segment or several), as forwarded.
    base: &'a str,
}

impl Namer<'_> {
    fn schema(&self, levels: &[String]) -> Object {
        Object {
            kind: Kind::Schema,
            full_name: format!("{}.{}", self.catalog, levels.join(":")),
            path: format!(
                "{}/namespaces/{}",
                self.base,
                levels.iter().map(|l| encode(l)).collect::<Vec<_>>().join("%1F")
            ),
        }
    }

    fn leaf(&self, kind: Kind, levels: &[String], name: &str) -> Object {
        let schema = self.schema(levels);
        let segment = if kind == Kind::View { "views" } else { "tables" };
        Object {
            kind,
            full_name: format!("{}.{name}", schema.full_name),
            path: format!("{}/{segment}/{}", schema.path, encode(name)),
        }
    }

    fn ident(&self, kind: Kind, ident: &TableIdent) -> Object {
        self.leaf(kind, ident.namespace.levels(), &ident.name)
    }
}

/// The changes `route` with its inspected `body` makes; empty for every other operation.
pub fn changes(route: &Route, catalog: &str, body: Option<&Body>) -> Vec<Change> {
    use OperationId as Op;
    // Most requests change no ownership: decided before anything is built.
    let changes_ownership = matches!(
        route.operation,
        Op::CreateNamespace
            | Op::CreateTable
            | Op::RegisterTable
            | Op::CreateView
            | Op::RegisterView
            | Op::UpdateTable
            | Op::CommitTransaction
            | Op::DropTable
            | Op::UnregisterTable
            | Op::DropView
            | Op::DropNamespace
            | Op::RenameTable
            | Op::RenameView
    );
    if !changes_ownership {
        return Vec::new();
    }
    let n = Namer { catalog, base: route.catalog_base() };
    let levels = route.namespace.as_ref().map_or(&[][..], Namespace::levels);
    let path_leaf = |kind| route.name.as_deref().map(|name| n.leaf(kind, levels, name));
    match (route.operation, body) {
        (Op::CreateNamespace, Some(Body::CreateNamespace { namespace, .. })) => {
            vec![Change::Create(n.schema(namespace.levels()))]
        }
        (Op::CreateTable, Some(Body::CreateTable { name, stage_create: false, .. }))
        | (Op::RegisterTable, Some(Body::RegisterTable { name })) => {
            vec![Change::Create(n.leaf(Kind::Table, levels, name))]
        }
        (Op::CreateView, Some(Body::CreateView { name })) | (Op::RegisterView, Some(Body::RegisterView { name })) => {
            vec![Change::Create(n.leaf(Kind::View, levels, name))]
        }
        (Op::UpdateTable, Some(Body::UpdateTable(u))) if u.asserts_create => {
            path_leaf(Kind::Table).map(Change::Create).into_iter().collect()
        }
        (Op::CommitTransaction, Some(Body::CommitTransaction(changes))) => changes
            .iter()
            .filter(|c| c.update.asserts_create)
            .map(|c| Change::Create(n.ident(Kind::Table, &c.identifier)))
            .collect(),
        (Op::DropTable | Op::UnregisterTable, _) => path_leaf(Kind::Table).map(Change::Drop).into_iter().collect(),
        (Op::DropView, _) => path_leaf(Kind::View).map(Change::Drop).into_iter().collect(),
        (Op::DropNamespace, _) if !levels.is_empty() => vec![Change::Drop(n.schema(levels))],
        (Op::RenameTable | Op::RenameView, Some(Body::Rename { source, destination })) => {
            let kind = if route.operation == Op::RenameView { Kind::View } else { Kind::Table };
            vec![Change::Rename { from: n.ident(kind, source), to: n.ident(kind, destination) }]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::iceberg::routes::{Classified, RouteOptions, classify};

    fn plan(method: &str, target: &str, body: &str) -> Vec<Change> {
        let options = RouteOptions { base_path: "", namespace_separators: &[], folding: None, prefixes: None };
        let Ok(Classified::Route(route)) = classify(method, target, &options) else { panic!("{target}") };
        let parsed = (!body.is_empty())
            .then(|| crate::core::iceberg::body::inspect(&route, body.as_bytes(), &Default::default()).unwrap());
        changes(&route, "prod", parsed.as_ref())
    }

    #[test]
    fn creates_name_the_object_and_its_upstream_path() {
        let c =
            plan("POST", "/v1/wh/namespaces/a%1Fb/tables", r#"{"name":"t x","schema":{"type":"struct","fields":[]}}"#);
        let Change::Create(o) = &c[0] else { panic!("{c:?}") };
        assert_eq!((o.full_name.as_str(), o.path.as_str()), ("prod.a:b.t x", "/v1/wh/namespaces/a%1Fb/tables/t%20x"));
        let staged = r#"{"name":"t","schema":{"type":"struct","fields":[]},"stage-create":true}"#;
        assert!(plan("POST", "/v1/namespaces/s/tables", staged).is_empty(), "a stage creates nothing yet");
        let ns = plan("POST", "/v1/namespaces", r#"{"namespace":["s","n"]}"#);
        assert_eq!(
            ns,
            vec![Change::Create(Object {
                kind: Kind::Schema,
                full_name: "prod.s:n".into(),
                path: "/v1/namespaces/s%1Fn".into()
            })]
        );
    }

    #[test]
    fn drops_and_renames_name_their_objects() {
        let d = plan("DELETE", "/v1/namespaces/s/views/v", "");
        assert!(matches!(&d[..], [Change::Drop(o)] if o.kind == Kind::View && o.full_name == "prod.s.v"));
        let body = r#"{"source":{"namespace":["s"],"name":"t"},"destination":{"namespace":["u"],"name":"t2"}}"#;
        let r = plan("POST", "/v1/tables/rename", body);
        let [Change::Rename { from, to }] = &r[..] else { panic!("{r:?}") };
        assert_eq!((from.full_name.as_str(), to.path.as_str()), ("prod.s.t", "/v1/namespaces/u/tables/t2"));
        assert!(plan("GET", "/v1/namespaces/s/tables/t", "").is_empty());
    }
}
