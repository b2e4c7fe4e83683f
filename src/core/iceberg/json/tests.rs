use super::*;

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// An Iceberg schema whose struct fields nest `levels` structs deep; each level costs three
/// levels of JSON (struct object, `fields` array, field object).
pub(crate) fn deep_schema(levels: usize) -> String {
    let mut ty = r#"{"type":"struct","fields":[]}"#.to_owned();
    for id in (1..=levels).rev() {
        ty = format!(r#"{{"type":"struct","fields":[{{"id":{id},"name":"f{id}","required":false,"type":{ty}}}]}}"#);
    }
    ty
}

#[test]
fn accepts_ordinary_documents() {
    for doc in [
        r#"{"a": [1, -2.5e3, true, false, null, "x"], "b": {}}"#,
        "  [] \n",
        "\"\\ud83d\\ude00\"",
        "0",
        r#"{"a": {"k": 1}, "b": {"k": 2}}"#,
    ] {
        assert_eq!(check_strict(doc.as_bytes()), Ok(()), "{doc}");
    }
}

#[test]
fn duplicate_keys_at_any_depth() {
    let top = br#"{"source": 1, "destination": 2, "source": 3}"#;
    assert_eq!(check_strict(top), Err(JsonError::DuplicateKey("source".into())));
    let rename = br#"{"source": {"namespace": ["a"], "name": "t"},
        "destination": {"namespace": ["a"], "name": "u"},
        "source": {"namespace": ["b"], "name": "t"}}"#;
    assert_eq!(check_strict(rename), Err(JsonError::DuplicateKey("source".into())));
    let in_transaction = br#"{"table-changes": [{"identifier":
        {"namespace": ["a"], "name": "t", "name": "u"}, "updates": []}]}"#;
    assert_eq!(check_strict(in_transaction), Err(JsonError::DuplicateKey("name".into())));
}

