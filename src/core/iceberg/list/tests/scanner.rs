//! The scanner's edge cases, by name: what it must take itself (so that the usual response is
//! fast), and what it must leave to the general reading or judge exactly as it does.

use super::super::*;
use super::differential::compare;

/// Whether the scanner took `body`, after checking the result is the old filter's.
fn scanned(kind: ListKind, body: &str) -> bool {
    match compare(kind, &[], body.as_bytes()) {
        Ok(by_scanner) => by_scanner,
        Err(e) => panic!("{e}"),
    }
}

fn asked(kind: ListKind, body: &str) -> Vec<String> {
    let mut asked = Vec::new();
    let _ = filter(kind, body.as_bytes(), &[], |e| {
        asked.push(match e {
            Entry::Namespace(ns) => ns.to_string(),
            Entry::Object(ident) => ident.to_string(),
        });
        true
    });
    asked
}

fn error(kind: ListKind, body: &str) -> ListError {
    match filter(kind, body.as_bytes(), &[], |_| true) {
        Err(e) => e,
        Ok(page) => panic!("{body} was accepted: {page:?}"),
    }
}

#[test]
fn the_usual_responses_are_the_scanners() {
    for body in [
        r#"{"identifiers":[{"namespace":["big"],"name":"events"},{"namespace":["big"],"name":"b"}],"next-page-token":null}"#,
        "{\n  \"identifiers\" : [\n    { \"namespace\" : [ \"big\" ] , \"name\" : \"e\" } ,\n\t{\"name\":\"f\",\"namespace\":[\"big\"]}\r\n  ]\n}\n",
        r#"{"next-page-token":"p2","identifiers":[],"extra":{"k":[1,2.5,null]}}"#,
        r#"{"identifiers":[{"namespace":["a","b"],"name":"é😀"},{"namespace":["a"],"name":"x.y:z"}]}"#,
    ] {
        assert!(scanned(ListKind::Tables, body), "{body}");
    }
    assert!(scanned(ListKind::Namespaces, r#"{"namespaces":[["a"],["a","b"],[ "c" ]]}"#));
    assert!(scanned(ListKind::Functions, r#"{"identifiers":[["a","f"],["a","b","g"]]}"#));
}

#[test]
fn unusual_entries_are_read_by_serde_within_the_scan() {
    // escapes, other keys, other shapes: each such entry is read as the general reading does
    let body = r#"{"identifiers":[{"namespace":["s"],"name":"\u0061"},{"namespace":["s"],"name":"b","x":{"k":1}},
        {"n\u0061me":"c","namespace":["s"]},5,{"namespace":["s"]},{"namespace":["s"],"name":"d"}]}"#;
    assert!(scanned(ListKind::Tables, body));
    assert_eq!(asked(ListKind::Tables, body), ["s.a", "s.b", "s.c", "s.d"]);
}

#[test]
fn raw_control_bytes_are_invalid_json_even_in_hidden_entries() {
    for body in [
        "{\"identifiers\":[{\"namespace\":[\"s\"],\"name\":\"a\u{1}b\"}]}",
        "{\"identifiers\":[{\"namespace\":[\"s\u{1f}\"],\"name\":\"a\"}]}",
        // the level alone would hide the entry; the name's raw control byte is still an error
        "{\"identifiers\":[{\"namespace\":[\"s.t\"],\"name\":\"\u{0}\"}]}",
        "{\"namespaces\":[[\"a\tb\"]]}",
    ] {
        let kind = if body.contains("namespaces") { ListKind::Namespaces } else { ListKind::Tables };
        assert!(matches!(error(kind, body), ListError::Json(JsonError::Syntax(_))), "{body:?}");
        assert!(!scanned(kind, body));
    }
}

#[test]
fn names_with_control_characters_are_hidden_without_asking() {
    // DEL and C1 are valid JSON but not valid names; escaped C0 likewise
    let body = "{\"identifiers\":[{\"namespace\":[\"s\"],\"name\":\"a\u{7f}\"},{\"namespace\":[\"s\"],\"name\":\"\u{85}\"},\
        {\"namespace\":[\"s\u{9f}\"],\"name\":\"b\"},{\"namespace\":[\"s\"],\"name\":\"\\u0001\"},\
        {\"namespace\":[\"s\"],\"name\":\"\u{a0}ok\"}]}";
    assert!(scanned(ListKind::Tables, body));
    assert_eq!(asked(ListKind::Tables, body), ["s.\u{a0}ok"]);
}

#[test]
fn bad_names_are_hidden_without_asking() {
    let body = r#"{"identifiers":[{"namespace":["s"],"name":""},{"namespace":["s"],"name":"."},
        {"namespace":["s"],"name":".."},{"namespace":[""],"name":"t"},{"namespace":["."],"name":"t"},
        {"namespace":["a.b"],"name":"t"},{"namespace":["a:b"],"name":"t"},{"namespace":[],"name":"t"},
        {"namespace":["s\u002et"],"name":"t"},{"namespace":["s"],"name":"..."}]}"#;
    assert!(scanned(ListKind::Tables, body));
    assert_eq!(asked(ListKind::Tables, body), ["s...."]);
    let mut page = filter(ListKind::Namespaces, br#"{"namespaces":[["a|b"],["c"]]}"#, &["|".to_owned()], |_| true);
    assert_eq!(page.as_mut().map(|p| (p.len(), p.hidden())), Ok((1, 1)));
}

#[test]
fn a_namespace_change_rebuilds_the_reused_entry() {
    let body = r#"{"identifiers":[{"namespace":["a"],"name":"t1"},{"namespace":["a.b"],"name":"h"},
        {"namespace":["a"],"name":"t2"},{"namespace":["b","c"],"name":"t3"},{"namespace":["b"],"name":"t4"},
        {"namespace":["a"],"name":".."},{"namespace":["a"],"name":"t5"}]}"#;
    assert_eq!(asked(ListKind::Tables, body), ["a.t1", "a.t2", "b.c.t3", "b.t4", "a.t5"]);
    let namespaces = r#"{"namespaces":[["a","b","c"],["a"],["x.y"],["d","e"],[],["f"]]}"#;
    assert_eq!(asked(ListKind::Namespaces, namespaces), ["a.b.c", "a", "d.e", "f"]);
    let functions = r#"{"identifiers":[["a","b","f"],["a","g"],["h"],[],["c","d.e"]]}"#;
    assert_eq!(asked(ListKind::Functions, functions), ["a.b.f", "a.g", "c.d.e"]);
}

