//! The JSON fast path of policy loading: a policy file written in JSON (which is YAML too) is
//! parsed with serde_json, an order of magnitude faster than the YAML parser, into the same
//! model with the same lines.
//!
//! The path only ever accepts: a file it cannot read exactly as the YAML parser would (a
//! syntax or type error, an escaped string, whose place in the text is not known) is handed to
//! the YAML parser, so that parse errors are the YAML parser's whatever the syntax; what it
//! reads carries the lines the YAML parser would give, so that the validator's errors and
//! warnings are the same too.

use super::raw::{self, Ignored, Text};
use serde::de::{self, Deserialize as _, Visitor};
use std::cell::RefCell;
use std::fmt;

/// Where the file being parsed lies in memory and where its lines start: a string that
/// serde_json hands over borrowed points into the text, so its offset gives its line.
struct Lines {
    base: usize,
    len: usize,
    /// Offsets of the text's newlines.
    newlines: Vec<usize>,
    /// Newlines before the last string found; serde_json reads forward, so the next string's
    /// line is found by stepping on from here (all steps together cross the text once).
    passed: usize,
}

impl Lines {
    fn line_of(&mut self, addr: usize) -> Option<u32> {
        let offset = addr.checked_sub(self.base).filter(|o| *o < self.len)?;
        if self.newlines.get(self.passed.wrapping_sub(1)).is_some_and(|n| *n >= offset) {
            self.passed = self.newlines.partition_point(|n| *n < offset);
        }
        // Usually the same line as the last string, or the next one.
        while self.newlines.get(self.passed).is_some_and(|n| *n < offset) {
            self.passed += 1;
        }
        u32::try_from(self.passed + 1).ok()
    }
}

thread_local! {
    /// The file being parsed on this thread's JSON path; `None` elsewhere (the YAML path).
    static PARSING: RefCell<Option<Lines>> = const { RefCell::new(None) };
}

/// Whether this thread is on the JSON path, which [`Text`] reads differently.
pub(super) fn active() -> bool {
    PARSING.with(|p| p.borrow().is_some())
}

/// Whether `text` is for this path: its first byte after whitespace opens a JSON object.
pub(super) fn looks_like_json(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// Parses a JSON policy file; `None` when the YAML parser must decide instead.
pub(super) fn parse(text: &str) -> Option<raw::File> {
    let newlines = text.bytes().enumerate().filter_map(|(i, b)| (b == b'\n').then_some(i)).collect();
    let lines = Lines { base: text.as_ptr().addr(), len: text.len(), newlines, passed: 0 };
    PARSING.with(|p| p.replace(Some(lines)));
    // Reset even if parsing unwinds, so that a later YAML parse on this thread is not misread.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            PARSING.with(|p| p.replace(None));
        }
    }
    let _reset = Reset;
    serde_json::from_str(text).ok()
}

/// Reads a value other than a string on the JSON path, and its line: serde_json hands the
/// value's text over borrowed, and it is then read on its own.
pub(super) fn located<'de, D, T>(deserializer: D) -> Result<(T, u32), D::Error>
where
    D: de::Deserializer<'de>,
    T: de::Deserialize<'de>,
{
    let raw = <&'de serde_json::value::RawValue>::deserialize(deserializer)?;
    let line = line_of::<D::Error>(raw.get())?;
    let value = serde_json::from_str(raw.get()).map_err(de::Error::custom)?;
    Ok((value, line))
}

/// The line of a string borrowed from the text being parsed.
fn line_of<E: de::Error>(within: &str) -> Result<u32, E> {
    let line = PARSING.with(|p| p.borrow_mut().as_mut().and_then(|l| l.line_of(within.as_ptr().addr())));
    line.ok_or_else(|| E::custom("value outside the text"))
}

