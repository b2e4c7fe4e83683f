//! The `read-restrictions` member a trusted reader gets (the REST spec's `ReadRestrictions`,
//! apache/iceberg PR #13879): `required-column-projections` (`{"field-id", "action"}`) and a
//! `required-row-filter` whose columns are `IdReference`s, resolved against the current schema
//! and combined with what the upstream sent itself (filters `and`, the stricter action).

use super::action::Action;
use super::apply::Applied;
use super::schema::{ResolveError, Schema};
use serde_json::{Map, Value, json};

const FILTER: &str = "required-row-filter";
const PROJECTIONS: &str = "required-column-projections";

/// The restrictions `applied` on a table of `schema`, combined with the upstream's own
/// (`upstream`, its `read-restrictions` value, when it sent one).
pub fn read_restrictions(applied: &Applied, schema: &Schema, upstream: Option<&Value>) -> Result<Value, ResolveError> {
    let upstream = match upstream {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(_) => return Err(ResolveError::Upstream("not an object".to_owned())),
    };
    let mut projections: Vec<Value> = match upstream.get(PROJECTIONS) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(_) => return Err(ResolveError::Upstream(format!("`{PROJECTIONS}` is not a list"))),
    };
    let mut ours: Vec<(i64, Action)> = Vec::with_capacity(applied.columns.len());
    for (path, action) in &applied.columns {
        let column = schema.resolve(path)?;
        let upstream_entry =
            projections.iter_mut().find(|p| p.get("field-id").and_then(Value::as_i64) == Some(column.id));
        let action = match upstream_entry {
            Some(entry) => {
                let theirs = entry.get("action").and_then(Value::as_str).unwrap_or("");
                // the same action stays; any other (one icegate may not know included) is
                // replaced by the action that shows nothing
                let merged = if theirs == action.as_str() { *action } else { Action::ReplaceWithNull };
                if !merged.applies_to(&column.ty, column.required) {
                    return Err(not_applicable(path.to_string(), merged, &column.ty, column.required));
                }
                *entry = json!({ "field-id": column.id, "action": merged.as_str() });
                continue;
            }
            None => *action,
        };
        if !action.applies_to(&column.ty, column.required) {
            return Err(not_applicable(path.to_string(), action, &column.ty, column.required));
        }
        if !ours.iter().any(|(id, _)| *id == column.id) {
            ours.push((column.id, action));
        }
    }
    ours.sort();
    projections.extend(ours.into_iter().map(|(id, a)| json!({ "field-id": id, "action": a.as_str() })));
    let filter = match &applied.row_filter {
        None => None,
        Some(f) => Some(f.to_ids_json(&mut |path| schema.resolve(path).map(|c| c.id))?),
    };
    let filter = match (upstream.get(FILTER), filter) {
        (None | Some(Value::Null) | Some(Value::Bool(true)), ours) => ours,
        (Some(theirs), None) => Some(theirs.clone()),
        (Some(theirs), Some(ours)) => Some(json!({ "type": "and", "left": theirs, "right": ours })),
    };
    let mut out = upstream;
    out.remove(FILTER);
    out.remove(PROJECTIONS);
    if let Some(f) = filter {
        out.insert(FILTER.to_owned(), f);
    }
    if !projections.is_empty() {
        out.insert(PROJECTIONS.to_owned(), Value::Array(projections));
    }
    Ok(Value::Object(out))
}

fn not_applicable(column: String, action: Action, ty: &str, required: bool) -> ResolveError {
    ResolveError::NotApplicable { column, action: action.as_str(), ty: ty.to_owned(), required }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::restrictions::action::ColumnPath;
    use crate::core::restrictions::expr::Filter;

    fn schema() -> Schema {
        let fields = json!({"type": "struct", "fields": [
            {"id": 1, "name": "id", "required": true, "type": "long"},
            {"id": 2, "name": "email", "required": false, "type": "string"},
            {"id": 3, "name": "region", "required": false, "type": "string"}]});
        Schema::read(None, None, Some(fields.to_string().as_bytes())).unwrap()
    }

    fn applied(columns: &[(&str, Action)], filter: Option<Value>) -> Applied {
        Applied {
            table: "prod.s.t".into(),
            entries: Vec::new(),
            trusted: true,
            row_filter: filter.map(|f| Filter::parse(&f).unwrap()),
            columns: columns.iter().map(|(c, a)| (ColumnPath::parse(c).unwrap(), *a)).collect(),
        }
    }

    #[test]
    fn names_become_field_ids() {
        let a =
            applied(&[("email", Action::MaskAlphanum)], Some(json!({"type": "eq", "term": "region", "value": "EU"})));
        let got = read_restrictions(&a, &schema(), None).unwrap();
        assert_eq!(
            got,
            json!({
                "required-row-filter": {"type": "eq", "left": {"type": "reference", "id": 3}, "right": "EU"},
                "required-column-projections": [{"field-id": 2, "action": "mask-alphanum"}]
            })
        );
    }

    #[test]
    fn the_upstreams_restrictions_are_merged_not_replaced() {
        let a = applied(
            &[("email", Action::MaskAlphanum), ("region", Action::ShowFirst4)],
            Some(json!({"type": "eq", "term": "region", "value": "EU"})),
        );
        let upstream = json!({
            "required-row-filter": {"type": "gt", "left": {"type": "reference", "id": 1}, "right": 10},
            "required-column-projections": [{"field-id": 2, "action": "sha-256-global"}, {"field-id": 1, "action": "mask-to-fixed-value"}]
        });
        let got = read_restrictions(&a, &schema(), Some(&upstream)).unwrap();
        assert_eq!(
            got,
            json!({
                "required-row-filter": {"type": "and",
                    "left": {"type": "gt", "left": {"type": "reference", "id": 1}, "right": 10},
                    "right": {"type": "eq", "left": {"type": "reference", "id": 3}, "right": "EU"}},
                "required-column-projections": [
                    {"field-id": 2, "action": "replace-with-null"},
                    {"field-id": 1, "action": "mask-to-fixed-value"},
                    {"field-id": 3, "action": "show-first-4"}]
            })
        );
    }

    #[test]
    fn a_column_the_schema_lacks_or_an_action_its_type_refuses_fails_closed() {
        let missing = applied(&[("ssn", Action::ReplaceWithNull)], None);
        assert_eq!(read_restrictions(&missing, &schema(), None), Err(ResolveError::UnknownColumn("ssn".into())));
        let term = applied(&[], Some(json!({"type": "eq", "term": "country", "value": "EU"})));
        assert_eq!(read_restrictions(&term, &schema(), None), Err(ResolveError::UnknownColumn("country".into())));
        let wrong = applied(&[("id", Action::MaskAlphanum)], None);
        assert!(matches!(read_restrictions(&wrong, &schema(), None), Err(ResolveError::NotApplicable { .. })));
        let required = applied(&[("id", Action::ReplaceWithNull)], None);
        assert!(matches!(read_restrictions(&required, &schema(), None), Err(ResolveError::NotApplicable { .. })));
    }
}
