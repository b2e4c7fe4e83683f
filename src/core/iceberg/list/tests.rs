use super::*;
use crate::core::iceberg::json;
use crate::core::iceberg::{Namespace, TableIdent};

mod differential;
mod old;
mod scanner;
mod timing;
use serde_json::{Value, json};

fn raw<'p>(page: &'p ListPage<'_>) -> Vec<&'p str> {
    page.visible().collect()
}

fn all(kind: ListKind, body: &str) -> ListPage<'_> {
    filter(kind, body.as_bytes(), &[], |_| true).unwrap()
}

fn rendered(page: &ListPage, kind: ListKind, token: Option<&str>) -> Value {
    serde_json::from_slice(&page.render(kind, token)).unwrap()
}

fn table(ns: &[&str], name: &str) -> Entry {
    let ns = Namespace::new(ns.iter().map(|s| (*s).to_owned()).collect(), &[]).unwrap();
    Entry::Object(TableIdent::new(ns, name.to_owned()).unwrap())
}

#[test]
fn kinds_of_operations() {
    assert_eq!(ListKind::for_operation(OperationId::ListNamespaces), Some(ListKind::Namespaces));
    assert_eq!(ListKind::for_operation(OperationId::ListTables), Some(ListKind::Tables));
    assert_eq!(ListKind::for_operation(OperationId::ListViews), Some(ListKind::Views));
    assert_eq!(ListKind::for_operation(OperationId::ListFunctions), Some(ListKind::Functions));
    assert_eq!(ListKind::for_operation(OperationId::LoadTable), None);
    for op in OperationId::ALL {
        assert_eq!(ListKind::for_operation(op).is_some(), op.is_list(), "{op}");
    }
}

#[test]
fn tables_are_filtered_and_copied_byte_for_byte() {
    let body = r#"{"identifiers": [{"namespace": ["sales"], "name": "orders"},
        { "namespace" : [ "sales" ] ,  "name" : "\u006cineitem", "extra": {"k": [1, 2.50]} },
        {"namespace": ["sales"], "name": "salaries"}], "next-page-token": "n1"}"#;
    let mut asked = Vec::new();
    let page = filter(ListKind::Tables, body.as_bytes(), &[], |e| {
        asked.push(e.clone());
        !matches!(e, Entry::Object(i) if i.name == "salaries")
    })
    .unwrap();
    assert_eq!(
        raw(&page),
        [
            r#"{"namespace": ["sales"], "name": "orders"}"#,
            r#"{ "namespace" : [ "sales" ] ,  "name" : "\u006cineitem", "extra": {"k": [1, 2.50]} }"#
        ]
    );
    assert_eq!(asked, [table(&["sales"], "orders"), table(&["sales"], "lineitem"), table(&["sales"], "salaries")]);
    assert_eq!((page.len(), page.hidden(), page.next_page_token()), (2, 1, Some("n1")));
}

