//! A row filter: the Iceberg expression a policy writes with column names, checked when the
//! policy loads, and written out for the wire with every column as a field-id reference
//! (`{"type": "reference", "id": N}`, the REST spec's `IdReference`), as the spec's
//! `required-row-filter` requires.

use super::action::ColumnPath;
use serde_json::{Map, Value, json};

/// How deep a policy's filter may nest; deeper is refused as malformed.
const MAX_DEPTH: usize = 64;

/// A checked row filter.
#[derive(Clone, Debug, PartialEq)]
pub enum Filter {
    Const(bool),
    And(Box<Filter>, Box<Filter>),
    Or(Box<Filter>, Box<Filter>),
    Not(Box<Filter>),
    /// `is-null`, `not-null`, `is-nan`, `not-nan`.
    Unary {
        op: &'static str,
        column: ColumnPath,
    },
    /// `lt`, `lt-eq`, `gt`, `gt-eq`, `eq`, `not-eq`, `starts-with`, `not-starts-with`.
    Compare {
        op: &'static str,
        column: ColumnPath,
        value: Value,
    },
    /// `in`, `not-in`.
    Set {
        op: &'static str,
        column: ColumnPath,
        values: Vec<Value>,
    },
}

const UNARY: [&str; 4] = ["is-null", "not-null", "is-nan", "not-nan"];
const COMPARE: [&str; 8] = ["lt", "lt-eq", "gt", "gt-eq", "eq", "not-eq", "starts-with", "not-starts-with"];
const SET: [&str; 2] = ["in", "not-in"];

impl Filter {
    /// Reads a policy's filter: Iceberg's expression JSON, in the legacy form (`term`,
    /// `value`) or the current one (`left`/`right`, `child`, named references). The message
    /// says what is wrong, in the policy's terms.
    pub fn parse(value: &Value) -> Result<Self, String> {
        parse(value, 0)
    }

    /// Every column the filter names, in order, repeats included.
    pub fn columns(&self) -> Vec<&ColumnPath> {
        let mut out = Vec::new();
        self.walk(&mut |c| out.push(c));
        out
    }