#[test]
fn duplicate_keys_compare_decoded() {
    assert_eq!(check_strict(br#"{"a": 1, "\u0061": 2}"#), Err(JsonError::DuplicateKey("a".into())));
    assert_eq!(check_strict(br#"{"\u00e9": 1, "\u00E9": 2}"#), Err(JsonError::DuplicateKey("é".into())));
    assert_eq!(check_strict(br#"{"a": 1, "A": 2}"#), Ok(()));
}

#[test]
fn duplicate_keys_in_large_objects() {
    let keys: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
    let ok = format!("{{{}}}", keys.join(","));
    assert_eq!(check_strict(ok.as_bytes()), Ok(()));
    let dup = format!("{{{}, \"k3\": 0}}", keys.join(","));
    assert_eq!(check_strict(dup.as_bytes()), Err(JsonError::DuplicateKey("k3".into())));
}

#[test]
fn trailing_data() {
    for doc in ["{} {}", "{}x", "[1]]", "1 2", "{}\n,"] {
        assert_eq!(check_strict(doc.as_bytes()), Err(JsonError::TrailingData), "{doc}");
    }
    assert_eq!(from_slice::<Vec<u8>>(b"[1] [2]"), Err(JsonError::TrailingData));
}

#[test]
fn depth_bound_is_256() {
    assert_eq!(check_strict(nested(MAX_DEPTH).as_bytes()), Ok(()));
    assert_eq!(check_strict(nested(MAX_DEPTH + 1).as_bytes()), Err(JsonError::TooDeep));
    let objects = format!("{}1{}", r#"{"a":"#.repeat(MAX_DEPTH), "}".repeat(MAX_DEPTH));
    assert_eq!(check_strict(objects.as_bytes()), Ok(()));
    let objects = format!("[{objects}]");
    assert_eq!(check_strict(objects.as_bytes()), Err(JsonError::TooDeep));
}

#[test]
fn very_deep_input_stops_early() {
    // Unbalanced on purpose: the walk must refuse at 257 before reading the rest.
    let doc = "[".repeat(1_000_000);
    assert_eq!(check_strict(doc.as_bytes()), Err(JsonError::TooDeep));
}

#[test]
fn deep_valid_schema_passes_beyond_serde_json_default_limit() {
    // 80 nested structs are 241 levels of JSON, well past serde_json's default of 128.
    let body = format!(r#"{{"name": "t", "schema": {}}}"#, deep_schema(80));
    assert_eq!(check_strict(body.as_bytes()), Ok(()));
    let value: serde_json::Value = from_slice(body.as_bytes()).unwrap();
    assert_eq!(value["name"], "t");
    #[derive(serde::Deserialize)]
    struct OnlyName {
        name: String,
    }
    assert_eq!(from_slice::<OnlyName>(body.as_bytes()).unwrap().name, "t");
}

#[test]
fn lone_surrogates_are_rejected() {
    for doc in [r#""\ud800""#, r#""\udc00""#, r#"{"a": "x\ud800y"}"#, r#""\ud800\u0041""#] {
        assert!(matches!(check_strict(doc.as_bytes()), Err(JsonError::Syntax(_))), "{doc}");
    }
    assert!(matches!(check_strict(br#"{"\ud800": 1}"#), Err(JsonError::Syntax(_))));
}

#[test]
fn non_json_numbers_are_rejected() {
    for doc in ["NaN", "[Infinity]", "-Infinity", "+1", "01", "[01]", "1.", ".5", "1e", "--1", "[0x10]", "1e400"] {
        assert!(matches!(check_strict(doc.as_bytes()), Err(JsonError::Syntax(_))), "{doc}");
    }
    // a number followed by anything is one value and trailing data
    assert_eq!(check_strict(b"0x10"), Err(JsonError::TrailingData));
}

#[test]
fn other_syntax_errors() {
    for doc in ["{'a': 1}", "{\"a\" 1}", "[1,]", "{\"a\":1,}", "\"\t\"", "[", "tru", "\u{feff}{}"] {
        assert!(matches!(check_strict(doc.as_bytes()), Err(JsonError::Syntax(_))), "{doc:?}");
    }
}

#[test]
fn empty_bodies() {
    assert_eq!(check_strict(b""), Err(JsonError::Empty));
    assert_eq!(check_strict(b" \r\n\t"), Err(JsonError::Empty));
}

#[test]
fn invalid_utf8() {
    assert_eq!(check_strict(b"\"\xff\""), Err(JsonError::InvalidUtf8));
    assert_eq!(check_strict(b"{\"a\": \"\xc3\"}"), Err(JsonError::InvalidUtf8));
}

#[test]
fn wrong_shape_is_a_type_error() {
    #[derive(Debug, serde::Deserialize)]
    struct Named {
        #[expect(dead_code, reason = "read only by the derived parser under test")]
        name: String,
    }
    assert!(matches!(from_slice::<Named>(br#"{"name": 1}"#), Err(JsonError::Type(_))));
    assert!(matches!(from_slice::<Named>(br#"{}"#), Err(JsonError::Type(m)) if m.contains("`name`")));
    assert!(matches!(from_slice::<Named>(br#"{"name": "a", "name": "b"}"#), Err(JsonError::DuplicateKey(_))));
}

#[test]
fn messages() {
    assert_eq!(JsonError::DuplicateKey("source".into()).to_string(), "duplicate key `source`");
    assert_eq!(JsonError::TooDeep.to_string(), "nesting is deeper than 256 levels");
    let long = format!(r#"{{"{k}": 1, "{k}": 2}}"#, k = "k".repeat(500));
    let Err(JsonError::DuplicateKey(shown)) = check_strict(long.as_bytes()) else { panic!() };
    assert_eq!(shown.chars().count(), QUOTE_LIMIT + 1);
    assert_eq!(quote("a\nb"), "a\\nb");
}

proptest::proptest! {
    /// simdutf8 reads the answer in blocks of 64 bytes and more: texts long enough to reach
    /// past several blocks, and any bytes spliced into them, are judged as std judges them.
    #[test]
    fn text_accepts_exactly_what_std_accepts(
        valid in "\\PC{0,200}",
        splice in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..6),
        at in proptest::prelude::any::<proptest::sample::Index>(),
    ) {
        let mut bytes = valid.clone().into_bytes();
        proptest::prop_assert_eq!(text(&bytes), Ok(valid.as_str()));
        let i = at.index(bytes.len() + 1);
        bytes.splice(i..i, splice);
        proptest::prop_assert_eq!(text(&bytes).ok(), std::str::from_utf8(&bytes).ok());
    }
}
