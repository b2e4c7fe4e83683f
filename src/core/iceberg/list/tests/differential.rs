//! The filter against the one it replaced ([`old`](super::old)), on generated responses: the
//! same result (kept entries byte for byte, hidden count, token, rendering), the same error,
//! and the same questions to `keep`, in the same order.
//!
//! A response is built from a tape of choices that proptest shrinks: a choice of 0 (and the
//! end of the tape) is the most ordinary option, so a shrunk failure is a mostly ordinary
//! response with the one oddity that matters.

use super::super::*;
use super::old;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Choices read off the tape; past its end every choice is 0.
struct Tape<'a> {
    choices: &'a [u8],
    at: usize,
}

impl Tape<'_> {
    /// A choice in `0..n`.
    fn pick(&mut self, n: usize) -> usize {
        let choice = self.choices.get(self.at).map_or(0, |&c| usize::from(c) % n);
        self.at += 1;
        choice
    }

    /// One of `options`, the first being the ordinary one.
    fn one<'o>(&mut self, options: &[&'o str]) -> &'o str {
        options[self.pick(options.len())]
    }

    /// Mostly nothing, sometimes whitespace (JSON's and, rarely, not JSON's).
    fn ws(&mut self) -> &'static str {
        match self.pick(64) {
            0..=47 => "",
            48..=51 => " ",
            52..=54 => "\n  ",
            55..=57 => "\t",
            58..=62 => "\r\n",
            _ => self.one(&["\u{c}", "\u{a0}"]),
        }
    }

    /// The inside of a string literal: plain text mostly, and everything the name rules and
    /// JSON's string rules care about; rarely something JSON forbids.
    fn string(&mut self) -> String {
        let valid = [
            "sales",
            "a",
            "b",
            "orders_2024",
            "",
            ".",
            "..",
            ":",
            "|",
            "x.y",
            "é",
            "😀",
            "\u{85}",
            "\u{7f}",
            "\u{9f}",
            "\u{a0}",
            "\\u0001",
            "\\u0085",
            "\\\"",
            "\\\\",
            "\\/",
            "\\n",
            "\\u00e9",
            "\\u002e",
            "\\ud83d\\ude00",
            " ",
        ];
        let invalid = ["\u{1}", "\u{1f}", "\\ud800", "\\udc00", "\\x", "\\u12"];
        let mut out = String::new();
        for _ in 0..1 + self.pick(2) + self.pick(2) {
            out.push_str(match self.pick(48) {
                0..=31 => valid[self.pick(4)],
                32..=46 => valid[self.pick(valid.len())],
                _ => invalid[self.pick(invalid.len())],
            });
        }
        out
    }

    fn quoted(&mut self) -> String {
        format!("\"{}\"", self.string())
    }

    /// A JSON value of any kind, or sometimes almost one.
    fn value(&mut self, depth: usize) -> String {
        match self.pick(if depth > 3 { 6 } else { 9 }) {
            0 => self.quoted(),
            1 if self.pick(12) == 1 => self.one(&["1e400", "01", "1.", "-", "nul", "True"]).to_owned(),
            1 => self.one(&["1", "-0.0", "2.50", "1E+2", "18446744073709551616", "-1e-400"]).to_owned(),
            2 => self.one(&["null", "true", "false"]).to_owned(),
            3 => "[]".to_owned(),
            4 => "{}".to_owned(),
            5 => {
                // around the depth bound, counted from wherever this value stands
                let k = 250 + self.pick(8);
                "[".repeat(k) + &"]".repeat(k)
            }
            6 | 7 => {
                let items: Vec<String> = (0..self.pick(4)).map(|_| self.value(depth + 1)).collect();
                format!("[{}]", items.join(","))
            }
            _ => {
                let keys = ["k", "k", "\\u006b", "j"];
                let members: Vec<String> =
                    (0..self.pick(4)).map(|_| format!("\"{}\":{}", self.one(&keys), self.value(depth + 1))).collect();
                format!("{{{}}}", members.join(","))
            }
        }
    }

    /// An array of levels, mostly of the usual form.
    fn levels(&mut self) -> String {
        let count = match self.pick(8) {
            0..=4 => 1,
            5 => 0,
            6 => 2,
            _ => 3,
        };
        let levels: Vec<String> = (0..count)
            .map(|_| match self.pick(12) {
                0..=5 => "\"sales\"".to_owned(),
                6 => "\"eu\"".to_owned(),
                7 => self.value(3),
                _ => self.quoted(),
            })
            .collect();
        let (a, b) = (self.ws(), self.ws());
        format!("[{a}{}{b}]", levels.join(if self.pick(6) == 1 { " , " } else { "," }))
    }

    fn member(&mut self, key: &str, value: &str) -> String {
        let (a, b, c) = (self.ws(), self.ws(), self.ws());
        format!("{a}\"{key}\"{b}:{c}{value}")
    }

    /// One entry of a list of `kind`.
    fn entry(&mut self, kind: ListKind) -> String {
        if self.pick(12) == 1 {
            return self.value(2);
        }
        match kind {
            ListKind::Namespaces | ListKind::Functions => self.levels(),
            ListKind::Tables | ListKind::Views => {
                let name = match self.pick(6) {
                    0..=2 => format!("\"t{}\"", self.pick(4)),
                    3 => self.value(3),
                    _ => self.quoted(),
                };
                let levels = self.levels();
                let mut members = vec![self.member("namespace", &levels), self.member("name", &name)];
                if self.pick(3) == 1 {
                    members.swap(0, 1);
                }
                match self.pick(10) {
                    1 => {
                        let value = self.value(3);
                        members.insert(self.pick(3), self.member("extra", &value))
                    }
                    2 => {
                        let key = self.one(&["name", "namespace", "n\\u0061me"]);
                        members.push(self.member(key, "\"u\""))
                    }
                    3 => drop(members.remove(self.pick(2))),
                    4 => members[0] = members[0].replacen("name", "n\\u0061me", 1),
                    _ => {}
                }
                let (a, b) = (self.ws(), self.ws());
                format!("{{{}{a}}}{b}", members.join(","))
            }
        }
    }

    /// A whole list response of `kind`, sometimes damaged.
    fn response(&mut self, kind: ListKind) -> Vec<u8> {
        let entries: Vec<String> = (0..self.pick(8) + self.pick(8)).map(|_| self.entry(kind)).collect();
        let sep = if self.pick(5) == 1 { ", " } else { "," };
        let mut list = format!("[{}{}]", entries.join(sep), if self.pick(30) == 1 { "," } else { "" });
        if self.pick(20) == 1 {
            list = self.value(1);
        }
        let key = match self.pick(20) {
            // the same key, escaped: the general reading's
            1 => format!("\\u00{:x}{}", kind.list_key().as_bytes()[0], &kind.list_key()[1..]),
            2 => "namespaces".to_owned(),
            3 => "identifiers".to_owned(),
            _ => kind.list_key().to_owned(),
        };
        let mut members = vec![self.member(&key, &list)];
        for _ in 0..self.pick(4) {
            let member = match self.pick(6) {
                0 | 1 => {
                    let token = self.one(&[
                        "\"p2\"",
                        "null",
                        "\"a\\\"b\"",
                        "5",
                        "\"\\ud800\"",
                        "[\"x\"]",
                        "\"é\\u00e9\"",
                        "nul",
                        "\"\\x\"",
                    ]);
                    self.member("next-page-token", token)
                }
                2 => {
                    let value = self.value(1);
                    let key = self.one(&["extra", "z\\\"q", "next\\u002dpage-token", "\\ud800"]);
                    self.member(key, &value)
                }
                3 => members[0].clone(),
                _ => {
                    let value = self.value(1);
                    self.member("other", &value)
                }
            };
            let at = self.pick(members.len() + 1);
            members.insert(at, member);
        }
        let (a, b, c) = (self.ws(), self.ws(), self.ws());
        let mut out = format!("{a}{{{}{b}}}{c}", members.join(",")).into_bytes();
        match self.pick(24) {
            1 => out.truncate(self.pick(out.len() + 1)),
            2 => {
                let at = self.pick(out.len() + 1);
                out.insert(at, self.one(&["x", "}", "]", ",", "\"", "\\", "\u{1}"]).as_bytes()[0]);
            }
            3 => out.insert(self.pick(out.len() + 1), 0xff),
            4 => out.extend_from_slice(self.one(&[" {}", "x", ",", "\n"]).as_bytes()),
            _ => {}
        }
        out
    }
}