    fn walk<'a>(&'a self, f: &mut impl FnMut(&'a ColumnPath)) {
        match self {
            Self::Const(_) => {}
            Self::And(a, b) | Self::Or(a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Self::Not(c) => c.walk(f),
            Self::Unary { column, .. } | Self::Compare { column, .. } | Self::Set { column, .. } => f(column),
        }
    }

    /// `a and b`, `true` dropped.
    pub fn and(a: Self, b: Self) -> Self {
        match (a, b) {
            (Self::Const(true), x) | (x, Self::Const(true)) => x,
            (a, b) => Self::And(Box::new(a), Box::new(b)),
        }
    }

    /// The filter with column names (for `explain`), in the current expression form.
    pub fn to_names_json(&self) -> Value {
        self.render(&mut |c: &ColumnPath| Ok::<_, ()>(json!({ "type": "reference", "name": c.to_string() })))
            .unwrap_or(Value::Null)
    }

    /// The filter for the wire: each column as the `IdReference` `resolve` gives it.
    pub fn to_ids_json<E>(&self, resolve: &mut impl FnMut(&ColumnPath) -> Result<i64, E>) -> Result<Value, E> {
        self.render(&mut |c: &ColumnPath| resolve(c).map(|id| json!({ "type": "reference", "id": id })))
    }

    fn render<E>(&self, reference: &mut impl FnMut(&ColumnPath) -> Result<Value, E>) -> Result<Value, E> {
        Ok(match self {
            Self::Const(b) => Value::Bool(*b),
            Self::And(a, b) => json!({ "type": "and", "left": a.render(reference)?, "right": b.render(reference)? }),
            Self::Or(a, b) => json!({ "type": "or", "left": a.render(reference)?, "right": b.render(reference)? }),
            Self::Not(c) => json!({ "type": "not", "child": c.render(reference)? }),
            Self::Unary { op, column } => json!({ "type": op, "child": reference(column)? }),
            Self::Compare { op, column, value } => {
                json!({ "type": op, "left": reference(column)?, "right": value })
            }
            Self::Set { op, column, values } => json!({ "type": op, "child": reference(column)?, "values": values }),
        })
    }
}

fn parse(value: &Value, depth: usize) -> Result<Filter, String> {
    if depth > MAX_DEPTH {
        return Err(format!("nests deeper than {MAX_DEPTH} levels"));
    }
    let obj = match value {
        Value::Bool(b) => return Ok(Filter::Const(*b)),
        Value::Object(obj) => obj,
        _ => return Err("an expression is a boolean or an object with a `type`".to_owned()),
    };
    let kind = obj.get("type").and_then(Value::as_str).ok_or("an expression object needs a string `type`")?;
    let child = |key: &str| -> Result<Filter, String> {
        let v = obj.get(key).ok_or_else(|| format!("`{kind}` needs `{key}`"))?;
        parse(v, depth + 1)
    };
    let allowed = |keys: &[&str]| -> Result<(), String> {
        match obj.keys().find(|k| *k != "type" && !keys.contains(&k.as_str())) {
            Some(k) => Err(format!("`{kind}` has unknown key `{k}`")),
            None => Ok(()),
        }
    };
    match kind {
        "true" | "false" => {
            allowed(&[])?;
            Ok(Filter::Const(kind == "true"))
        }
        "and" | "or" => {
            allowed(&["left", "right"])?;
            let (a, b) = (Box::new(child("left")?), Box::new(child("right")?));
            Ok(if kind == "and" { Filter::And(a, b) } else { Filter::Or(a, b) })
        }
        "not" => {
            allowed(&["child"])?;
            Ok(Filter::Not(Box::new(child("child")?)))
        }
        _ => {
            if let Some(op) = UNARY.into_iter().find(|o| *o == kind) {
                allowed(&["term", "child"])?;
                return Ok(Filter::Unary { op, column: operand(obj, kind, &["term", "child"])? });
            }
            if let Some(op) = COMPARE.into_iter().find(|o| *o == kind) {
                allowed(&["term", "value", "left", "right"])?;
                let column = operand(obj, kind, &["term", "left"])?;
                let raw = one_of(obj, kind, &["value", "right"])?;
                return Ok(Filter::Compare { op, column, value: literal(raw, kind)? });
            }
            if let Some(op) = SET.into_iter().find(|o| *o == kind) {
                allowed(&["term", "child", "values"])?;
                let column = operand(obj, kind, &["term", "child"])?;
                let values = match obj.get("values") {
                    Some(Value::Array(items)) if !items.is_empty() => {
                        items.iter().map(|v| literal(v, kind)).collect::<Result<Vec<_>, _>>()?
                    }
                    _ => return Err(format!("`{kind}` needs `values`, a non-empty list of literals")),
                };
                return Ok(Filter::Set { op, column, values });
            }
            Err(format!("unknown expression type `{kind}`"))
        }
    }
}

/// Exactly one of `keys` (the legacy and the current spelling of one operand).
fn one_of<'a>(obj: &'a Map<String, Value>, kind: &str, keys: &[&str]) -> Result<&'a Value, String> {
    let present: Vec<&Value> = keys.iter().filter_map(|k| obj.get(*k)).collect();
    match present.as_slice() {
        [one] => Ok(one),
        [] => Err(format!("`{kind}` needs `{}`", keys.join("` or `"))),
        _ => Err(format!("`{kind}` has both `{}`", keys.join("` and `"))),
    }
}

