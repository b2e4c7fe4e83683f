use super::*;
use crate::core::iceberg::json::JsonError;
use crate::core::iceberg::names::NameRules;
use crate::core::iceberg::routes::Query;
use crate::core::iceberg::{Namespace, TableIdent};
use crate::core::refused::body_error_kind;

fn body_status(e: &BodyError) -> u16 {
    body_error_kind(e).status()
}

fn route(op: OperationId) -> Route {
    Route {
        operation: op,
        prefix: Some("prod".into()),
        prefix_segments: 1,
        namespace: Some(Namespace::new(vec!["sales".into()], &[]).unwrap()),
        name: Some("orders".into()),
        plan_id: None,
        query: Query::default(),
        canonical_path: String::new(),
    }
}

fn inspect_str(op: OperationId, body: &str) -> Result<Body, BodyError> {
    inspect(&route(op), body.as_bytes(), &NameRules::default())
}

fn ident(ns: &[&str], name: &str) -> TableIdent {
    let ns = Namespace::new(ns.iter().map(|s| (*s).to_owned()).collect(), &[]).unwrap();
    TableIdent::new(ns, name.to_owned()).unwrap()
}

fn update(body: &str) -> TableUpdate {
    match inspect_str(OperationId::UpdateTable, body) {
        Ok(Body::UpdateTable(u)) => u,
        other => panic!("{body}: {other:?}"),
    }
}

