use super::*;

fn route(method: &str, target: &str) -> Route {
    match classify(method, target, &RouteOptions::default()) {
        Ok(Classified::Route(r)) => r,
        other => panic!("{method} {target}: {other:?}"),
    }
}

fn op(method: &str, target: &str) -> OperationId {
    route(method, target).operation
}

fn unrecognized(method: &str, target: &str) -> bool {
    matches!(classify(method, target, &RouteOptions::default()), Ok(Classified::Unrecognized))
}

fn bad(target: &str) -> PathError {
    match classify("GET", target, &RouteOptions::default()) {
        Err(e) => e,
        other => panic!("{target}: {other:?}"),
    }
}

#[test]
fn every_route_with_and_without_a_prefix() {
    let table = [
        ("GET", "/namespaces", Op::ListNamespaces),
        ("POST", "/namespaces", Op::CreateNamespace),
        ("GET", "/namespaces/s", Op::LoadNamespaceMetadata),
        ("HEAD", "/namespaces/s", Op::NamespaceExists),
        ("DELETE", "/namespaces/s", Op::DropNamespace),
        ("POST", "/namespaces/s/properties", Op::UpdateProperties),
        ("GET", "/namespaces/s/tables", Op::ListTables),
        ("POST", "/namespaces/s/tables", Op::CreateTable),
        ("GET", "/namespaces/s/functions", Op::ListFunctions),
        ("GET", "/namespaces/s/functions/f", Op::LoadFunction),
        ("POST", "/namespaces/s/register", Op::RegisterTable),
        ("GET", "/namespaces/s/tables/t", Op::LoadTable),
        ("POST", "/namespaces/s/tables/t", Op::UpdateTable),
        ("DELETE", "/namespaces/s/tables/t", Op::DropTable),
        ("HEAD", "/namespaces/s/tables/t", Op::TableExists),
        ("POST", "/namespaces/s/tables/t/plan", Op::PlanTableScan),
        ("GET", "/namespaces/s/tables/t/plan/p", Op::FetchPlanningResult),
        ("DELETE", "/namespaces/s/tables/t/plan/p", Op::CancelPlanning),
        ("POST", "/namespaces/s/tables/t/tasks", Op::FetchScanTasks),
        ("POST", "/namespaces/s/tables/t/unregister", Op::UnregisterTable),
        ("GET", "/namespaces/s/tables/t/credentials", Op::LoadCredentials),
        ("POST", "/namespaces/s/tables/t/sign", Op::SignRequest),
        ("POST", "/namespaces/s/tables/t/metrics", Op::ReportMetrics),
        ("POST", "/tables/rename", Op::RenameTable),
        ("POST", "/transactions/commit", Op::CommitTransaction),
        ("GET", "/namespaces/s/views", Op::ListViews),
        ("POST", "/namespaces/s/views", Op::CreateView),
        ("GET", "/namespaces/s/views/v", Op::LoadView),
        ("POST", "/namespaces/s/views/v", Op::ReplaceView),
        ("DELETE", "/namespaces/s/views/v", Op::DropView),
        ("HEAD", "/namespaces/s/views/v", Op::ViewExists),
        ("POST", "/views/rename", Op::RenameView),
        ("POST", "/namespaces/s/register-view", Op::RegisterView),
    ];
    for (method, tail, want) in table {
        let with = route(method, &format!("/v1/prod{tail}"));
        assert_eq!((with.operation, with.prefix.as_deref()), (want, Some("prod")), "{method} {tail}");
        let without = route(method, &format!("/v1{tail}"));
        assert_eq!((without.operation, without.prefix), (want, None), "{method} {tail}");
    }
    assert_eq!(op("GET", "/v1/config?warehouse=w"), Op::GetConfig);
    assert_eq!(op("POST", "/v1/oauth/tokens"), Op::GetToken);
    assert_eq!(op("POST", "/v1/aws/s3/sign"), Op::SignS3Request);
}