/// The column an operand names: a bare name (legacy `term`) or a named reference.
fn operand(obj: &Map<String, Value>, kind: &str, keys: &[&str]) -> Result<ColumnPath, String> {
    let name = match one_of(obj, kind, keys)? {
        Value::String(s) => s.as_str(),
        Value::Object(r) if r.get("type").and_then(Value::as_str) == Some("reference") => {
            if r.contains_key("id") {
                return Err("a policy names columns by name, not by field id (ids change with the table)".to_owned());
            }
            match (r.get("name").and_then(Value::as_str), r.len()) {
                (Some(name), 2) => name,
                _ => return Err("a reference is `{type: reference, name: COLUMN}`".to_owned()),
            }
        }
        _ => return Err(format!("`{kind}` must name a column (transforms and functions are not supported)")),
    };
    ColumnPath::parse(name).ok_or_else(|| format!("`{name}` is not a column path (names joined with `.`)"))
}

/// A literal: a string, number or boolean, bare or as `{type: literal, value: ...}`.
fn literal(value: &Value, kind: &str) -> Result<Value, String> {
    match value {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => Ok(value.clone()),
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("literal") && o.len() == 2 => {
            match o.get("value") {
                Some(v @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => Ok(v.clone()),
                _ => Err(format!("`{kind}` has a literal whose value is not a string, number or boolean")),
            }
        }
        _ => Err(format!("`{kind}` compares with something that is not a literal (a string, number or boolean)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(f: &Filter) -> Value {
        let mut n = 0;
        f.to_ids_json(&mut |_| {
            n += 1;
            Ok::<_, ()>(n)
        })
        .unwrap()
    }

    #[test]
    fn the_legacy_and_the_current_form_read_the_same() {
        let legacy = Filter::parse(&json!({"type": "eq", "term": "region", "value": "EU"})).unwrap();
        let current = Filter::parse(&json!({"type": "eq", "left": {"type": "reference", "name": "region"},
            "right": {"type": "literal", "value": "EU"}}))
        .unwrap();
        assert_eq!(legacy, current);
        assert_eq!(ids(&legacy), json!({"type": "eq", "left": {"type": "reference", "id": 1}, "right": "EU"}));
    }

    #[test]
    fn every_column_becomes_an_id_reference() {
        let f = Filter::parse(&json!({"type": "and",
            "left": {"type": "in", "term": "region", "values": ["EU", "UK"]},
            "right": {"type": "not", "child": {"type": "is-null", "term": "address.city"}}}))
        .unwrap();
        assert_eq!(f.columns().iter().map(ToString::to_string).collect::<Vec<_>>(), ["region", "address.city"]);
        assert_eq!(
            ids(&f),
            json!({"type": "and",
                "left": {"type": "in", "child": {"type": "reference", "id": 1}, "values": ["EU", "UK"]},
                "right": {"type": "not", "child": {"type": "is-null", "child": {"type": "reference", "id": 2}}}})
        );
    }

    #[test]
    fn malformed_filters_are_refused_with_a_reason() {
        for (bad, says) in [
            (json!({"type": "eq", "term": "a"}), "needs `value` or `right`"),
            (json!({"type": "like", "term": "a", "value": 1}), "unknown expression type `like`"),
            (
                json!({"type": "eq", "term": {"type": "transform", "transform": "day", "term": "a"}, "value": 1}),
                "must name a column",
            ),
            (json!({"type": "eq", "left": {"type": "reference", "id": 3}, "right": 1}), "not by field id"),
            (json!({"type": "in", "term": "a", "values": []}), "non-empty list"),
            (json!({"type": "eq", "term": "a", "value": null}), "not a literal"),
            (json!({"type": "eq", "term": "a..b", "value": 1}), "not a column path"),
            (json!({"type": "eq", "term": "a", "value": 1, "extra": 2}), "unknown key `extra`"),
            (json!("region = 'EU'"), "boolean or an object"),
        ] {
            let e = Filter::parse(&bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn and_drops_true() {
        let eq = Filter::parse(&json!({"type": "eq", "term": "a", "value": 1})).unwrap();
        assert_eq!(Filter::and(Filter::Const(true), eq.clone()), eq);
    }
}