fn moves(updates: &str) -> bool {
    update(&format!(r#"{{"requirements": [], "updates": [{updates}]}}"#)).moves_data()
}

fn status(op: OperationId, body: &str) -> u16 {
    match inspect_str(op, body) {
        Ok(b) => panic!("{body} was accepted as {b:?}"),
        Err(e) => body_status(&e),
    }
}

#[test]
fn create_namespace_checks_levels_like_the_path() {
    let b = inspect_str(OperationId::CreateNamespace, r#"{"namespace": ["eu", "fr"], "properties": {}}"#).unwrap();
    assert_eq!(b, Body::CreateNamespace { namespace: ident(&["eu", "fr"], "x").namespace, location: false });
    for bad in [r#"{"namespace": ["a.b"]}"#, r#"{"namespace": []}"#, r#"{"namespace": ["a:b"]}"#, r#"{}"#] {
        assert_eq!(status(OperationId::CreateNamespace, bad), 400, "{bad}");
    }
    let e = inspect_str(OperationId::CreateNamespace, r#"{"namespace": ["a.b"]}"#).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid `namespace` in request body: namespace level `a.b` contains `.`, which full names use to join levels"
    );
    assert_eq!(status(OperationId::CreateNamespace, r#"{"namespace": "a"}"#), 400);
    assert_eq!(status(OperationId::CreateNamespace, r#"{"namespace": [1]}"#), 400);
    let separators = ["|".to_owned()];
    let rules = NameRules { separators: &separators, fold_case: false };
    assert!(inspect(&route(OperationId::CreateNamespace), br#"{"namespace": ["a|b"]}"#, &rules).is_err());
}

#[test]
fn create_table_explicit_location_is_any_non_null_value() {
    let create = |body: &str| inspect_str(OperationId::CreateTable, body).unwrap();
    let expect = |explicit_location, stage_create, locations: &[&str]| Body::CreateTable {
        name: "t".into(),
        explicit_location,
        stage_create,
        locations: locations.iter().map(|l| (*l).to_owned()).collect(),
    };
    assert_eq!(create(r#"{"name": "t", "location": ""}"#), expect(true, false, &[""]));
    assert_eq!(create(r#"{"name": "t", "location": "s3://other/t"}"#), expect(true, false, &["s3://other/t"]));
    assert_eq!(create(r#"{"name": "t", "location": null, "stage-create": true}"#), expect(false, true, &[]));
    assert_eq!(create(r#"{"name": "t", "schema": {"type": "struct", "fields": []}}"#), expect(false, false, &[]));
    assert_eq!(create(r#"{"name": "t", "stage-create": null, "future-field": [1]}"#), expect(false, false, &[]));
    assert_eq!(
        create(r#"{"name": "t", "properties": {"Write.Data.Path": "s3://x/d", "owner": "ann"}}"#),
        expect(true, false, &["s3://x/d"]),
        "a location property's value is a chosen location, whatever the key's case"
    );
    for bad in [
        r#"{"location": "s3://x"}"#,
        r#"{"name": 5}"#,
        r#"{"name": ".."}"#,
        r#"{"name": "t", "location": 5}"#,
        r#"{"name": "t", "stage-create": "yes"}"#,
        r#"{"name": "t", "properties": {"write.data.path": 5}}"#,
        r#"{"name": "t", "properties": {"location": null}}"#,
    ] {
        assert_eq!(status(OperationId::CreateTable, bad), 400, "{bad}");
    }
}

#[test]
fn create_table_accepts_a_deep_schema() {
    let mut ty = r#"{"type": "struct", "fields": []}"#.to_owned();
    for id in 0..80 {
        ty = format!(
            r#"{{"type": "struct", "fields": [{{"id": {id}, "name": "f", "required": false, "type": {ty}}}]}}"#
        );
    }
    let b = inspect_str(OperationId::CreateTable, &format!(r#"{{"name": "t", "schema": {ty}}}"#)).unwrap();
    assert!(matches!(b, Body::CreateTable { explicit_location: false, .. }));
}

#[test]
fn register_needs_name_and_metadata_location() {
    let ok = r#"{"name": "t", "metadata-location": "s3://b/m.json", "overwrite": true}"#;
    assert_eq!(inspect_str(OperationId::RegisterTable, ok).unwrap(), Body::RegisterTable { name: "t".into() });
    assert_eq!(inspect_str(OperationId::RegisterView, ok).unwrap(), Body::RegisterView { name: "t".into() });
    assert_eq!(status(OperationId::RegisterTable, r#"{"name": "t"}"#), 400);
    assert_eq!(status(OperationId::RegisterView, r#"{"metadata-location": "s3://b/m.json"}"#), 400);
}

#[test]
fn every_location_property_moves_data() {
    assert!(moves(r#"{"action": "set-location", "location": "s3://x"}"#));
    for key in LOCATION_PROPERTIES {
        assert!(moves(&format!(r#"{{"action": "set-properties", "updates": {{"{key}": "s3://x"}}}}"#)), "{key}");
        assert!(moves(&format!(r#"{{"action": "remove-properties", "removals": ["{key}"]}}"#)), "{key}");
    }
    assert!(!moves(r#"{"action": "set-properties", "updates": {"comment": "nightly"}}"#));
    assert!(!moves(r#"{"action": "remove-properties", "removals": ["comment"]}"#));
    assert!(!moves(r#"{"action": "upgrade-format-version", "format-version": 2}"#));
    assert!(!update(r#"{"requirements": [], "updates": []}"#).moves_data());
    assert!(!update("{}").moves_data());
}

#[test]
fn moves_are_seen_as_the_upstream_reads_them() {
    // Iceberg lower-cases `action` and still reads the legacy `updated` and `removed` fields.
    assert!(moves(r#"{"action": "SET-LOCATION", "location": "s3://x"}"#));
    assert!(moves(r#"{"action": "Set-Properties", "updates": {"write.data.path": "s3://x"}}"#));
    assert!(moves(r#"{"action": "set-properties", "updated": {"write.data.path": "s3://x"}}"#));
    assert!(moves(r#"{"action": "set-properties", "updates": {"c": "x"}, "updated": {"location": "s3://x"}}"#));
    assert!(moves(r#"{"action": "remove-properties", "removed": ["write.metadata.path"]}"#));
    assert!(moves(r#"{"action": "set-properties", "updates": {"WRITE.DATA.PATH": "s3://x"}}"#));
    assert!(moves(r#"{"action": "set-properties", "updates": {"\u006cocation": "s3://x"}}"#));
    // a move anywhere in the list counts
    assert!(moves(r#"{"action": "assign-uuid", "uuid": "u"}, {"action": "set-location", "location": "s3://x"}"#));
}

#[test]
fn malformed_updates_are_400() {
    for bad in [
        r#"{"updates": {}}"#,
        r#"{"updates": [{"location": "s3://x"}]}"#,
        r#"{"updates": [{"action": 1}]}"#,
        r#"{"updates": [{"action": "set-properties"}]}"#,
        r#"{"updates": [{"action": "set-properties", "updates": ["location"]}]}"#,
        r#"{"updates": [{"action": "remove-properties", "removals": {"location": "x"}}]}"#,
        r#"{"updates": [{"action": "remove-properties", "removals": [1]}]}"#,
        r#"{"requirements": [{"kind": "assert-create"}]}"#,
        r#"{"requirements": [{"type": 5}]}"#,
        r#"{"requirements": {}}"#,
    ] {
        assert_eq!(status(OperationId::UpdateTable, bad), 400, "{bad}");
    }
    let e = inspect_str(OperationId::UpdateTable, r#"{"updates": [{"action": "set-properties", "updates": 1}]}"#);
    assert_eq!(
        e.unwrap_err().to_string(),
        "invalid request body: `updates[0].updates` must be an object of properties"
    );
    // actions icegate does not read may use these names for any shape
    assert!(!moves(r#"{"action": "future-action", "updates": [1, 2], "removals": 3}"#));
}

#[test]
fn assert_create_marks_the_commit_of_a_staged_create() {
    let u = update(
        r#"{"requirements": [{"type": "assert-create"}], "updates": [{"action": "set-location", "location": "s3://x"}]}"#,
    );
    assert_eq!(
        u,
        TableUpdate {
            asserts_create: true,
            set_locations: vec!["s3://x".into()],
            location_properties: false,
            property_locations: vec![],
            schemas: Default::default(),
        }
    );
    assert!(update(r#"{"requirements": [{"type": "ASSERT-CREATE"}]}"#).asserts_create);
    assert!(
        update(r#"{"requirements": [{"type": "assert-table-uuid", "uuid": "u"}, {"type": "assert-create"}]}"#)
            .asserts_create
    );
    assert!(!update(r#"{"requirements": [{"type": "assert-table-uuid", "uuid": "u"}]}"#).asserts_create);
}

#[test]
fn a_commit_identifier_must_be_the_path() {
    let same = r#"{"identifier": {"namespace": ["sales"], "name": "orders"}, "requirements": [], "updates": []}"#;
    assert_eq!(update(same), TableUpdate::default());
    assert_eq!(update(r#"{"identifier": null, "updates": []}"#), TableUpdate::default());
    let other = r#"{"identifier": {"namespace": ["sales"], "name": "other"}, "updates": []}"#;
    let e = inspect_str(OperationId::UpdateTable, other).unwrap_err();
    assert_eq!(e.to_string(), "body identifier `sales.other` differs from the path `sales.orders`");
    assert_eq!(body_status(&e), 400);
    let nested = r#"{"identifier": {"namespace": ["sales", "x"], "name": "orders"}}"#;
    assert!(matches!(inspect_str(OperationId::UpdateTable, nested), Err(BodyError::IdentifierMismatch { .. })));
    assert_eq!(status(OperationId::UpdateTable, r#"{"identifier": {"namespace": ["sa.les"], "name": "orders"}}"#), 400);
    assert_eq!(status(OperationId::UpdateTable, r#"{"identifier": {"name": "orders"}}"#), 400);
}

#[test]
fn replace_view_checks_only_its_identifier() {
    let ok = r#"{"identifier": {"namespace": ["sales"], "name": "orders"},
        "requirements": [{"type": "assert-view-uuid", "uuid": "u"}],
        "updates": [{"action": "add-view-version", "view-version": {}}, {"action": "set-properties", "updates": {}}]}"#;
    assert_eq!(inspect_str(OperationId::ReplaceView, ok).unwrap(), Body::ReplaceView);
    assert_eq!(inspect_str(OperationId::ReplaceView, r#"{"updates": []}"#).unwrap(), Body::ReplaceView);
    let other = r#"{"identifier": {"namespace": ["hr"], "name": "orders"}, "updates": []}"#;
    assert!(matches!(inspect_str(OperationId::ReplaceView, other), Err(BodyError::IdentifierMismatch { .. })));
}

#[test]
fn renames_read_both_identifiers() {
    let body =
        r#"{"source": {"namespace": ["sales"], "name": "t"}, "destination": {"namespace": ["audit"], "name": "u"}}"#;
    let expect = Body::Rename { source: ident(&["sales"], "t"), destination: ident(&["audit"], "u") };
    assert_eq!(inspect_str(OperationId::RenameTable, body).unwrap(), expect);
    assert_eq!(inspect_str(OperationId::RenameView, body).unwrap(), expect);
    for bad in [
        r#"{"source": {"namespace": ["sales"], "name": "t"}}"#,
        r#"{"source": {"namespace": ["a.b"], "name": "t"}, "destination": {"namespace": ["b"], "name": "t"}}"#,
        r#"{"source": {"namespace": ["a"], "name": ""}, "destination": {"namespace": ["b"], "name": "t"}}"#,
        r#"{"source": ["a", "t"], "destination": {"namespace": ["b"], "name": "t"}}"#,
    ] {
        assert_eq!(status(OperationId::RenameTable, bad), 400, "{bad}");
    }
}

#[test]
fn duplicate_keys_in_renames_and_transactions() {
    let two_sources = r#"{"source": {"namespace": ["a"], "name": "t"}, "destination": {"namespace": ["b"], "name": "t"},
        "source": {"namespace": ["x"], "name": "t"}}"#;
    let e = inspect_str(OperationId::RenameTable, two_sources).unwrap_err();
    assert_eq!(e.to_string(), "invalid request body: duplicate key `source`");
    let escaped = r#"{"source": {"namespace": ["a"], "name": "t"}, "destination": {"namespace": ["b"], "name": "t"},
        "\u0073ource": {"namespace": ["x"], "name": "t"}}"#;
    assert!(matches!(inspect_str(OperationId::RenameTable, escaped), Err(BodyError::Json(JsonError::DuplicateKey(_)))));
    let nested = r#"{"table-changes": [{"identifier": {"namespace": ["a"], "name": "t", "namespace": ["b"]}}]}"#;
    let e = inspect_str(OperationId::CommitTransaction, nested).unwrap_err();
    assert_eq!(e.to_string(), "invalid request body: duplicate key `namespace`");
}

#[test]
fn transactions_read_every_change() {
    let body = r#"{"table-changes": [
        {"identifier": {"namespace": ["sales"], "name": "a"}, "requirements": [], "updates": []},
        {"identifier": {"namespace": ["sales"], "name": "b"}, "requirements": [{"type": "assert-create"}],
         "updates": [{"action": "set-location", "location": "s3://x"}]},
        {"identifier": {"namespace": ["audit"], "name": "a"},
         "updates": [{"action": "remove-properties", "removals": ["write.data.path"]}]}]}"#;
    let Body::CommitTransaction(changes) = inspect_str(OperationId::CommitTransaction, body).unwrap() else { panic!() };
    let got: Vec<_> = changes.iter().map(|c| (c.identifier.to_string(), c.update.clone())).collect();
    assert_eq!(
        got,
        [
            ("sales.a".to_owned(), TableUpdate::default()),
            (
                "sales.b".to_owned(),
                TableUpdate {
                    asserts_create: true,
                    set_locations: vec!["s3://x".into()],
                    location_properties: false,
                    property_locations: vec![],
                    schemas: Default::default(),
                }
            ),
            (
                "audit.a".to_owned(),
                TableUpdate {
                    asserts_create: false,
                    set_locations: vec![],
                    location_properties: true,
                    property_locations: vec![],
                    schemas: Default::default(),
                }
            ),
        ]
    );
}

#[test]
fn transactions_need_distinct_identified_tables() {
    let twice = r#"{"table-changes": [{"identifier": {"namespace": ["a"], "name": "t"}},
        {"identifier": {"namespace": ["a"], "name": "t"}, "updates": []}]}"#;
    let e = inspect_str(OperationId::CommitTransaction, twice).unwrap_err();
    assert_eq!(e.to_string(), "table `a.t` appears more than once in `table-changes`");
    assert_eq!(body_status(&e), 400);
    let missing = r#"{"table-changes": [{"identifier": {"namespace": ["a"], "name": "t"}}, {"updates": []}]}"#;
    assert!(matches!(inspect_str(OperationId::CommitTransaction, missing), Err(BodyError::MissingIdentifier(1))));
    let null = r#"{"table-changes": [{"identifier": null, "updates": []}]}"#;
    assert!(matches!(inspect_str(OperationId::CommitTransaction, null), Err(BodyError::MissingIdentifier(0))));
    assert_eq!(status(OperationId::CommitTransaction, r#"{}"#), 400);
    assert_eq!(status(OperationId::CommitTransaction, r#"{"table-changes": {}}"#), 400);
    let bad_update = r#"{"table-changes": [{"identifier": {"namespace": ["a"], "name": "t"},
        "updates": [{"action": "set-properties"}]}]}"#;
    let e = inspect_str(OperationId::CommitTransaction, bad_update).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid request body: `table-changes[0].updates[0].updates` must be an object of properties"
    );
}

#[test]
fn sign_requests_keep_the_method_as_sent() {
    let body = r#"{"region": "us-east-1", "method": "options", "uri": "s3://b/k", "headers": {"Host": ["b"], "X-Amz-Copy-Source": ["src/k"], "x-amz-copy-source": ["src/j"]},
        "provider": "gcs", "body": "<Delete/>", "properties": {}}"#;
    let Body::SignRequest(s) = inspect_str(OperationId::SignRequest, body).unwrap() else { panic!() };
    assert_eq!(
        s,
        SignRequest {
            region: "us-east-1".into(),
            method: "options".into(),
            uri: "s3://b/k".into(),
            provider: Some("gcs".into()),
            body: Some("<Delete/>".into()),
            copy_sources: vec!["src/k".into(), "src/j".into()],
            hosts: vec!["b".into()],
            headers: vec![
                ("Host".into(), vec!["b".into()]),
                ("X-Amz-Copy-Source".into(), vec!["src/k".into()]),
                ("x-amz-copy-source".into(), vec!["src/j".into()]),
            ],
            properties: Some(Default::default()),
        }
    );
    let plain = r#"{"region": "r", "method": "GET", "uri": "s3://b/k", "headers": {}}"#;
    let Body::SignRequest(s) = inspect_str(OperationId::SignRequest, plain).unwrap() else { panic!() };
    assert_eq!((s.provider, s.body), (None, None));
    for bad in [
        r#"{"region": "r", "method": "GET", "uri": "s3://b/k"}"#,
        r#"{"region": "r", "method": "GET", "uri": "s3://b/k", "headers": []}"#,
        r#"{"region": "r", "method": "GET", "uri": "s3://b/k", "headers": null}"#,
        r#"{"method": "GET", "uri": "s3://b/k", "headers": {}}"#,
        r#"{"region": "r", "method": 1, "uri": "s3://b/k", "headers": {}}"#,
        r#"{"region": "r", "method": "GET", "uri": "s3://b/k", "headers": {}, "provider": 1}"#,
        r#"{"region": "r", "method": "GET", "uri": "s3://b/k", "headers": {"Host": "b"}}"#,
        r#"{"region": "r", "method": "GET", "uri": "s3://b/k", "headers": {}, "properties": {"a": 1}}"#,
        r#"{"region": "r", "method": "GET", "uri": "s3://b/k", "headers": {}, "properties": []}"#,
    ] {
        assert_eq!(status(OperationId::SignRequest, bad), 400, "{bad}");
    }
}

#[test]
fn views_need_a_valid_name() {
    let b =
        inspect_str(OperationId::CreateView, r#"{"name": "v", "schema": {}, "view-version": {}, "properties": {}}"#);
    assert_eq!(b.unwrap(), Body::CreateView { name: "v".into() });
    assert_eq!(status(OperationId::CreateView, r#"{"name": "a\u0001b"}"#), 400);
    assert_eq!(status(OperationId::CreateView, r#"{"name": null}"#), 400);
}

#[test]
fn strict_json_errors_are_400() {
    for bad in [
        " ",
        "{} {}",
        r#"{"name": "t", "name": "u"}"#,
        r#"{"name": "\ud800"}"#,
        r#"{"name": "t", "n": NaN}"#,
        r#"{"name": "t"} trailing"#,
        "[1, 2]",
    ] {
        assert_eq!(status(OperationId::CreateView, bad), 400, "{bad}");
    }
    let deep = format!(r#"{{"name": "t", "x": {}{}}}"#, "[".repeat(256), "]".repeat(256));
    assert_eq!(status(OperationId::CreateView, &deep), 400);
    assert!(matches!(
        inspect(&route(OperationId::CreateView), b"{\"name\": \"\xff\"}", &NameRules::default()),
        Err(BodyError::Json(JsonError::InvalidUtf8))
    ));
}

#[test]
fn missing_and_uninspected_bodies() {
    assert!(matches!(inspect_str(OperationId::CreateTable, ""), Err(BodyError::Missing("createTable"))));
    assert!(matches!(inspect_str(OperationId::LoadTable, "{}"), Err(BodyError::NotInspected("loadTable"))));
    assert!(matches!(inspect_str(OperationId::ReportMetrics, "{}"), Err(BodyError::NotInspected(_))));
    let mut no_path = route(OperationId::UpdateTable);
    no_path.name = None;
    let body = br#"{"identifier": {"namespace": ["sales"], "name": "orders"}}"#;
    assert!(matches!(inspect(&no_path, body, &NameRules::default()), Err(BodyError::NoPathObject(_))));
}

#[test]
fn content_headers_must_say_plain_json() {
    for ok in [None, Some("application/json"), Some("Application/JSON"), Some("application/json; charset=utf-8")] {
        assert!(check_content_headers(ok, None).is_ok(), "{ok:?}");
    }
    assert!(check_content_headers(Some("application/json ;charset=\"UTF-8\"; q=1;"), None).is_ok());
    for bad in [
        "text/plain",
        "application/jsonx",
        "application/json-patch+json",
        "",
        "*/*",
        "application/json; charset=latin1",
        "application/json; charset",
    ] {
        let e = check_content_headers(Some(bad), None).unwrap_err();
        assert!(matches!(e, BodyError::UnsupportedMediaType(_)), "{bad}");
        assert_eq!(body_status(&e), 415);
    }
    for encoding in ["gzip", "identity", ""] {
        let e = check_content_headers(Some("application/json"), Some(encoding)).unwrap_err();
        assert!(matches!(e, BodyError::UnsupportedEncoding(_)), "{encoding}");
        assert_eq!(body_status(&e), 415);
    }
    assert_eq!(
        check_content_headers(None, Some("gzip")).unwrap_err().to_string(),
        "request body has content encoding `gzip`; icegate reads only unencoded bodies"
    );
}

#[test]
fn statuses_and_message_style() {
    assert_eq!(body_status(&BodyError::TooLarge { limit: 10 }), 413);
    assert_eq!(BodyError::TooLarge { limit: 10 }.to_string(), "request body is larger than the limit of 10 bytes");
    let samples = [
        BodyError::Missing("createTable"),
        BodyError::TooLarge { limit: 1 },
        BodyError::UnsupportedEncoding("gzip".into()),
        BodyError::UnsupportedMediaType("text/plain".into()),
        BodyError::Json(JsonError::TrailingData),
        BodyError::MissingIdentifier(0),
        BodyError::RepeatedTable("a.t".into()),
        BodyError::NotInspected("loadTable"),
        BodyError::NoPathObject("updateTable"),
    ];
    for e in samples {
        let m = e.to_string();
        assert!(m.starts_with(|c: char| c.is_lowercase() || c == '`'), "{m}");
        assert!(!m.ends_with('.'), "{m}");
    }
}

#[test]
fn create_table_with_a_location_property_counts_as_an_explicit_location() {
    // Without this, CREATE_TABLE alone could place a table's data anywhere via its properties.
    for key in
        ["write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path", "location"]
    {
        let body = format!(r#"{{"name":"t","properties":{{"{key}":"s3://elsewhere/x"}}}}"#);
        let b = inspect(&route(OperationId::CreateTable), body.as_bytes(), &NameRules::default()).unwrap();
        assert!(matches!(b, Body::CreateTable { explicit_location: true, .. }), "{key}");
    }
    let b = inspect(
        &route(OperationId::CreateTable),
        br#"{"name":"t","properties":{"comment":"x"}}"#,
        &NameRules::default(),
    )
    .unwrap();
    assert!(matches!(b, Body::CreateTable { explicit_location: false, .. }));
}

#[test]
fn schema_updates_are_read_with_their_types() {
    let u = update(
        r#"{"updates": [{"action": "add-schema", "schema": {"type": "struct", "schema-id": 1, "fields": []}},
            {"action": "SET-CURRENT-SCHEMA", "schema-id": -1}, {"action": "set-current-schema", "schema-id": 0},
            {"action": "remove-schemas", "schema-ids": [0]}, {"action": "append"}]}"#,
    );
    assert_eq!(u.schemas.added.len(), 1);
    assert_eq!(u.schemas.current, [(-1, 1), (0, 1)]);
    assert!(u.schemas.removes && u.schemas.any());
    assert!(!update(r#"{"updates": [{"action": "add-schema", "schema": {"fields": []}}]}"#).schemas.any());
    for bad in [
        r#"{"updates": [{"action": "add-schema", "schema": [1]}]}"#,
        r#"{"updates": [{"action": "add-schema"}]}"#,
        r#"{"updates": [{"action": "set-current-schema", "schema-id": "1"}]}"#,
        r#"{"updates": [{"action": "set-current-schema"}]}"#,
    ] {
        assert!(matches!(inspect_str(OperationId::UpdateTable, bad), Err(BodyError::Field { .. })), "{bad}");
    }
}
