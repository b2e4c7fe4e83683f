use super::*;
use serde_json::{Value, json};

fn raw(page: &ListPage) -> Vec<&str> {
    page.visible().map(RawValue::get).collect()
}

fn all(kind: ListKind, body: &str) -> ListPage {
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
    assert!(out.get("next-page-token").is_none());
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
    assert_eq!(page.render(ListKind::Namespaces, None), br#"{"namespaces":[]}"#);
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
        assert_eq!(e.status(), 502);
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
        json!({"identifiers": [{"namespace": ["s"], "name": "a"}, {"namespace": ["s"], "name": "b"}]})
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
