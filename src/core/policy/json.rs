//! The JSON fast path of policy loading: a policy file written in JSON (which is YAML too) is
//! parsed with serde_json, an order of magnitude faster than the YAML parser, into the same
//! model with the same lines.
//!
//! The path only ever accepts: a file it cannot read exactly as the YAML parser would (a
//! syntax or type error, an escaped string, whose place in the text is not known) is handed to
//! the YAML parser, so that parse errors are the YAML parser's whatever the syntax; what it
//! reads carries the lines the YAML parser would give, so that the validator's errors and
//! warnings are the same too.

use super::located::reading_json;
use super::raw;

/// Whether `text` is for this path: its first byte after whitespace opens a JSON object.
pub(super) fn looks_like_json(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// Parses a JSON policy file; `None` when the YAML parser must decide instead.
pub(super) fn parse(text: &str) -> Option<raw::File> {
    reading_json(text, || serde_json::from_str(text).ok())
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
        assert!(!super::super::located::active(), "the YAML path is back after a failed parse");
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
