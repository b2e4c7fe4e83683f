use super::*;
use crate::iceberg::routes::Query;

fn route(op: OperationId) -> Route {
    Route {
        operation: op,
        prefix: Some("prod".into()),
        namespace: Some(Namespace::new(vec!["sales".into()], &[]).unwrap()),
        name: Some("orders".into()),
        plan_id: None,
        query: Query::default(),
    }
}

fn inspect_str(op: OperationId, body: &str) -> Result<Body, BodyError> {
    inspect(&route(op), body.as_bytes(), &[])
}

fn update(body: &str) -> TableUpdate {
    match inspect_str(OperationId::UpdateTable, body).unwrap() {
        Body::UpdateTable(u) => u,
        other => panic!("{other:?}"),
    }
}

#[test]
fn create_table_reports_an_explicit_location_even_when_empty() {
    let b = inspect_str(OperationId::CreateTable, r#"{"name":"t","location":""}"#).unwrap();
    assert_eq!(b, Body::CreateTable { name: "t".into(), explicit_location: true, stage_create: false });
    let b = inspect_str(OperationId::CreateTable, r#"{"name":"t","location":null,"stage-create":true}"#).unwrap();
    assert_eq!(b, Body::CreateTable { name: "t".into(), explicit_location: false, stage_create: true });
    assert!(inspect_str(OperationId::CreateTable, r#"{"location":"s3://x"}"#).is_err());
    assert!(inspect_str(OperationId::CreateTable, r#"{"name":5}"#).is_err());
    assert!(inspect_str(OperationId::CreateTable, r#"{"name":".."}"#).is_err());
}

#[test]
fn every_location_property_counts_as_moving_data() {
    assert!(update(r#"{"updates":[{"action":"set-location","location":"s3://x"}]}"#).moves_data);
    for key in LOCATION_PROPERTIES {
        assert!(
            update(&format!(r#"{{"updates":[{{"action":"set-properties","updates":{{"{key}":"s3://x"}}}}]}}"#))
                .moves_data,
            "{key}"
        );
        assert!(
            update(&format!(r#"{{"updates":[{{"action":"remove-properties","removals":["{key}"]}}]}}"#)).moves_data,
            "{key}"
        );
    }
    assert!(!update(r#"{"updates":[{"action":"set-properties","updates":{"comment":"x"}}]}"#).moves_data);
    assert!(!update(r#"{"requirements":[],"updates":[]}"#).moves_data);
    assert!(!update("{}").moves_data);
}

#[test]
fn assert_create_marks_the_commit_of_a_staged_create() {
    let u = update(
        r#"{"requirements":[{"type":"assert-create"}],"updates":[{"action":"set-location","location":"s3://x"}]}"#,
    );
    assert!(u.asserts_create && u.moves_data);
    assert!(!update(r#"{"requirements":[{"type":"assert-table-uuid","uuid":"u"}]}"#).asserts_create);
}

#[test]
fn a_commit_identifier_must_match_the_path() {
    assert!(update(r#"{"identifier":{"namespace":["sales"],"name":"orders"},"updates":[]}"#) == TableUpdate::default());
    let e =
        inspect_str(OperationId::UpdateTable, r#"{"identifier":{"namespace":["sales"],"name":"other"},"updates":[]}"#)
            .unwrap_err();
    assert_eq!(e.to_string(), "body identifier `sales.other` differs from the path `sales.orders`");
    assert!(inspect_str(OperationId::ReplaceView, r#"{"identifier":{"namespace":["hr"],"name":"orders"}}"#).is_err());
}

#[test]
fn transactions_need_distinct_identified_tables() {
    let ok = r#"{"table-changes":[{"identifier":{"namespace":["a"],"name":"t"},"updates":[]},{"identifier":{"namespace":["b"],"name":"t"}}]}"#;
    assert!(
        matches!(inspect_str(OperationId::CommitTransaction, ok).unwrap(), Body::CommitTransaction(c) if c.len() == 2)
    );
    let twice = r#"{"table-changes":[{"identifier":{"namespace":["a"],"name":"t"}},{"identifier":{"namespace":["a"],"name":"t"}}]}"#;
    assert!(matches!(inspect_str(OperationId::CommitTransaction, twice), Err(BodyError::RepeatedTable(_))));
    let missing = r#"{"table-changes":[{"updates":[]}]}"#;
    assert!(matches!(inspect_str(OperationId::CommitTransaction, missing), Err(BodyError::MissingIdentifier(0))));
    let dup_key = r#"{"table-changes":[{"identifier":{"namespace":["a"],"name":"t","name":"u"}}]}"#;
    assert!(matches!(
        inspect_str(OperationId::CommitTransaction, dup_key),
        Err(BodyError::Json(JsonError::DuplicateKey(_)))
    ));
}

#[test]
fn renames_check_both_names_and_reject_duplicate_keys() {
    let b = inspect_str(
        OperationId::RenameTable,
        r#"{"source":{"namespace":["a"],"name":"t"},"destination":{"namespace":["b"],"name":"t"}}"#,
    )
    .unwrap();
    assert!(matches!(b, Body::Rename { .. }));
    let dup = r#"{"source":{"namespace":["a"],"name":"t"},"source":{"namespace":["x"],"name":"t"},"destination":{"namespace":["b"],"name":"t"}}"#;
    assert!(inspect_str(OperationId::RenameTable, dup).is_err());
    assert!(
        inspect_str(
            OperationId::RenameTable,
            r#"{"source":{"namespace":["a.b"],"name":"t"},"destination":{"namespace":["b"],"name":"t"}}"#
        )
        .is_err()
    );
}

#[test]
fn namespaces_in_bodies_follow_the_path_rules() {
    assert!(inspect_str(OperationId::CreateNamespace, r#"{"namespace":["a","b"]}"#).is_ok());
    for bad in [r#"{"namespace":[]}"#, r#"{"namespace":["a.b"]}"#, r#"{"namespace":["a:b"]}"#, r#"{"namespace":"a"}"#] {
        assert!(inspect_str(OperationId::CreateNamespace, bad).is_err(), "{bad}");
    }
    assert!(inspect(&route(OperationId::CreateNamespace), br#"{"namespace":["a|b"]}"#, &["|".to_owned()]).is_err());
}

#[test]
fn sign_requests_keep_the_method_as_sent() {
    let b = inspect_str(
        OperationId::SignRequest,
        r#"{"region":"r","method":"options","uri":"s3://b/k","headers":{},"provider":"gcs"}"#,
    )
    .unwrap();
    let Body::SignRequest(s) = b else { panic!() };
    assert_eq!((s.method.as_str(), s.provider.as_deref()), ("options", Some("gcs")));
    assert!(
        inspect_str(OperationId::SignRequest, r#"{"region":"r","method":"GET","uri":"s3://b/k"}"#).is_err(),
        "headers are required"
    );
}

#[test]
fn strict_json_errors_surface_as_400() {
    for bad in ["", "{} {}", r#"{"name":"t","name":"u"}"#, "{\"name\":\"\\ud800\"}"] {
        let e = inspect_str(OperationId::CreateView, bad).unwrap_err();
        assert_eq!(e.status(), 400, "{bad}");
    }
    assert!(matches!(inspect_str(OperationId::LoadTable, "{}"), Err(BodyError::NotInspected(_))));
}

#[test]
fn content_headers_must_say_plain_json() {
    assert!(check_content_headers(None, None).is_ok());
    assert!(check_content_headers(Some("application/json; charset=utf-8"), None).is_ok());
    assert!(check_content_headers(Some("Application/JSON"), None).is_ok());
    assert_eq!(check_content_headers(Some("text/plain"), None).unwrap_err().status(), 415);
    assert_eq!(check_content_headers(Some("application/json"), Some("gzip")).unwrap_err().status(), 415);
    assert_eq!(check_content_headers(None, Some("identity")).unwrap_err().status(), 415);
}