#[test]
fn objects_are_decoded_from_the_path() {
    let r = route("GET", "/v1/main%7Cwarehouse/namespaces/eu%1Fde/tables/x.y");
    assert_eq!(r.prefix.as_deref(), Some("main|warehouse"));
    assert_eq!(r.namespace.unwrap().levels(), ["eu", "de"]);
    assert_eq!(r.name.as_deref(), Some("x.y"));
    assert_eq!(route("GET", "/v1/p/namespaces/s/tables/a+b").name.as_deref(), Some("a b"));
    assert_eq!(route("GET", "/v1/p/namespaces/s/tables/t/plan/p%2D1").plan_id.as_deref(), Some("p-1"));
}

#[test]
fn the_form_without_a_prefix_wins_when_both_fit() {
    let r = route("GET", "/v1/namespaces/namespaces");
    assert_eq!(
        (r.operation, r.prefix, r.namespace.unwrap().levels().to_vec()),
        (Op::LoadNamespaceMetadata, None, vec!["namespaces".to_owned()])
    );
    let r = route("GET", "/v1/namespaces/namespaces/s/tables");
    assert_eq!((r.operation, r.prefix.as_deref()), (Op::ListTables, Some("namespaces")));
    let r = route("GET", "/v1/tables/namespaces/s/tables/t");
    assert_eq!((r.operation, r.prefix.as_deref()), (Op::LoadTable, Some("tables")));
}

#[test]
fn unknown_shapes_and_methods_are_unrecognized() {
    assert!(unrecognized("GET", "/v1/prod/namespaces/sales/tables/orders/whatever"));
    assert!(unrecognized("PUT", "/v1/prod/namespaces/sales/tables/orders"));
    assert!(unrecognized("GET", "/v1/prod/Namespaces/sales"));
    assert!(unrecognized("get", "/v1/prod/namespaces/sales"));
    assert!(unrecognized("GET", "/v2/prod/namespaces"));
    assert!(unrecognized("GET", "/v1/prod/config"));
    assert!(unrecognized("POST", "/v1/prod/oauth/tokens"));
}

#[test]
fn attack_inputs_are_400_even_on_unknown_routes() {
    assert!(matches!(bad("/v1/prod/namespaces/sales/tables/../../hr/tables/payroll"), PathError::DotSegment(_)));
    assert!(matches!(bad("/v1/prod/namespaces/sales/tables/%2e%2e"), PathError::DotSegment(_)));
    assert!(matches!(bad("/v1/prod/namespaces/sales/tables/a%2Fb"), PathError::EncodedSeparator(_)));
    assert!(matches!(bad("/v1/prod/namespaces/sales/tables/a%5Cb"), PathError::EncodedSeparator(_)));
    assert!(matches!(bad("/v1/prod/namespaces/sales;x=1/tables"), PathError::Semicolon(_)));
    assert!(matches!(bad("/v1/prod/namespaces/sales%3Bx/tables"), PathError::EncodedSemicolon(_)));
    assert!(matches!(bad("/v1/prod/namespaces/sales/tables/orders%252F"), PathError::DoubleEncoding(_)));
    assert!(matches!(bad("/v1/prod/namespaces/eu%1fde/tables/t"), PathError::LowerCaseSeparator(_)));
    assert!(matches!(bad("/v1/prod//namespaces"), PathError::EmptySegment));
    assert!(matches!(bad("/v1/prod/namespaces/"), PathError::EmptySegment));
    assert!(matches!(bad("/v1/prod/namespaces/sales/tables/t#x"), PathError::Fragment));
    assert!(matches!(bad("http://evil/v1/prod/namespaces"), PathError::AbsoluteForm(_)));
    assert!(matches!(bad("/v1/prod/namespaces/sales/tables/t%00"), PathError::Control(_)));
    assert!(matches!(bad("/v1/prod/namespaces/sales/tables/a%1Fb"), PathError::NotOneLevel(_)));
    assert!(matches!(bad("/v1/prod/namespaces/sa.les/tables/t"), PathError::Name(_)));
    assert!(matches!(bad("/v1/prod/namespaces/a%3Ab/tables/t"), PathError::Name(_)));
    assert!(matches!(bad("/v1/prod/namespaces/a%1F%1Fb"), PathError::Name(_)));
    assert!(matches!(bad("/v1/prod/%6Eamespaces"), PathError::EncodedLiteral(_)));
    assert!(matches!(bad("/v1/prod/namespaces/s/tables/line\\item"), PathError::BadCharacter { .. }));
}

