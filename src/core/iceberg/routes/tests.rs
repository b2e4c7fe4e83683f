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
    assert!(matches!(bad("/v1/prod/namespaces/sales/tables/a%1Fb"), PathError::Control(_)));
    assert!(matches!(bad("/v1/prod/namespaces/sa.les/tables/t"), PathError::Name(_)));
    assert!(matches!(bad("/v1/prod/namespaces/a%3Ab/tables/t"), PathError::Name(_)));
    assert!(matches!(bad("/v1/prod/namespaces/a%1F%1Fb"), PathError::Name(_)));
    assert!(matches!(bad("/v1/prod/%6Eamespaces"), PathError::EncodedLiteral(_)));
    assert!(matches!(bad("/v1/prod/namespaces/s/tables/line\\item"), PathError::BadCharacter { .. }));
}

#[test]
fn configured_upstream_separators_are_refused_in_levels() {
    let seps = ["|".to_owned()];
    let options = RouteOptions { base_path: "", namespace_separators: &seps, folding: None, prefixes: None };
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
    let options = RouteOptions { base_path: "/iceberg", namespace_separators: &[], folding: None, prefixes: None };
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
    assert_eq!(q.parent.as_ref().unwrap().levels(), ["eu", "de"]);
    assert_eq!((q.page_size, q.page_token.as_deref()), (Some(10), Some("abc")));
    assert_eq!(q.pairs, vec![("x".to_owned(), "1".to_owned()), ("x".to_owned(), "2".to_owned())], "others may repeat");
    assert_eq!(q.canonical(), "x=1&x=2&parent=eu%1Fde&pageSize=10&pageToken=abc");
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

#[test]
fn the_canonical_path_re_encodes_what_was_decoded() {
    let r = route("GET", "/v1/main%7Cwarehouse/namespaces/eu%1F%64e/tables/a+b%2Dc");
    assert_eq!(r.canonical_path, "/v1/main%7Cwarehouse/namespaces/eu%1Fde/tables/a%20b-c");
    let r = route("GET", "/v1/namespaces/s/tables/t?snapshots=all&x=a%20b+c");
    assert_eq!(r.canonical_path, "/v1/namespaces/s/tables/t");
    assert_eq!(r.query.canonical(), "snapshots=all&x=a%20b%20c");
}

#[test]
fn attack_inputs_in_every_object_position() {
    type Expect = fn(&PathError) -> bool;
    let inputs: &[(&str, Expect)] = &[
        ("..", |e| matches!(e, PathError::DotSegment(_))),
        (".", |e| matches!(e, PathError::DotSegment(_))),
        ("%2e%2e", |e| matches!(e, PathError::DotSegment(_))),
        ("%2E.", |e| matches!(e, PathError::DotSegment(_))),
        ("a%2fb", |e| matches!(e, PathError::EncodedSeparator(_))),
        ("a%5cb", |e| matches!(e, PathError::EncodedSeparator(_))),
        ("a\\b", |e| matches!(e, PathError::BadCharacter { .. })),
        ("a;b", |e| matches!(e, PathError::Semicolon(_))),
        ("a%3bb", |e| matches!(e, PathError::EncodedSemicolon(_))),
        ("a%25b", |e| matches!(e, PathError::DoubleEncoding(_))),
        ("a%252Fb", |e| matches!(e, PathError::DoubleEncoding(_))),
        ("eu%1fde", |e| matches!(e, PathError::LowerCaseSeparator(_))),
        ("a%00", |e| matches!(e, PathError::Control(_))),
        ("a%7F", |e| matches!(e, PathError::Control(_))),
        ("a%C2%85", |e| matches!(e, PathError::Control(_))),
        ("a%FF", |e| matches!(e, PathError::NotUtf8(_))),
        ("a%23b", |e| matches!(e, PathError::EncodedHash(_))),
        ("a%zz", |e| matches!(e, PathError::MalformedEscape(_))),
        ("caf\u{e9}", |e| matches!(e, PathError::BadCharacter { .. })),
    ];
    let positions = [
        "/v1/{}/namespaces/s/tables/t",
        "/v1/p/namespaces/{}/tables/t",
        "/v1/p/namespaces/s/tables/{}",
        "/v1/p/namespaces/s/views/{}",
        "/v1/p/namespaces/s/functions/{}",
        "/v1/p/namespaces/s/tables/t/plan/{}",
        "/v1/p/namespaces/s/tables/t/{}",
        "/v1/p/{}/s/tables/t/whatever/else",
        "/{}/v1/config",
    ];
    for position in positions {
        for (input, want) in inputs {
            let target = position.replace("{}", input);
            let e = bad(&target);
            assert!(want(&e), "{target}: {e:?}");
        }
    }
}

#[test]
fn a_unit_separator_outside_a_namespace_is_a_control_character() {
    assert!(matches!(bad("/v1/a%1Fb/namespaces/s"), PathError::Control(_)));
    assert!(matches!(bad("/v1/p/namespaces/s/tables/t%1Fu"), PathError::Control(_)));
    assert!(matches!(bad("/v1/p/namespaces/s/tables%1Fx/t"), PathError::Control(_)));
    assert!(matches!(bad("/v1/p/namespaces/s/tables/t/plan/p%1Fq"), PathError::Control(_)));
    assert!(matches!(bad("/v1/p/namespaces/s/tables/t?pageToken=a%1Fb"), PathError::Control(_)));
    // where a namespace may stand, levels are split, whether or not the shape is known
    assert!(unrecognized("GET", "/v1/p/namespaces/a%1Fb/whatever"));
    assert_eq!(route("GET", "/v1/p/namespaces/a%1Fb%1Fc").namespace.unwrap().levels(), ["a", "b", "c"]);
    assert!(matches!(bad("/v1/p/namespaces/a%1F"), PathError::Name(_)));
    assert!(matches!(bad("/v1/p/namespaces/%1Fa"), PathError::Name(_)));
}

#[test]
fn names_follow_the_name_rules() {
    assert!(matches!(bad("/v1/p/namespaces/sa.les"), PathError::Name(_)));
    assert!(matches!(bad("/v1/p/namespaces/sa%2Eles/tables"), PathError::Name(_)));
    assert!(matches!(bad("/v1/p/namespaces/a:b/tables/t"), PathError::Name(_)));
    assert!(matches!(bad("/v1/p/namespaces/a%1Fb.c/tables/t"), PathError::Name(_)));
    assert_eq!(route("GET", "/v1/p/namespaces/s/tables/x.y").name.as_deref(), Some("x.y"));
    assert_eq!(route("GET", "/v1/p/namespaces/s/tables/a:b").name.as_deref(), Some("a:b"));
    assert_eq!(route("GET", "/v1/p/namespaces/s/views/x%2Ey").name.as_deref(), Some("x.y"));
    assert_eq!(route("GET", "/v1/p/namespaces/a+b/tables/c+d").namespace.unwrap().levels(), ["a b"]);
    assert_eq!(route("GET", "/v1/p/namespaces/s/tables/t/plan/p1").plan_id.as_deref(), Some("p1"));
    assert_eq!(route("GET", "/v1/main%7Cwarehouse/namespaces").prefix.as_deref(), Some("main|warehouse"));
    assert_eq!(route("GET", "/v1/a.b:c/namespaces").prefix.as_deref(), Some("a.b:c"), "a prefix is one literal");
}

#[test]
fn a_catalog_named_like_a_literal() {
    let read = |method: &str, target: &str| {
        let r = route(method, target);
        (r.operation, r.prefix, r.namespace.map(|n| n.levels().join("/")))
    };
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(read("GET", "/v1/namespaces"), (Op::ListNamespaces, None, None));
    assert_eq!(read("GET", "/v1/namespaces/namespaces"), (Op::LoadNamespaceMetadata, None, some("namespaces")));
    assert_eq!(read("GET", "/v1/namespaces/namespaces/s"), (Op::LoadNamespaceMetadata, some("namespaces"), some("s")));
    assert_eq!(read("GET", "/v1/namespaces/namespaces/tables"), (Op::ListTables, None, some("namespaces")));
    assert_eq!(read("POST", "/v1/namespaces/tables/rename"), (Op::RenameTable, some("namespaces"), None));
    assert_eq!(read("POST", "/v1/tables/rename"), (Op::RenameTable, None, None));
    assert_eq!(read("POST", "/v1/tables/tables/rename"), (Op::RenameTable, some("tables"), None));
    assert_eq!(
        read("POST", "/v1/transactions/transactions/commit"),
        (Op::CommitTransaction, some("transactions"), None)
    );
    assert_eq!(read("GET", "/v1/views/namespaces/s/views/v"), (Op::LoadView, some("views"), some("s")));
    assert_eq!(read("GET", "/v1/config/namespaces"), (Op::ListNamespaces, some("config"), None));
    assert_eq!(read("GET", "/v1/v1/namespaces"), (Op::ListNamespaces, some("v1"), None));
    // the shape decides first: a method the form without a prefix lacks is not tried elsewhere
    assert!(unrecognized("POST", "/v1/namespaces/namespaces"));
    assert!(unrecognized("PUT", "/v1/namespaces/namespaces/tables"));
}

#[test]
fn literals_are_exact() {
    assert!(unrecognized("GET", "/v1/prod/Namespaces/sales"));
    assert!(unrecognized("GET", "/V1/prod/namespaces"));
    assert!(unrecognized("GET", "/v1/prod/namespaces/s/Tables/t"));
    assert!(unrecognized("GET", "/v1/Config"));
    assert!(unrecognized("POST", "/v1/OAuth/tokens"));
    assert!(unrecognized("GET", "/v1"));
    assert!(unrecognized("GET", "/v1/prod"));
    assert!(unrecognized("GET", "/iceberg/v1/config"));
    assert!(matches!(bad("/v1/prod/namespaces/s/%74ables/t"), PathError::EncodedLiteral(_)));
    assert!(matches!(bad("/%76%31/config"), PathError::EncodedLiteral(_)));
    assert!(matches!(bad("/v1/%6Eamespaces/namespaces"), PathError::EncodedLiteral(_)));
    assert_eq!(route("GET", "/v1/p/namespaces/s/tables/%74ables").name.as_deref(), Some("tables"));
    assert_eq!(bad("/"), PathError::EmptySegment);
}

#[test]
fn targets_that_are_not_origin_form() {
    for target in ["http://host/v1/config", "v1/config", "*", "", "host:443", "%2Fv1/config"] {
        assert!(matches!(bad(target), PathError::AbsoluteForm(_)), "{target}");
    }
    assert_eq!(bad("/v1/config#x"), PathError::Fragment);
    assert_eq!(bad("/v1/config?x=1#y"), PathError::Fragment);
    assert_eq!(bad("/v1//config"), PathError::EmptySegment);
    assert_eq!(bad("/v1/config/"), PathError::EmptySegment);
    assert_eq!(bad("/v1/prod/namespaces/s/tables/t/?x=1"), PathError::EmptySegment);
}

#[test]
fn every_shape_refuses_the_methods_it_does_not_define() {
    let shapes = [
        "/v1/config",
        "/v1/oauth/tokens",
        "/v1/aws/s3/sign",
        "/v1/p/namespaces",
        "/v1/p/namespaces/s",
        "/v1/p/namespaces/s/tables/t",
        "/v1/p/namespaces/s/tables/t/plan/x",
        "/v1/p/namespaces/s/views/v",
        "/v1/p/tables/rename",
    ];
    for shape in shapes {
        for method in ["PUT", "PATCH", "OPTIONS", "TRACE", "CONNECT", "get", ""] {
            assert!(unrecognized(method, shape), "{method} {shape}");
        }
    }
    assert!(unrecognized("GET", "/v1/oauth/tokens"));
    assert!(unrecognized("GET", "/v1/aws/s3/sign"));
    assert!(unrecognized("POST", "/v1/config"));
    assert!(unrecognized("GET", "/v1/p/tables/rename"));
    assert!(unrecognized("HEAD", "/v1/p/namespaces/s/functions/f"));
}

#[test]
fn the_query_of_every_route_is_read() {
    let r = route("DELETE", "/v1/p/namespaces/s/tables/t?purgeRequested=true");
    assert_eq!(r.query.pairs, [("purgeRequested".to_owned(), "true".to_owned())]);
    assert_eq!(route("GET", "/v1/config?warehouse=w").query.pairs.len(), 1);
    assert_eq!(route("GET", "/v1/p/namespaces/s/tables?pageSize=4294967295").query.page_size, Some(u32::MAX));
    assert_eq!(route("GET", "/v1/p/namespaces/s/tables?pageToken=a%25b+c").query.page_token.as_deref(), Some("a%b c"));
    assert_eq!(route("GET", "/v1/p/namespaces?&&").query, Query::default());
    assert_eq!(route("GET", "/v1/p/namespaces?parent").query.parent, None);
    assert_eq!(route("GET", "/v1/p/namespaces?parent=a+b").query.parent.unwrap().levels(), ["a b"]);
    assert_eq!(route("GET", "/v1/p/namespaces?par%65nt=a%1Fb").query.parent.unwrap().levels(), ["a", "b"]);
    // a query error is 400 on an unknown route too: the query is read before classification
    assert!(matches!(bad("/v1/p/whatever?pageSize=0"), PathError::BadPageSize(_)));
}

#[test]
fn query_errors() {
    for size in ["0", "-1", "", "abc", "1.5", "4294967296", "+", "1e3", "10%20"] {
        let target = format!("/v1/p/namespaces?pageSize={size}");
        assert!(matches!(bad(&target), PathError::BadPageSize(_)), "{target}");
    }
    for query in [
        "pageToken=a&pageToken=a",
        "pageToken=&pageToken=",
        "pageSize=1&pageSize=1",
        "parent=&parent=",
        "parent&parent",
        "purgeRequested=true&purgeRequested=false",
        "snapshots=&snapshots=",
        "warehouse=&warehouse=",
        "planId=a&planId=b",
        "pageToken=a&page%54oken=b",
    ] {
        let target = format!("/v1/p/namespaces?{query}");
        assert!(matches!(bad(&target), PathError::RepeatedParameter(_)), "{target}");
    }
    assert!(matches!(bad("/v1/p/namespaces?parent=a%25b"), PathError::DoubleEncoding(_)));
    assert!(matches!(bad("/v1/p/namespaces?parent=a%2Fb"), PathError::EncodedSeparator(_)));
    assert!(matches!(bad("/v1/p/namespaces?parent=.."), PathError::DotSegment(_)));
    assert!(matches!(bad("/v1/p/namespaces?parent=a%3Ab"), PathError::Name(_)));
    assert!(matches!(bad("/v1/p/namespaces?parent=eu%1F"), PathError::Name(_)));
    assert!(matches!(bad("/v1/p/namespaces?parent=a%00"), PathError::Control(_)));
    assert!(matches!(bad("/v1/p/namespaces?x=%FF"), PathError::NotUtf8(_)));
    assert!(matches!(bad("/v1/p/namespaces?x=%C2%85"), PathError::Control(_)));
    assert!(matches!(bad("/v1/p/namespaces?x=a b"), PathError::BadQueryCharacter(' ')));
    assert!(matches!(bad("/v1/p/namespaces?x=caf\u{e9}"), PathError::BadQueryCharacter(_)));
    assert!(matches!(bad("/v1/p/namespaces?x=\u{1}"), PathError::BadQueryCharacter(_)));
}

#[test]
fn method_override_query_parameters_are_refused_in_any_case() {
    for target in [
        "/v1/prod/namespaces/s/tables/t?_method=DELETE",
        "/v1/prod/namespaces/s/tables?X-HTTP-Method-Override=POST",
        "/v1/prod/namespaces?x-http-method=DELETE",
        "/v1/prod/namespaces?X-Method-Override=PUT&pageSize=1",
        "/v1/prod/namespaces?%5Fmethod=DELETE",
    ] {
        assert!(matches!(bad(target), PathError::MethodOverride(_)), "{target}");
    }
    // a parameter that merely contains the word is someone else's
    assert_eq!(route("GET", "/v1/prod/namespaces?my_method=x").query.pairs.len(), 1);
}