/// A `keep` that answers by the entry's name, so that both filters get the same answers, and
/// records what it was asked.
fn asker(asked: &mut Vec<Entry>) -> impl FnMut(&Entry) -> bool + '_ {
    |entry| {
        asked.push(entry.clone());
        !format!("{entry:?}").contains("t3")
    }
}

/// One generated case: what the new filter gives must be what the old one gave.
pub(super) fn compare(kind: ListKind, separators: &[String], body: &[u8]) -> Result<bool, TestCaseError> {
    let text = String::from_utf8_lossy(body);
    let (mut asked_old, mut asked_new, mut asked_scan) = (Vec::new(), Vec::new(), Vec::new());
    let old = old::filter(kind, body, separators, asker(&mut asked_old));
    let new = filter(kind, body, separators, asker(&mut asked_new));
    prop_assert_eq!(&asked_new, &asked_old, "keep was asked differently: {}", text);
    let scanned = std::str::from_utf8(body).ok().map(|t| scan::scan(kind, t, separators, &mut asker(&mut asked_scan)));
    let by_scanner = matches!(scanned, Some(Ok(_)));
    match (old, new) {
        (Ok(old), Ok(new)) => {
            let kept: Vec<&str> = old.kept.iter().map(|raw| raw.get()).collect();
            prop_assert_eq!(new.visible().collect::<Vec<_>>(), kept, "{}", text);
            prop_assert_eq!((new.hidden(), new.next_page_token()), (old.hidden, old.next_page_token.as_deref()));
            for token in [None, Some("t\"\u{1}é")] {
                let rendered = new.render(kind, token);
                prop_assert_eq!(&rendered, &old.render(kind, token), "{}", text);
                prop_assert_eq!(crate::core::iceberg::json::check_strict(&rendered), Ok(()));
            }
        }
        (Err(old), Err(new)) => {
            prop_assert!(!by_scanner, "the scanner accepted what the old filter refused: {}", text);
            prop_assert_eq!(new, old, "{}", text);
        }
        (old, new) => prop_assert!(false, "old {:?}, new {:?}: {}", old.map(|_| ()), new.map(|_| ()), text),
    }
    Ok(by_scanner)
}