#[test]
fn views_read_like_tables() {
    let page = filter(
        ListKind::Views,
        br#"{"identifiers": [{"namespace": ["sales"], "name": "v_owned"}, {"namespace": ["sales"], "name": "v2"}]}"#,
        &[],
        |e| *e == table(&["sales"], "v2"),
    )
    .unwrap();
    assert_eq!(raw(&page), [r#"{"namespace": ["sales"], "name": "v2"}"#]);
    assert_eq!(page.next_page_token(), None);
}

#[test]
fn namespaces_are_arrays_of_levels() {
    let body = r#"{"namespaces": [["sales"], ["eu", "de"], [], ["x.y"], "sales", [1], ["a:b"], ["ok"]]}"#;
    let mut asked = 0;
    let page = filter(ListKind::Namespaces, body.as_bytes(), &[], |e| {
        asked += 1;
        !matches!(e, Entry::Namespace(ns) if ns.levels() == ["ok"])
    })
    .unwrap();
    assert_eq!(raw(&page), [r#"["sales"]"#, r#"["eu", "de"]"#]);
    assert_eq!((asked, page.hidden()), (3, 6), "malformed entries are hidden without asking");
    let page =
        filter(ListKind::Namespaces, br#"{"namespaces": [["a|b"], ["c"]]}"#, &["|".to_owned()], |_| true).unwrap();
    assert_eq!((raw(&page), page.hidden()), (vec![r#"["c"]"#], 1));
}

#[test]
fn functions_are_catalog_object_identifiers() {
    let body = r#"{"identifiers": [["sales", "f1"], ["sales", "x", "f2"], ["lonely"], [], ["a.b", "f"], ["s", ""]]}"#;
    let mut asked = Vec::new();
    let page = filter(ListKind::Functions, body.as_bytes(), &[], |e| {
        asked.push(e.clone());
        true
    })
    .unwrap();
    assert_eq!(raw(&page), [r#"["sales", "f1"]"#, r#"["sales", "x", "f2"]"#]);
    assert_eq!(asked, [table(&["sales"], "f1"), table(&["sales", "x"], "f2")]);
    assert_eq!(page.hidden(), 4);
}

#[test]
fn malformed_table_entries_are_hidden_without_asking() {
    let body = r#"{"identifiers": [{"name": "a"}, {"namespace": ["s"], "name": 5}, "x", null,
        {"namespace": ["s"], "name": ".."}, {"namespace": [], "name": "t"}, {"namespace": ["s.t"], "name": "u"},
        {"namespace": "s", "name": "t"}, ["s", "t"]]}"#;
    let mut asked = 0;
    let page = filter(ListKind::Tables, body.as_bytes(), &[], |_| {
        asked += 1;
        true
    })
    .unwrap();
    assert_eq!((asked, page.len(), page.hidden()), (0, 0, 9));
}

#[test]
fn render_keeps_other_fields_and_replaces_the_token() {
    let body = r#"{"extra": {"k" : [1,  2]}, "identifiers": [{"namespace": ["s"], "name": "a"},
        {"namespace": ["s"], "name": "b"}], "next-page-token": "upstream-secret", "z\"q": "\u00e9"}"#;
    let page = filter(ListKind::Tables, body.as_bytes(), &[], |e| *e == table(&["s"], "a")).unwrap();
    let out = page.render(ListKind::Tables, Some("wrapped\"token"));
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(text.contains(r#""extra":{"k" : [1,  2]}"#), "{text}");
    assert!(!text.contains("upstream-secret"));
    assert_eq!(
        serde_json::from_slice::<Value>(&out).unwrap(),
        json!({"extra": {"k": [1, 2]}, "identifiers": [{"namespace": ["s"], "name": "a"}],
            "next-page-token": "wrapped\"token", "z\"q": "é"})
    );
    let keys: Vec<&str> = ["\"extra\"", "\"identifiers\"", "\"next-page-token\"", "\"z\\\"q\""].into();
    let positions: Vec<usize> = keys.iter().map(|k| text.find(k).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "fields keep their order: {text}");
    let out = rendered(&page, ListKind::Tables, None);
    assert_eq!(out.get("next-page-token"), Some(&Value::Null), "the field the upstream wrote stays, as null");
    assert_eq!(json::check_strict(&page.render(ListKind::Tables, None)), Ok(()));
}

#[test]
fn render_adds_a_token_the_upstream_did_not_send() {
    let page = all(ListKind::Namespaces, r#"{"namespaces": [["a"]]}"#);
    assert_eq!(
        rendered(&page, ListKind::Namespaces, Some("t\n1")),
        json!({"namespaces": [["a"]], "next-page-token": "t\n1"})
    );
    assert_eq!(page.render(ListKind::Namespaces, None), br#"{"namespaces":[["a"]]}"#);
    let page = all(ListKind::Namespaces, r#"{"namespaces": [], "next-page-token": null}"#);
    assert_eq!(page.next_page_token(), None);
    assert_eq!(page.render(ListKind::Namespaces, None), br#"{"namespaces":[],"next-page-token":null}"#);
    assert!(page.is_empty());
}

#[test]
fn unreadable_responses_are_502() {
    for bad in [
        "",
        "{\"identifiers\": [",
        "[]",
        "{}",
        r#"{"identifiers": {}}"#,
        r#"{"identifiers": null}"#,
        r#"{"identifiers": [], "identifiers": []}"#,
        r#"{"identifiers": [{"namespace": ["s"], "name": "t", "name": "u"}]}"#,
        r#"{"identifiers": [], "next-page-token": 5}"#,
        r#"{"identifiers": []} {}"#,
        r#"{"identifiers": [NaN]}"#,
    ] {
        let e = filter(ListKind::Tables, bad.as_bytes(), &[], |_| true).unwrap_err();
        assert_eq!(crate::core::refused::CoreRefusal::List(e.clone()).status(), 502);
        assert!(e.to_string().starts_with("upstream list response is not valid: "), "{bad}: {e}");
    }
    assert_eq!(
        filter(ListKind::Namespaces, br#"{"identifiers": []}"#, &[], |_| true).unwrap_err(),
        ListError::MissingList("namespaces")
    );
    assert_eq!(
        filter(ListKind::Tables, br#"{"identifiers": [], "identifiers": []}"#, &[], |_| true).unwrap_err(),
        ListError::Json(JsonError::DuplicateKey("identifiers".into()))
    );
    let in_entry =
        br#"{"identifiers": [{"namespace": ["s"], "name": "t"}, {"namespace": ["s"], "name": "t", "\u006eame": "u"},
        {"namespace": ["s"], "name": "v"}]}"#;
    assert_eq!(
        filter(ListKind::Tables, in_entry, &[], |_| true).unwrap_err(),
        ListError::Json(JsonError::DuplicateKey("name".into()))
    );
    let in_extra = br#"{"identifiers": [{"namespace": ["s"], "name": "t", "x": {"k": 1, "k": 2}}]}"#;
    assert_eq!(
        filter(ListKind::Tables, in_extra, &[], |_| true).unwrap_err(),
        ListError::Json(JsonError::DuplicateKey("k".into()))
    );
    let in_malformed = br#"{"namespaces": [["a", {"k": 1, "k": 2}]]}"#;
    assert_eq!(
        filter(ListKind::Namespaces, in_malformed, &[], |_| true).unwrap_err(),
        ListError::Json(JsonError::DuplicateKey("k".into()))
    );
    let in_other = br#"{"identifiers": [], "extra": {"k": 1, "k": 2}}"#;
    assert_eq!(
        filter(ListKind::Tables, in_other, &[], |_| true).unwrap_err(),
        ListError::Json(JsonError::DuplicateKey("k".into()))
    );
    let surrogate = br#"{"identifiers": [{"namespace": ["s"], "name": "\ud800"}]}"#;
    assert!(matches!(filter(ListKind::Tables, surrogate, &[], |_| true), Err(ListError::Json(JsonError::Syntax(_)))));
}

#[test]
fn append_joins_pages() {
    let mut page =
        all(ListKind::Tables, r#"{"identifiers": [{"namespace": ["s"], "name": "a"}], "next-page-token": "p2"}"#);
    let next = filter(
        ListKind::Tables,
        br#"{"identifiers": [{"namespace": ["s"], "name": "b"}, {"namespace": ["s"], "name": "c"}]}"#,
        &[],
        |e| *e != table(&["s"], "c"),
    )
    .unwrap();
    page.append(next);
    assert_eq!((page.len(), page.hidden(), page.next_page_token()), (2, 1, None));
    assert_eq!(
        rendered(&page, ListKind::Tables, None),
        json!({"identifiers": [{"namespace": ["s"], "name": "a"}, {"namespace": ["s"], "name": "b"}],
            "next-page-token": null})
    );
}

#[test]
fn large_lists_filter_quickly() {
    let entries: Vec<String> =
        (0..10_000).map(|i| format!(r#"{{"namespace":["sales"],"name":"table_{i:05}"}}"#)).collect();
    let body = format!(r#"{{"identifiers":[{}],"next-page-token":"t"}}"#, entries.join(","));
    let start = std::time::Instant::now();
    let page =
        filter(ListKind::Tables, body.as_bytes(), &[], |e| matches!(e, Entry::Object(i) if i.name.ends_with('0')))
            .unwrap();
    let elapsed = start.elapsed();
    assert_eq!((page.len(), page.hidden()), (1_000, 9_000));
    // generous: an unoptimized build is many times slower than the ~1 ms of a release build
    assert!(elapsed < std::time::Duration::from_secs(2), "{elapsed:?}");
}

#[test]
fn depth_is_counted_over_the_whole_response() {
    let deep = |k: usize| "[".repeat(k) + &"]".repeat(k);
    // top object, list array, entry object: three levels before the extra field's value
    let entry = |k: usize| format!(r#"{{"identifiers": [{{"namespace": ["s"], "name": "t", "x": {}}}]}}"#, deep(k));
    assert_eq!(all(ListKind::Tables, &entry(253)).len(), 1);
    assert_eq!(filter(ListKind::Tables, entry(254).as_bytes(), &[], |_| true).unwrap_err(), JsonError::TooDeep.into());
    let malformed = |k: usize| format!(r#"{{"namespaces": [[{}]]}}"#, deep(k));
    assert_eq!(all(ListKind::Namespaces, &malformed(253)).hidden(), 1);
    assert!(filter(ListKind::Namespaces, malformed(254).as_bytes(), &[], |_| true).is_err());
    let other = |k: usize| format!(r#"{{"identifiers": [], "x": {}}}"#, deep(k));
    assert!(filter(ListKind::Tables, other(255).as_bytes(), &[], |_| true).is_ok());
    assert_eq!(filter(ListKind::Tables, other(256).as_bytes(), &[], |_| true).unwrap_err(), JsonError::TooDeep.into());
}

#[test]
fn strictness_agrees_with_check_strict() {
    let deep = |k: usize| "[".repeat(k) + &"]".repeat(k);
    let docs = [
        r#"{"identifiers": [{"namespace": ["s"], "name": "t"}]}"#.to_owned(),
        r#"{"identifiers": [{"namespace": ["s"], "name": "t", "name": "u"}]}"#.to_owned(),
        r#"{"identifiers": [{"namespace": ["s"], "name": "t", "x": 1, "\u0078": 2}]}"#.to_owned(),
        r#"{"identifiers": [[{"a": 1, "a": 1}]]}"#.to_owned(),
        r#"{"identifiers": [5, "x", null, {"a": {"b": 1, "b": 2}}]}"#.to_owned(),
        r#"{"identifiers": ["\udc00"]}"#.to_owned(),
        r#"{"identifiers": [], "x": "\ud800"}"#.to_owned(),
        r#"{"identifiers": [], "next-page-token": "\ud800"}"#.to_owned(),
        r#"{"identifiers": [1e400]}"#.to_owned(),
        r#"{"identifiers": [-0.0, 1E+2]}"#.to_owned(),
        r#"{"identifiers": []}  "#.to_owned(),
        r#"{"identifiers": []} ,"#.to_owned(),
        format!(r#"{{"identifiers": [{}]}}"#, deep(254)),
        format!(r#"{{"identifiers": [{}]}}"#, deep(255)),
        format!(r#"{{"identifiers": [{{"namespace": ["s"], "name": "t", "z": {}}}]}}"#, deep(253)),
        format!(r#"{{"identifiers": [{{"namespace": ["s"], "name": "t", "z": {}}}]}}"#, deep(254)),
    ];
    for doc in &docs {
        let strict = json::check_strict(doc.as_bytes());
        let filtered = filter(ListKind::Tables, doc.as_bytes(), &[], |_| true);
        match (&strict, &filtered) {
            (Ok(()), Ok(_)) => {}
            (Err(s), Err(ListError::Json(f))) => {
                assert_eq!(std::mem::discriminant(s), std::mem::discriminant(f), "{doc}: {s} vs {f}")
            }
            _ => panic!("{doc}: check_strict {strict:?}, filter {filtered:?}"),
        }
    }
}