#[test]
fn keep_is_asked_once_when_the_general_reading_takes_over() {
    // the scanner reads every entry, then gives up at the end; the general reading then gives
    // the error without asking again
    for tail in [" x", ",", "{}", ""] {
        let body = format!(
            r#"{{"identifiers":[{{"namespace":["s"],"name":"a"}},["s"],{{"namespace":["s"],"name":"b"}}]}}{tail}"#
        );
        let broken = if tail.is_empty() { body.replace("]}", "],}") } else { body };
        assert_eq!(asked(ListKind::Tables, &broken), ["s.a", "s.b"], "{broken}");
        assert!(!scanned(ListKind::Tables, &broken));
    }
    let late = r#"{"identifiers":[{"namespace":["s"],"name":"a"}],"x":{"k":1,"k":2}}"#;
    assert_eq!(asked(ListKind::Tables, late), ["s.a"]);
    assert_eq!(error(ListKind::Tables, late), JsonError::DuplicateKey("k".into()).into());
}

#[test]
fn duplicate_keys_are_found_decoded() {
    for (body, key) in [
        (r#"{"identifiers":[{"namespace":["s"],"name":"a","n\u0061me":"b"}]}"#, "name"),
        (r#"{"identifiers":[{"namespace":["s"],"namespace":["t"],"name":"a"}]}"#, "namespace"),
        (r#"{"identifiers":[],"\u0069dentifiers":[]}"#, "identifiers"),
        (r#"{"next-page-token":null,"identifiers":[],"next\u002dpage-token":"x"}"#, "next-page-token"),
    ] {
        assert_eq!(error(ListKind::Tables, body), JsonError::DuplicateKey(key.into()).into(), "{body}");
        assert!(!scanned(ListKind::Tables, body));
    }
}

#[test]
fn escaped_envelope_keys_and_tokens_are_decoded() {
    let body = r#"{"\u0069dentifiers":[{"namespace":["s"],"name":"a"}],"next-page-token":"a\"b\u00e9\/","z\"q":1}"#;
    assert!(scanned(ListKind::Tables, body));
    let page = filter(ListKind::Tables, body.as_bytes(), &[], |_| true).unwrap();
    assert_eq!((page.len(), page.next_page_token()), (1, Some("a\"bé/")));
}

#[test]
fn lone_surrogates_are_syntax_errors_wherever_they_are() {
    for body in [
        r#"{"identifiers":[{"namespace":["s"],"name":"\ud800"}]}"#,
        r#"{"identifiers":[{"namespace":["\udc00"],"name":"t"}]}"#,
        r#"{"identifiers":[{"namespace":["s"],"name":"t","x":"\ud800"}]}"#,
        r#"{"identifiers":[],"next-page-token":"\ud800"}"#,
        r#"{"identifiers":[],"\ud800":1}"#,
        r#"{"identifiers":[],"x":["\ud800"]}"#,
    ] {
        assert!(matches!(error(ListKind::Tables, body), ListError::Json(JsonError::Syntax(_))), "{body}");
        assert!(!scanned(ListKind::Tables, body));
    }
    assert!(scanned(ListKind::Tables, r#"{"identifiers":[{"namespace":["s"],"name":"\ud83d\ude00"}]}"#));
}

#[test]
fn only_json_whitespace_is_skipped() {
    for ws in ["\u{c}", "\u{a0}", "\u{b}", "\u{85}"] {
        for body in [
            format!(r#"{{"identifiers":[{ws}]}}"#),
            format!(r#"{{"identifiers":[{{"namespace":{ws}["s"],"name":"t"}}]}}"#),
            format!(r#"{ws}{{"identifiers":[]}}"#),
        ] {
            assert!(matches!(error(ListKind::Tables, &body), ListError::Json(JsonError::Syntax(_))), "{body:?}");
        }
    }
}

#[test]
fn blank_truncated_and_non_utf8_bodies_are_refused() {
    assert_eq!(error(ListKind::Tables, " \n\t"), JsonError::Empty.into());
    let mut bytes = br#"{"identifiers":[{"namespace":["s"],"name":"t"}]}"#.to_vec();
    bytes[40] = 0xff;
    assert_eq!(filter(ListKind::Tables, &bytes, &[], |_| true).unwrap_err(), JsonError::InvalidUtf8.into());
    let whole = r#"{"identifiers":[{"namespace":["s"],"name":"tname"}],"next-page-token":"abc"}"#;
    for end in 0..whole.len() {
        let body = &whole[..end];
        let mut asked = 0;
        let e = filter(ListKind::Tables, body.as_bytes(), &[], |_| {
            asked += 1;
            true
        });
        assert!(e.is_err(), "{body}");
        assert!(asked <= 1, "{body}");
        let _ = scanned(ListKind::Tables, body);
    }
}

#[test]
fn kept_entries_are_referenced_in_the_response() {
    let body =
        Bytes::from_static(br#"{"identifiers":[{"namespace":["s"],"name":"a"},{"namespace":["s"],"name":"b"}]}"#);
    let page = filter(ListKind::Tables, body.clone(), &[], |_| true).unwrap();
    let range = body.as_ptr_range();
    assert!(page.visible().all(|e| range.contains(&e.as_ptr())), "entries are not copies");
}

#[test]
fn adjacent_kept_entries_render_as_they_were_joined() {
    let body = r#"{"identifiers":[{"namespace":["s"],"name":"a"},{"namespace":["s"],"name":"b"} , {"namespace":["s"],"name":"c"},{"namespace":["s"],"name":"d"},{"namespace":["s"],"name":"e"}]}"#;
    let page =
        filter(ListKind::Tables, body.as_bytes(), &[], |e| !matches!(e, Entry::Object(i) if i.name == "d")).unwrap();
    assert_eq!(
        String::from_utf8(page.render(ListKind::Tables, None)).unwrap(),
        r#"{"identifiers":[{"namespace":["s"],"name":"a"},{"namespace":["s"],"name":"b"},{"namespace":["s"],"name":"c"},{"namespace":["s"],"name":"e"}]}"#
    );
}

#[test]
fn strings_end_exactly_where_they_end() {
    // the stop is found eight bytes at a time: check every offset, the bytes beside the ones
    // that stop, and a short tail
    let fillers = [b'a', b' ', b'!', b'#', b']', 0x7f, 0x80, 0xc2, 0xff, 0x20, 0x21];
    for stop in [b'"', b'\\', 0x00, 0x1f, 0x01] {
        for filler in fillers {
            for len in 0..24 {
                for at in 0..=len {
                    let mut bytes = vec![filler; len];
                    if at < len {
                        bytes[at] = stop;
                    }
                    let want = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
                    assert_eq!(scan::string_stop(&bytes), want, "{bytes:?}");
                }
            }
        }
    }
    // a stop after an earlier byte that borrows in the word arithmetic
    assert_eq!(scan::string_stop(b"ab\x00cd\"efgh"), Some(2));
    assert_eq!(scan::string_stop(b"\x20\x21\x22\x5c"), Some(2));
}

#[test]
fn the_general_reading_replays_the_scanners_answers() {
    // as if the scanner had kept `a`, hidden `b` and then given up
    let text = r#"{"identifiers":[{"namespace":["s"],"name":"a"}, ["s"], {"namespace":["s"],"name":"b"},{"namespace":["s"],"name":"c"}]}"#;
    let span = |name: &str| {
        let entry = format!(r#"{{"namespace":["s"],"name":"{name}"}}"#);
        let start = text.find(&entry).unwrap();
        start..start + entry.len()
    };
    let replay = general::Replay { until: span("b").end, kept: vec![span("a")] };
    let mut asked = Vec::new();
    let read = general::read(ListKind::Tables, text, &[], &mut asker_of(&mut asked), &replay).unwrap();
    assert_eq!(asked, ["c"]);
    assert_eq!((read.kept, read.hidden), (vec![span("a"), span("c")], 2));
}

fn asker_of(asked: &mut Vec<String>) -> impl FnMut(&Entry) -> bool + '_ {
    |entry| {
        if let Entry::Object(ident) = entry {
            asked.push(ident.name.clone());
        }
        true
    }
}
