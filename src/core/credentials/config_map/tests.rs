use super::*;
use proptest::prelude::*;
use serde_json::json;

fn read(text: &str) -> Result<ConfigMap<'_>, serde_json::Error> {
    serde_json::from_str(text)
}

#[test]
fn a_map_is_read_in_place_and_written_back_in_the_upstreams_order_and_spelling() {
    let text = r#"{"z.key": "Z", "a\u002ekey": "\u0041", "n": 1, "o": {"x": [true, null]}}"#;
    let map = read(text).unwrap();
    assert!(matches!(map.entries.first(), Some((Cow::Borrowed("z.key"), Cow::Borrowed(_)))));
    assert!(matches!(map.entries.get(1), Some((Cow::Owned(k), _)) if k == "a.key"));
    assert_eq!(map.keys().collect::<Vec<_>>(), ["z.key", "a.key", "n", "o"]);
    assert_eq!(map.string("z.key").as_deref(), Some("Z"));
    assert!(matches!(map.string("z.key"), Some(Cow::Borrowed(_))));
    assert_eq!(map.string("a.key").as_deref(), Some("A"));
    assert_eq!(map.string("n"), None);
    assert_eq!(map.string("o"), None);
    assert_eq!(map.string("missing"), None);
    assert_eq!(map.raw("a.key"), Some(r#""\u0041""#));
    assert_eq!(serde_json::to_string(&map).unwrap(), r#"{"z.key":"Z","a.key":"\u0041","n":1,"o":{"x": [true, null]}}"#);
}

#[test]
fn a_duplicate_key_is_refused_in_small_and_large_maps() {
    assert!(read(r#"{"token": "a", "s3.endpoint": "e", "token": "b"}"#).is_err());
    assert!(read(r#"{"token": "a", "tok\u0065n": "b"}"#).is_err());
    assert!(read(r#"{"Token": "a", "token": "b"}"#).is_ok());
    let mut large: Vec<String> = (0..40).map(|i| format!(r#""k{i}": "v""#)).collect();
    assert!(read(&format!("{{{}}}", large.join(","))).is_ok());
    large.push(r#""k3": "again""#.to_owned());
    assert!(read(&format!("{{{}}}", large.join(","))).is_err());
}

#[test]
fn what_serde_json_refuses_is_refused() {
    for bad in ["{\"a\": \"\x01\"}", r#"{"a": tru}"#, r#"{"a": "b",}"#, r#"["a"]"#, r#"{"a" "b"}"#] {
        assert!(read(bad).is_err(), "{bad}");
        assert!(serde_json::from_str::<Map<String, Value>>(bad).is_err(), "{bad}");
    }
    assert!(serde_json::from_slice::<ConfigMap<'_>>(b"{\"a\": \"\xff\"}").is_err());
}

#[test]
fn setting_replaces_in_place_or_appends_and_removing_takes_the_key_away() {
    let mut map = read(r#"{"a": "1", "b": "2", "c": "3"}"#).unwrap();
    map.set("b", "two \"quoted\"");
    map.set("d", "4");
    map.remove("a");
    map.retain_keys(|k| k != "c");
    assert!(!map.has("a") && map.has("b"));
    assert_eq!(map.string("b").as_deref(), Some("two \"quoted\""));
    assert_eq!(serde_json::to_string(&map).unwrap(), r#"{"b":"two \"quoted\"","d":"4"}"#);
    assert_eq!(map.to_value(), json!({"b": "two \"quoted\"", "d": "4"}));
    assert_eq!(ConfigMap::from_value(&map.to_value()), Some(map));
    assert_eq!(ConfigMap::from_value(&json!(["a"])), None);
}

fn json_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9.\\-]{0,12}",
        any::<String>(),
        Just("\\".to_owned()),
        Just("\"".to_owned()),
        Just("\u{1}".to_owned()),
    ]
}

proptest! {
    /// The map reads what a `serde_json` map reads, value for value, for any unique keys and
    /// any string, number or nested values, however escaped.
    #[test]
    fn it_reads_as_a_serde_json_map_reads(
        entries in proptest::collection::btree_map(json_string(), prop_oneof![
            json_string().prop_map(Value::String),
            any::<i64>().prop_map(Value::from),
            Just(json!({"x": [1, "y", null]})),
        ], 0..24),
        ascii_only in any::<bool>(),
    ) {
        let value = Value::Object(entries.clone().into_iter().collect());
        let text = if ascii_only {
            // every non-ASCII character escaped, as some catalogs write them
            serde_json::to_string(&value).unwrap().chars().map(|c| if c.is_ascii() { c.to_string() } else {
                c.encode_utf16(&mut [0; 2]).iter().map(|u| format!("\\u{u:04x}")).collect()
            }).collect()
        } else {
            serde_json::to_string(&value).unwrap()
        };
        let map = read(&text).unwrap();
        prop_assert_eq!(map.to_value(), value);
        for (key, v) in &entries {
            let read = map.string(key);
            prop_assert_eq!(read.as_deref(), v.as_str());
            prop_assert!(map.has(key));
        }
        let written: Value = serde_json::from_str(&serde_json::to_string(&map).unwrap()).unwrap();
        prop_assert_eq!(written, Value::Object(entries.into_iter().collect()));
    }
}