/// Reads a value the model ignores on the JSON path, refusing a key repeated in any of its
/// mappings as the YAML parser does.
pub(super) struct UniqueKeys;

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = Ignored;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Ignored, E> {
        Ok(Ignored)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Ignored, E> {
        Ok(Ignored)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Ignored, E> {
        Ok(Ignored)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Ignored, E> {
        Ok(Ignored)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Ignored, E> {
        Ok(Ignored)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Ignored, E> {
        Ok(Ignored)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Ignored, A::Error> {
        while seq.next_element::<Ignored>()?.is_some() {}
        Ok(Ignored)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Ignored, A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key) {
                return Err(de::Error::custom("duplicate key"));
            }
            map.next_value::<Ignored>()?;
        }
        Ok(Ignored)
    }
}

/// Reads a [`Text`] on the JSON path: only a string borrowed from the text, whose offset
/// gives its line.
pub(super) struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string without escapes")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text, E> {
        Ok(Text::new(v.to_owned(), line_of(v)?))
    }
}

/// Reads a [`raw::Word`] on the JSON path, without copying the keyword's text.
pub(super) struct WordVisitor<T>(pub(super) std::marker::PhantomData<T>);

impl<'de, T: raw::Keyword> Visitor<'de> for WordVisitor<T> {
    type Value = raw::Word<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string without escapes")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<raw::Word<T>, E> {
        Ok(raw::Word::read(v, line_of(v)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> raw::File {
        parse(text).unwrap_or_else(|| panic!("not parsed: {text}"))
    }

    /// Each located value of `file` with its line.
    fn lines(file: &raw::File) -> Vec<(String, u64)> {
        let mut out = vec![(file.version.value.to_string(), file.version.line())];
        out.extend(file.metalake.iter().map(|m| (m.value.clone(), m.line())));
        out.extend(file.require_known_user.iter().map(|r| (r.value.to_string(), r.line())));
        for role in &file.roles {
            out.push((role.name.value.clone(), role.name.line()));
            for object in &role.securable_objects {
                out.push((object.full_name.value.clone(), object.full_name.line()));
                out.extend(object.privileges.iter().map(|p| {
                    (
                        p.condition.value.as_ref().map_or_else(ToString::to_string, |c| c.as_str().to_owned()),
                        p.condition.line(),
                    )
                }));
            }
        }
        out
    }

    #[test]
    fn values_carry_the_lines_the_yaml_parser_gives_them() {
        let text = "{\"version\":\n 1,\n\"metalake\": \"lake\",\n\n\"roles\": [{\"name\": \"a\"},\n {\"name\": \"b\", \
                    \"securableObjects\": [{\"type\": \"CATALOG\", \"fullName\":\n\"c\", \"privileges\": [\n\
                    {\"name\": \"USE_CATALOG\", \"condition\": \"ALLOW\"}]}]}],\n\"require_known_user\":\n false}";
        let json = lines(&parsed(text));
        let yaml = lines(&super::super::load::parse_yaml(text).unwrap_or_else(|e| panic!("{e:?}")));
        assert_eq!(json, yaml);
        let at = |v: &str| json.iter().find(|(value, _)| value == v).map(|(_, line)| *line);
        assert_eq!(
            (at("1"), at("lake"), at("b"), at("c"), at("ALLOW"), at("false")),
            (Some(2), Some(3), Some(6), Some(7), Some(8), Some(10))
        );
    }

    #[test]
    fn what_the_yaml_parser_must_decide_is_not_parsed_here() {
        // an escaped string: where it was is not known
        assert!(parse("{\"version\": 1, \"metalake\": \"l\\u0061ke\"}").is_none());
        // a number where a name belongs (YAML reads it as a string)
        assert!(parse("{\"version\": 1, \"metalake\": 5}").is_none());
        // JSON-like YAML (flow style without quotes), an unknown key, a duplicate key
        assert!(parse("{version: 1, metalake: lake}").is_none());
        assert!(parse("{\"version\": 1, \"metalake\": \"lake\", \"extra\": 1}").is_none());
        assert!(parse("{\"version\": 1, \"metalake\": \"lake\", \"metalake\": \"lake\"}").is_none());
        assert!(!active(), "the YAML path is back after a failed parse");
    }

    #[test]
    fn a_key_repeated_in_an_ignored_value_is_left_to_the_yaml_parser() {
        // The YAML parser refuses a repeated key anywhere, Gravitino's ignored fields included.
        let text = |properties: &str| {
            format!(
                "{{\"version\": 1, \"metalake\": \"lake\", \"roles\": [{{\"name\": \"r\", \"properties\": {properties}}}]}}"
            )
        };
        assert!(parse(&text("{\"a\": [1, {\"b\": null}], \"c\": {\"a\": true}}")).is_some());
        assert!(parse(&text("{\"a\": 1, \"a\": 2}")).is_none());
        assert!(parse(&text("{\"a\": [{\"b\": 1, \"b\": 1}]}")).is_none());
        assert!(super::super::load::parse_yaml(&text("{\"a\": 1, \"a\": 2}")).is_err());
    }

    #[test]
    fn only_text_that_opens_an_object_is_tried() {
        assert!(looks_like_json(" \n{\"version\": 1}"));
        assert!(!looks_like_json("version: 1\n"));
        assert!(!looks_like_json("# {\n"));
    }
}
