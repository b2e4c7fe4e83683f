use super::*;
use crate::core::iceberg::OperationId;
use crate::core::iceberg::path::PathError;
use crate::core::iceberg::routes::{Classified, Route, RouteOptions, classify, read_config_prefix};

const GLUE: &str = "catalogs/123456789012";
const ARN: &str = "arn:aws:s3tables:us-east-1:111122223333:bucket/analytics";
const ARN_SENT: &str = "arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fanalytics";

fn declared() -> Prefixes {
    Prefixes::new([GLUE, ARN, "catalogs", "a/b/c", "prod", "main|warehouse"])
}

fn read(target: &str, prefixes: &Prefixes) -> Result<Classified, PathError> {
    classify("GET", target, &RouteOptions { prefixes: Some(prefixes), ..Default::default() })
}

fn route(target: &str) -> Route {
    match read(target, &declared()) {
        Ok(Classified::Route(r)) => r,
        other => panic!("{target}: {other:?}"),
    }
}

#[test]
fn declared_prefixes_are_checked_as_a_path_could_carry_them() {
    for ok in [GLUE, ARN, "main|warehouse", "a b", "x+y", "café", "one"] {
        assert_eq!(check_declared(ok), Ok(()), "{ok}");
    }
    assert_eq!(check_declared(""), Err(PrefixError::Empty));
    for empty_segment in ["/catalogs", "catalogs/", "catalogs//1", "/"] {
        assert!(matches!(check_declared(empty_segment), Err(PrefixError::EmptySegment(_))), "{empty_segment}");
    }
    for dot in ["./x", "x/..", "..", "."] {
        assert!(matches!(check_declared(dot), Err(PrefixError::DotSegment(_))), "{dot}");
    }
    assert!(matches!(check_declared("a\u{1}b"), Err(PrefixError::Control(_))));
    for (unreachable, ch) in [(ARN_SENT, '%'), ("a\\b", '\\'), ("a;b", ';'), ("a#b", '#')] {
        assert_eq!(check_declared(unreachable), Err(PrefixError::Unreachable(unreachable.into(), ch)));
    }
    let message = check_declared(ARN_SENT).unwrap_err().to_string();
    assert!(message.contains("write the prefix decoded"), "{message}");
}

#[test]
fn only_prefixes_with_a_slash_are_kept_longest_first() {
    let p = declared();
    let kept: Vec<(&str, usize)> = p.0.iter().map(|d| (&*d.text, d.segments)).collect();
    assert_eq!(kept, [("a/b/c", 3), (ARN, 2), (GLUE, 2)]);
    assert!(Prefixes::new(["prod", "main|warehouse"]).is_empty());
}

#[test]
fn a_two_segment_prefix_reaches_its_catalog() {
    let r = route("/v1/catalogs/123456789012/namespaces/db/tables/orders");
    assert_eq!(r.operation, OperationId::LoadTable);
    assert_eq!(r.prefix.as_deref(), Some(GLUE));
    assert_eq!(r.prefix_segments, 2);
    assert_eq!(r.namespace.as_ref().unwrap().levels(), ["db"]);
    assert_eq!(r.name.as_deref(), Some("orders"));
    assert_eq!(r.canonical_path, "/v1/catalogs/123456789012/namespaces/db/tables/orders");
    assert_eq!(r.catalog_base(), "/v1/catalogs/123456789012");
    // each segment decoded once
    let r = route("/v1/%63atalogs/123456789012/namespaces/db/tables/orders");
    assert_eq!(r.prefix.as_deref(), Some(GLUE));
    assert_eq!(r.canonical_path, "/v1/catalogs/123456789012/namespaces/db/tables/orders");
}

#[test]
fn a_prefix_with_a_slash_sent_whole_with_2f_is_the_same_prefix() {
    let r = route(&format!("/v1/{ARN_SENT}/namespaces/db/tables/orders"));
    assert_eq!(r.prefix.as_deref(), Some(ARN));
    assert_eq!(r.prefix_segments, 1);
    // forwarded as it was sent: one segment, re-encoded
    assert_eq!(r.canonical_path, format!("/v1/{ARN_SENT}/namespaces/db/tables/orders"));
    assert_eq!(r.catalog_base(), format!("/v1/{ARN_SENT}"));
    let r = route("/v1/catalogs%2f123456789012/namespaces");
    assert_eq!((r.operation, r.prefix.as_deref(), r.prefix_segments), (OperationId::ListNamespaces, Some(GLUE), 1));
    assert_eq!(r.canonical_path, "/v1/catalogs%2F123456789012/namespaces");
    // and the ARN as two segments, `:` raw or escaped
    let r = route("/v1/arn:aws:s3tables:us-east-1:111122223333:bucket/analytics/namespaces");
    assert_eq!((r.prefix.as_deref(), r.prefix_segments), (Some(ARN), 2));
}

#[test]
fn the_longest_declared_prefix_wins() {
    let p = Prefixes::new(["catalogs", GLUE, "catalogs/123456789012/x"]);
    let r = |t: &str| match read(t, &p) {
        Ok(Classified::Route(r)) => (r.prefix.unwrap_or_default(), r.prefix_segments, r.operation),
        other => panic!("{t}: {other:?}"),
    };
    assert_eq!(
        r("/v1/catalogs/123456789012/x/namespaces"),
        ("catalogs/123456789012/x".into(), 3, OperationId::ListNamespaces)
    );
    assert_eq!(r("/v1/catalogs/123456789012/namespaces"), (GLUE.into(), 2, OperationId::ListNamespaces));
    // a one-segment prefix is read as before
    assert_eq!(r("/v1/catalogs/namespaces"), ("catalogs".into(), 1, OperationId::ListNamespaces));
    assert_eq!(route("/v1/prod/namespaces").catalog_base(), "/v1/prod");
    assert_eq!(route("/v1/namespaces").catalog_base(), "/v1");
    assert_eq!(r("/v1/catalogs%2F123456789012%2Fx/namespaces").1, 1);
}