#[test]
fn configured_upstream_separators_are_refused_in_levels() {
    let seps = ["|".to_owned()];
    let options = RouteOptions { base_path: "", namespace_separators: &seps };
    assert!(matches!(classify("GET", "/v1/p/namespaces/a%7Cb", &options), Err(PathError::Name(_))));
    assert!(matches!(classify("GET", "/v1/p/namespaces?parent=a%7Cb", &options), Err(PathError::Name(_))));
}

#[test]
fn very_long_and_deep_names_are_read_without_trouble() {
    let long = "t".repeat(10_000);
    assert_eq!(route("GET", &format!("/v1/p/namespaces/s/tables/{long}")).name.unwrap().len(), 10_000);
    let deep = vec!["l"; 500].join("%1F");
    assert_eq!(route("GET", &format!("/v1/p/namespaces/{deep}")).namespace.unwrap().levels().len(), 500);
}

#[test]
fn a_base_path_is_stripped() {
    let options = RouteOptions { base_path: "/iceberg", namespace_separators: &[] };
    let r = classify("GET", "/iceberg/v1/prod/namespaces", &options).unwrap();
    assert!(matches!(r, Classified::Route(Route { operation: Op::ListNamespaces, .. })));
    assert_eq!(classify("GET", "/v1/prod/namespaces", &options).unwrap(), Classified::Unrecognized);
    assert_eq!(classify("GET", "/icebergx/v1/config", &options).unwrap(), Classified::Unrecognized);
    assert!(is_get_token("POST", "/iceberg/v1/oauth/tokens?x=1", "/iceberg"));
    assert!(!is_get_token("POST", "/v1/oauth/tokens", "/iceberg"));
    assert!(is_get_token("POST", "/v1/oauth/tokens", ""));
    assert!(!is_get_token("GET", "/v1/oauth/tokens", ""));
    assert!(!is_get_token("POST", "/v1/oauth/tokens/", ""));
}

#[test]
fn the_query_is_checked() {
    let q = route("GET", "/v1/p/namespaces?parent=eu%1Fde&pageSize=10&pageToken=abc&x=1&x=2").query;
    assert_eq!(q.parent.unwrap().levels(), ["eu", "de"]);
    assert_eq!((q.page_size, q.page_token.as_deref()), (Some(10), Some("abc")));
    assert_eq!(q.pairs.len(), 5, "other parameters may repeat and are kept raw");
    let q = route("GET", "/v1/p/namespaces?parent=&pageToken=").query;
    assert_eq!((q.parent, q.page_token), (None, None));
    for target in [
        "/v1/p/namespaces?pageSize=10&pageSize=20",
        "/v1/p/namespaces?pageToken=&pageToken=",
        "/v1/p/namespaces?parent=a&parent=b",
        "/v1/p/namespaces/s/tables/t?snapshots=all&snapshots=refs",
        "/v1/config?warehouse=a&warehouse=b",
    ] {
        assert!(matches!(bad(target), PathError::RepeatedParameter(_)), "{target}");
    }
    assert!(matches!(bad("/v1/p/namespaces?pageSize=0"), PathError::BadPageSize(_)));
    assert!(matches!(bad("/v1/p/namespaces?pageSize=abc"), PathError::BadPageSize(_)));
    assert!(matches!(bad("/v1/p/namespaces?parent=sa.les"), PathError::Name(_)));
    assert!(matches!(bad("/v1/p/namespaces?parent=eu%1fde"), PathError::LowerCaseSeparator(_)));
    assert!(matches!(bad("/v1/p/namespaces?x=%zz"), PathError::MalformedEscape(_)));
    assert!(matches!(bad("/v1/p/namespaces?x=%0A"), PathError::Control(_)));
}