fn kinds() -> impl Strategy<Value = ListKind> {
    prop_oneof![Just(ListKind::Tables), Just(ListKind::Views), Just(ListKind::Namespaces), Just(ListKind::Functions)]
}

#[test]
fn generated_responses_filter_as_before() {
    let cases = std::env::var("LIST_DIFFERENTIAL_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(3000);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let strategy = (kinds(), any::<bool>(), proptest::collection::vec(any::<u8>(), 0..400));
    let (scanned, accepted) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let outcome = runner.run(&strategy, |(kind, with_separator, tape)| {
        let separators = if with_separator { vec!["|".to_owned()] } else { Vec::new() };
        let body = Tape { choices: &tape, at: 0 }.response(kind);
        let by_scanner = compare(kind, &separators, &body)?;
        scanned.set(scanned.get() + usize::from(by_scanner));
        accepted.set(accepted.get() + usize::from(filter(kind, &body, &separators, |_| true).is_ok()));
        Ok(())
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
    // the generator must reach both readings: most accepted responses are the scanner's
    let (scanned, accepted) = (scanned.get(), accepted.get());
    eprintln!("{scanned} scanned of {accepted} accepted of {cases}");
    assert!(accepted > cases as usize / 5 && scanned * 2 > accepted, "{scanned} scanned of {accepted} accepted");
}

/// Multi-page lists: pages read by either reading join and render as before.
#[test]
fn appended_pages_render_as_before() {
    let pages = [
        r#"{"identifiers":[{"namespace":["s"],"name":"a"},{"namespace":["s"],"name":"t3"}],"next-page-token":"2"}"#,
        r#"{"x": 1, "identifiers": [{"name": "b", "namespace": ["s"]}, 5, {"namespace":["s"],"name":"c"}], "next-page-token":"3"}"#,
        r#"{"\u0069dentifiers":[{"namespace":["s"],"name":"d"},{"namespace":["s"],"name":"t3"}],"next-page-token":null}"#,
    ];
    let mut asked = Vec::new();
    let mut old_page = old::filter(ListKind::Tables, pages[0].as_bytes(), &[], asker(&mut asked)).unwrap();
    let mut new_page = filter(ListKind::Tables, Bytes::from(pages[0]), &[], asker(&mut asked)).unwrap();
    for page in &pages[1..] {
        old_page.append(old::filter(ListKind::Tables, page.as_bytes(), &[], asker(&mut asked)).unwrap());
        new_page.append(filter(ListKind::Tables, Bytes::from(*page), &[], asker(&mut asked)).unwrap());
    }
    assert_eq!(new_page.render(ListKind::Tables, Some("t")), old_page.render(ListKind::Tables, Some("t")));
    assert_eq!((new_page.len(), new_page.hidden()), (old_page.kept.len(), old_page.hidden));
}
