use super::*;
use crate::core::iceberg::Namespace;
use serde_json::json;

fn ident(ns: &[&str], name: &str) -> TableIdent {
    let ns = Namespace::new(ns.iter().map(|s| (*s).to_owned()).collect(), &[]).unwrap();
    TableIdent::new(ns, name.to_owned()).unwrap()
}

fn snap() -> Snapshot {
    let yaml = r#"
version: 1
metalake: lake
users: [{ name: ann }]
restrictions:
  - name: eu rows
    object: { type: SCHEMA, fullName: prod.pii }
    row_filter: { type: eq, term: region, value: EU }
  - name: pii
    object: { type: TABLE, fullName: prod.sales.customers }
    columns: { ssn: replace-with-null, address.city: mask-alphanum }
"#;
    crate::core::policy::load_str("p.yaml", yaml).unwrap().snapshot
}

#[test]
fn a_rename_keeps_only_restrictions_that_follow_it() {
    let s = snap();
    let customers = ident(&["sales"], "customers");
    assert_eq!(left_behind(&s, "prod", &customers, &ident(&["sales"], "copy")), ["pii"]);
    assert_eq!(left_behind(&s, "prod", &customers, &ident(&["pii"], "customers")), ["pii"]);
    assert_eq!(left_behind(&s, "prod", &ident(&["pii"], "people"), &ident(&["sales"], "people")), ["eu rows"]);
    assert!(left_behind(&s, "prod", &ident(&["pii"], "people"), &ident(&["pii"], "folk")).is_empty());
    assert!(left_behind(&s, "prod", &ident(&["sales"], "orders"), &ident(&["pii"], "orders")).is_empty());
    assert!(left_behind(&s, "other", &customers, &ident(&["sales"], "copy")).is_empty());
}

fn field(id: i64, name: &str) -> Value {
    json!({"id": id, "name": name, "required": false, "type": "string"})
}

fn schema(id: i64, fields: Vec<Value>) -> Value {
    json!({"type": "struct", "schema-id": id, "fields": fields})
}

/// Schema 0 had `ssn` as field 2; schema 1 (current) too, with `note` (3) added.
fn metadata() -> Value {
    json!({"format-version": 2, "current-schema-id": 1, "schemas": [
        schema(0, vec![field(1, "id"), field(2, "ssn")]),
        schema(1, vec![field(1, "id"), field(2, "ssn"), field(3, "note")]),
    ]})
}

fn pending(added: Vec<Value>, current: Vec<(i64, usize)>) -> Pending {
    Pending {
        table: ident(&["sales"], "customers"),
        labels: vec!["pii".into()],
        names: vec![ColumnPath::parse("ssn").unwrap(), ColumnPath::parse("address.city").unwrap()],
        changes: SchemaChanges { added, current, removes: false },
    }
}

#[test]
fn a_decoy_under_a_restricted_name_moves_it() {
    let decoy = schema(2, vec![field(1, "id"), field(2, "x"), field(4, "ssn")]);
    let got = moved(&pending(vec![decoy], vec![(-1, 1)]), &metadata()).unwrap();
    assert_eq!(got, Some(Moved { column: "ssn".into(), now: Some(2), after: 4 }));
}

#[test]
fn renaming_away_adding_new_names_and_dropping_move_nothing() {
    let away = schema(2, vec![field(1, "id"), field(2, "x")]);
    assert_eq!(moved(&pending(vec![away], vec![(-1, 1)]), &metadata()), Ok(None));
    let grown = schema(2, vec![field(1, "id"), field(2, "ssn"), field(3, "note"), field(5, "email")]);
    assert_eq!(moved(&pending(vec![grown], vec![(-1, 1)]), &metadata()), Ok(None));
    assert_eq!(moved(&pending(vec![], vec![(0, 0)]), &metadata()), Ok(None), "schema 0 has ssn as 2 too");
}

#[test]
fn a_name_given_back_after_a_drop_moves_it() {
    // current schema 2 dropped ssn; a new ssn (5) would let time travel read field 2 unmasked
    let mut m = metadata();
    m["schemas"].as_array_mut().unwrap().push(schema(2, vec![field(1, "id")]));
    m["current-schema-id"] = json!(2);
    let readded = schema(3, vec![field(1, "id"), field(5, "ssn")]);
    let got = moved(&pending(vec![readded], vec![(-1, 1)]), &m).unwrap();
    assert_eq!(got, Some(Moved { column: "ssn".into(), now: None, after: 5 }));
    // giving ssn back its own field moves nothing
    let restored = schema(3, vec![field(1, "id"), field(2, "ssn")]);
    assert_eq!(moved(&pending(vec![restored], vec![(-1, 1)]), &m), Ok(None));
    assert_eq!(moved(&pending(vec![], vec![(1, 0)]), &m), Ok(None), "back to schema 1");
}

#[test]
fn an_old_schema_where_the_name_is_another_column_moves_it() {
    let m = json!({"current-schema-id": 1, "schemas": [
        schema(0, vec![field(1, "id"), field(7, "ssn")]),
        schema(1, vec![field(1, "id"), field(2, "ssn")]),
    ]});
    assert!(moved(&pending(vec![], vec![(0, 0)]), &m).unwrap().is_some());
    // an id only the commit's added schema can get: each added schema may be it
    let decoy = schema(9, vec![field(8, "ssn")]);
    assert!(moved(&pending(vec![decoy], vec![(5, 1)]), &m).unwrap().is_some());
}

#[test]
fn nested_paths_follow_their_struct() {
    let address = |id: i64, city: i64| json!({"id": id, "name": "address", "required": false, "type": {"type": "struct", "fields": [field(city, "city")]}});
    let m = json!({"current-schema-id": 0, "schemas": [schema(0, vec![address(10, 11)])]});
    let decoy = schema(
        1,
        vec![
            json!({"id": 10, "name": "old", "required": false, "type": {"type": "struct", "fields": [field(11, "city")]}}),
            address(12, 13),
        ],
    );
    let got = moved(&pending(vec![decoy], vec![(-1, 1)]), &m).unwrap();
    assert_eq!(got.map(|m| m.column), Some("address.city".to_owned()));
}

#[test]
fn unreadable_metadata_is_not_guessed_at() {
    assert_eq!(moved(&pending(vec![], vec![(0, 0)]), &json!({"format-version": 2})), Err(Unreadable));
    assert_eq!(moved(&pending(vec![], vec![(0, 0)]), &json!({"schemas": 3})), Err(Unreadable));
    let v1 = json!({"format-version": 1, "schema": {"type": "struct", "fields": [field(2, "ssn")]}});
    let decoy = schema(1, vec![field(2, "x"), field(3, "ssn")]);
    assert!(moved(&pending(vec![decoy], vec![(-1, 1)]), &v1).unwrap().is_some());
}
