//! The table's current schema, read from a loadTable-like answer's `metadata` only when the
//! answer carries restrictions: `current-schema-id` and the matching entry of `schemas` (or a
//! format-1 table's `schema`), and a column path resolved to its field id, type and
//! nullability, nested struct fields by their dotted path.

use super::action::ColumnPath;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use thiserror::Error;

/// Why a policy's restriction cannot be issued for a table as it is now: fails closed.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ResolveError {
    #[error("the table's metadata names no current schema icegate can read")]
    NoSchema,
    #[error("column `{0}` is not in the table's current schema")]
    UnknownColumn(String),
    #[error("column `{0}` lies inside a list or map; only top-level columns and struct fields can be named")]
    NotInStruct(String),
    #[error("action `{action}` does not apply to column `{column}` of type `{ty}`{}", if *required { " (required)" } else { "" })]
    NotApplicable { column: String, action: &'static str, ty: String, required: bool },
    #[error("the upstream's `read-restrictions` could not be read: {0}")]
    Upstream(String),
}

/// A resolved column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub id: i64,
    /// The Iceberg type: a primitive's name, or `struct`, `list`, `map`.
    pub ty: String,
    pub required: bool,
}

/// The current schema's top-level fields.
#[derive(Debug)]
pub struct Schema {
    fields: Vec<Value>,
}

#[derive(Deserialize)]
struct SchemaId {
    #[serde(rename = "schema-id")]
    id: Option<i64>,
}

#[derive(Deserialize)]
struct Fields {
    fields: Vec<Value>,
}

impl Schema {
    /// From the raw values of the metadata's `current-schema-id`, `schemas` and `schema`
    /// members (whichever it has). Only the current schema is parsed whole.
    pub fn read(current: Option<&[u8]>, schemas: Option<&[u8]>, schema: Option<&[u8]>) -> Result<Self, ResolveError> {
        let fields = |raw: &[u8]| serde_json::from_slice::<Fields>(raw).map(|f| f.fields).ok();
        let current: Option<i64> = current.and_then(|c| serde_json::from_slice(c).ok());
        if let (Some(id), Some(schemas)) = (current, schemas) {
            let list: Vec<&RawValue> = serde_json::from_slice(schemas).map_err(|_| ResolveError::NoSchema)?;
            for raw in list {
                let this: SchemaId = serde_json::from_str(raw.get()).map_err(|_| ResolveError::NoSchema)?;
                if this.id == Some(id) {
                    return fields(raw.get().as_bytes()).map(|fields| Self { fields }).ok_or(ResolveError::NoSchema);
                }
            }
            return Err(ResolveError::NoSchema);
        }
        // a format-1 table without `schemas`
        schema.and_then(fields).map(|fields| Self { fields }).ok_or(ResolveError::NoSchema)
    }

    /// A schema given as JSON (an entry of a metadata's `schemas`, or an `add-schema`'s
    /// `schema`): its `fields`.
    pub fn from_value(value: &Value) -> Option<Self> {
        value.get("fields").and_then(Value::as_array).map(|fields| Self { fields: fields.clone() })
    }

    /// The column at `path`: each part a field of the struct the previous part names.
    pub fn resolve(&self, path: &ColumnPath) -> Result<Column, ResolveError> {
        let mut fields = &self.fields;
        let mut found = None;
        for (i, part) in path.parts().iter().enumerate() {
            if i > 0 {
                let Some(Value::Object(ty)) = found.and_then(|f: &Value| f.get("type")) else {
                    return Err(ResolveError::NotInStruct(path.to_string()));
                };
                match (ty.get("type").and_then(Value::as_str), ty.get("fields")) {
                    (Some("struct"), Some(Value::Array(inner))) => fields = inner,
                    _ => return Err(ResolveError::NotInStruct(path.to_string())),
                }
            }
            found = fields.iter().find(|f| f.get("name").and_then(Value::as_str) == Some(part.as_str()));
            if found.is_none() {
                return Err(ResolveError::UnknownColumn(path.to_string()));
            }
        }
        let field = found.ok_or_else(|| ResolveError::UnknownColumn(path.to_string()))?;
        let id = field.get("id").and_then(Value::as_i64).ok_or(ResolveError::NoSchema)?;
        let ty = match field.get("type") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Object(o)) => o.get("type").and_then(Value::as_str).unwrap_or("unknown").to_owned(),
            _ => return Err(ResolveError::NoSchema),
        };
        let required = field.get("required").and_then(Value::as_bool).unwrap_or(false);
        Ok(Column { id, ty, required })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        let schemas = json!([
            {"schema-id": 0, "type": "struct", "fields": [{"id": 1, "name": "old", "required": false, "type": "string"}]},
            {"schema-id": 1, "type": "struct", "fields": [
                {"id": 1, "name": "email", "required": false, "type": "string"},
                {"id": 2, "name": "address", "required": false, "type": {"type": "struct", "fields": [
                    {"id": 3, "name": "city", "required": true, "type": "string"}]}},
                {"id": 4, "name": "tags", "required": false, "type": {"type": "list", "element-id": 5,
                    "element": "string", "element-required": false}}]}
        ]);
        Schema::read(Some(b"1"), Some(schemas.to_string().as_bytes()), None).unwrap()
    }

    fn path(s: &str) -> ColumnPath {
        ColumnPath::parse(s).unwrap()
    }

    #[test]
    fn columns_resolve_in_the_current_schema_nested_ones_by_path() {
        let s = schema();
        assert_eq!(s.resolve(&path("email")).unwrap(), Column { id: 1, ty: "string".into(), required: false });
        assert_eq!(s.resolve(&path("address.city")).unwrap(), Column { id: 3, ty: "string".into(), required: true });
        assert_eq!(s.resolve(&path("old")), Err(ResolveError::UnknownColumn("old".into())));
        assert_eq!(s.resolve(&path("tags.element")), Err(ResolveError::NotInStruct("tags.element".into())));
        assert_eq!(s.resolve(&path("email.x")), Err(ResolveError::NotInStruct("email.x".into())));
    }

    #[test]
    fn a_current_schema_id_without_its_schema_is_no_schema() {
        let schemas = json!([{"schema-id": 0, "type": "struct", "fields": []}]).to_string();
        assert_eq!(Schema::read(Some(b"7"), Some(schemas.as_bytes()), None).unwrap_err(), ResolveError::NoSchema);
        let v1 = json!({"type": "struct", "fields": [{"id": 9, "name": "a", "required": true, "type": "int"}]});
        let s = Schema::read(None, None, Some(v1.to_string().as_bytes())).unwrap();
        assert_eq!(s.resolve(&path("a")).unwrap().id, 9);
    }
}