#[test]
fn the_rest_of_the_path_keeps_every_path_rule() {
    let p = declared();
    for (target, want) in [
        ("/v1/catalogs/123456789012/namespaces/d%2Fb/tables/t", "EncodedSeparator"),
        ("/v1/catalogs/123456789012/namespaces/d%1fb", "LowerCaseSeparator"),
        ("/v1/catalogs/123456789012/namespaces/%2e%2e", "DotSegment"),
        ("/v1/catalogs/123456789012/namespaces/", "EmptySegment"),
        ("/v1/catalogs/123456789012/namespaces/db/tables/a%25", "DoubleEncoding"),
    ] {
        let e = read(target, &p).unwrap_err();
        assert!(format!("{e:?}").starts_with(want), "{target}: {e:?}");
    }
    // a whole prefix's segment keeps every rule but the one on `%2F`
    for bad in ["arn%2Fx%5C", "arn%2Fx%25", "arn%2Fx%3B", "arn%2Fx;", "arn%2F%00"] {
        assert!(read(&format!("/v1/{bad}/namespaces"), &p).is_err(), "{bad}");
    }
}

#[test]
fn an_undeclared_prefix_is_one_segment_and_its_2f_is_refused() {
    let p = declared();
    let other = "arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fother";
    assert!(matches!(read(&format!("/v1/{other}/namespaces/db/tables/t"), &p), Err(PathError::EncodedSeparator(_))));
    assert!(matches!(read("/v1/catalogs%2F999/namespaces", &p), Err(PathError::EncodedSeparator(_))));
    // two segments that no entry declares: `catalogs` then a path that is no route
    assert_eq!(read("/v1/catalogs/999999999999/namespaces/db/tables/t", &p), Ok(Classified::Unrecognized));
    // without declared prefixes, as before
    assert!(matches!(
        read(&format!("/v1/{ARN_SENT}/namespaces"), &Prefixes::default()),
        Err(PathError::EncodedSeparator(_))
    ));
}

#[test]
fn a_matched_prefix_is_read_before_the_form_without_a_prefix() {
    // the form without a prefix stays first for one-segment prefixes
    let r = route("/v1/namespaces/namespaces");
    assert_eq!((r.prefix, r.operation), (None, OperationId::LoadNamespaceMetadata));
    let p = Prefixes::new(["namespaces/x"]);
    assert_eq!(read("/v1/namespaces/x/tables", &p), Ok(Classified::Unrecognized));
    let Ok(Classified::Route(r)) = read("/v1/namespaces/x/namespaces", &p) else { panic!() };
    assert_eq!((r.prefix.as_deref(), r.operation), (Some("namespaces/x"), OperationId::ListNamespaces));
    // a prefix and nothing else is no route
    assert_eq!(read("/v1/catalogs/123456789012", &declared()), Ok(Classified::Unrecognized));
}

#[test]
fn a_get_config_prefix_is_read_as_the_clients_paths_will_be() {
    let p = declared();
    let options = RouteOptions { prefixes: Some(&p), ..Default::default() };
    let read = |v: &str| read_config_prefix(v, &options);
    assert_eq!(read(GLUE).as_deref(), Some(GLUE));
    assert_eq!(read(ARN_SENT).as_deref(), Some(ARN));
    assert_eq!(read(ARN).as_deref(), Some(ARN));
    assert_eq!(read("main|warehouse").as_deref(), Some("main|warehouse"));
    assert_eq!(read("main%7Cwarehouse").as_deref(), Some("main|warehouse"));
    assert_eq!(read("prod").as_deref(), Some("prod"));
    assert_eq!(read("namespaces").as_deref(), Some("namespaces"), "any one segment is a prefix");
    assert_eq!(read("catalogs/999"), None, "undeclared, two segments");
    assert_eq!(read("catalogs%2F999"), None, "undeclared, `%2F`");
    assert_eq!(read("a%25b"), None);
    assert_eq!(read("../x"), None);
}

#[test]
fn reading_a_path_without_a_prefix_with_a_slash_borrows() {
    // the usual segment decodes to itself, so `find` allocates nothing to say "no match"
    assert!(matches!(read_segment("prod"), Some(Cow::Borrowed("prod"))));
    assert!(read_segment("a%2Fb").is_none());
    assert_eq!(declared().find("prod/namespaces/db"), None);
    assert_eq!(declared().find("main%7Cwarehouse/namespaces"), None);
    assert_eq!(
        declared().find("catalogs/123456789012/namespaces"),
        Some(Match { text: GLUE, segments: 2, whole: false })
    );
}

#[test]
fn a_base_path_comes_before_the_prefix() {
    let p = declared();
    let options = RouteOptions { base_path: "/iceberg", prefixes: Some(&p), ..Default::default() };
    let Ok(Classified::Route(r)) = classify("GET", "/iceberg/v1/catalogs/123456789012/namespaces", &options) else {
        panic!()
    };
    assert_eq!((r.prefix.as_deref(), r.catalog_base()), (Some(GLUE), "/v1/catalogs/123456789012"));
}
