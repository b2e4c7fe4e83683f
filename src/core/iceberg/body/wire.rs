//! The request schemas icegate reads, as the upstream reads them, and what a table commit
//! means for authorization.
//!
//! Iceberg's Java parsers lower-case `action` and `type` (`toLowerCase(Locale.ROOT)`) and still
//! accept the legacy `updated`/`removed` fields of property updates, so both are read here
//! too: an update the upstream would apply as a move must not look like a plain commit.

use super::model::{BodyError, SchemaChanges, TableUpdate};
use crate::core::iceberg::json;
use crate::core::iceberg::names::NameRules;
use crate::core::iceberg::{Namespace, TableIdent};
use serde::Deserialize;
use serde::de::{self, IgnoredAny};
use serde_json::value::RawValue;
use std::collections::HashMap;

/// The table properties that say where data and metadata live (docs/design.md §4, §8).
pub const LOCATION_PROPERTIES: [&str; 5] =
    ["location", "write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path"];

/// `TableIdentifier`.
#[derive(Clone, Deserialize)]
pub(super) struct Ident {
    namespace: Vec<String>,
    name: String,
}

impl Ident {
    /// Checked as a path's names are, folded where the catalog folds names.
    pub(super) fn checked(self, rules: &NameRules<'_>, field: &str) -> Result<TableIdent, BodyError> {
        rules
            .namespace(self.namespace)
            .and_then(|ns| TableIdent::new(ns, rules.fold(self.name)))
            .map_err(|source| BodyError::Name { field: field.to_owned(), source })
    }
}

pub(super) fn checked_name(name: String, field: &str, rules: &NameRules<'_>) -> Result<String, BodyError> {
    rules.name(name).map_err(|source| BodyError::Name { field: field.to_owned(), source })
}

pub(super) fn checked_namespace(
    levels: Vec<String>,
    field: &str,
    rules: &NameRules<'_>,
) -> Result<Namespace, BodyError> {
    rules.namespace(levels).map_err(|source| BodyError::Name { field: field.to_owned(), source })
}

/// The namespace property that says where a namespace's tables go by default.
const NAMESPACE_LOCATION: &str = "location";

#[derive(Deserialize)]
pub(super) struct CreateNamespace {
    pub namespace: Vec<String>,
    /// `null` is the same as absent.
    properties: Option<HashMap<String, IgnoredAny>>,
}

impl CreateNamespace {
    /// Whether the body gives the namespace a `location` (any value, any case of the key).
    pub fn places_data(&self) -> bool {
        self.properties.iter().flatten().any(|(k, _)| k.eq_ignore_ascii_case(NAMESPACE_LOCATION))
    }
}

/// `UpdateNamespacePropertiesRequest`.
#[derive(Deserialize)]
pub(super) struct UpdateProperties {
    removals: Option<Vec<String>>,
    updates: Option<HashMap<String, IgnoredAny>>,
}

impl UpdateProperties {
    /// Whether the update sets or removes the namespace's `location` (any case of the key).
    pub fn moves_location(&self) -> bool {
        self.removals.iter().flatten().any(|k| k.eq_ignore_ascii_case(NAMESPACE_LOCATION))
            || self.updates.iter().flatten().any(|(k, _)| k.eq_ignore_ascii_case(NAMESPACE_LOCATION))
    }
}

#[derive(Deserialize)]
pub(super) struct CreateTable {
    pub name: String,
    /// `null` is the same as absent; any string, `""` included, is an explicit location.
    pub location: Option<String>,
    #[serde(rename = "stage-create")]
    pub stage_create: Option<bool>,
    /// Initial table properties: `write.data.path` and its siblings place data as surely as
    /// `location` does. Values stay raw: only a location property's is read.
    pub properties: Option<HashMap<String, Box<RawValue>>>,
}

impl CreateTable {
    /// Whether the body chooses where the table's files go: `location`, or a location property.
    pub fn places_data(&self) -> bool {
        self.location.is_some() || self.properties.iter().flatten().any(|(k, _)| is_location_property(k))
    }

    /// Every location the body chooses: `location`, then the location properties' values (a
    /// location property that is not a string is 400).
    pub fn chosen_locations(&self) -> Result<Vec<String>, BodyError> {
        let mut out: Vec<String> = self.location.iter().cloned().collect();
        for (key, raw) in self.properties.iter().flatten().filter(|(k, _)| is_location_property(k)) {
            let value = json::from_checked_str::<String>(raw.get())
                .map_err(|_| BodyError::Field { field: format!("properties.{key}"), expected: "a string" })?;
            out.push(value);
        }
        Ok(out)
    }
}

/// `RegisterTableRequest` and `RegisterViewRequest`.
#[derive(Deserialize)]
pub(super) struct Register {
    pub name: String,
    #[serde(rename = "metadata-location")]
    _metadata_location: String,
}

#[derive(Deserialize)]
pub(super) struct CreateView {
    pub name: String,
}

#[derive(Deserialize)]
pub(super) struct Rename {
    pub source: Ident,
    pub destination: Ident,
}

#[derive(Deserialize)]
pub(super) struct Transaction {
    #[serde(rename = "table-changes")]
    pub table_changes: Vec<Commit>,
}

/// `CommitViewRequest`: only its identifier matters; replaceView is for the view's owner
/// whatever it changes.
#[derive(Deserialize)]
pub(super) struct CommitView {
    pub identifier: Option<Ident>,
}

#[derive(Deserialize)]
pub(super) struct Sign {
    pub region: String,
    pub method: String,
    pub uri: String,
    pub headers: std::collections::BTreeMap<String, Vec<String>>,
    pub provider: Option<String>,
    pub body: Option<String>,
    /// `RemoteSignRequest.properties` (Iceberg 1.11+): a map of strings, relayed as sent.
    pub properties: Option<std::collections::BTreeMap<String, String>>,
}

/// `CommitTableRequest`; `requirements` and `updates` may be absent.
#[derive(Deserialize)]
pub(super) struct Commit {
    pub identifier: Option<Ident>,
    requirements: Option<Vec<Requirement>>,
    updates: Option<Vec<Update>>,
}

#[derive(Deserialize)]
struct Requirement {
    #[serde(rename = "type")]
    kind: String,
}

/// A `TableUpdate`. The property fields stay raw until `action` says how to read them, since
/// other actions may one day use the same names for other shapes.
#[derive(Deserialize)]
struct Update {
    action: String,
    location: Option<Box<RawValue>>,
    updates: Option<Box<RawValue>>,
    updated: Option<Box<RawValue>>,
    removals: Option<Box<RawValue>>,
    removed: Option<Box<RawValue>>,
    schema: Option<Box<RawValue>>,
    #[serde(rename = "schema-id")]
    schema_id: Option<Box<RawValue>>,
}

impl Commit {
    /// `at` prefixes field names in errors (`table-changes[0].`).
    pub(super) fn table_update(&self, at: &str) -> Result<TableUpdate, BodyError> {
        let asserts_create = self.requirements.iter().flatten().any(|r| is(&r.kind, "assert-create"));
        let mut update = TableUpdate { asserts_create, ..TableUpdate::default() };
        for (i, u) in self.updates.iter().flatten().enumerate() {
            // every update is read, so that a malformed one is 400 wherever it stands
            let field = |field: &str| format!("{at}updates[{i}].{field}");
            u.schema_change(&mut update.schemas, &field)?;
            match u.set_location(&field)? {
                Some(location) => update.set_locations.push(location),
                None => {
                    if let Some(values) = u.location_properties(&field)? {
                        update.location_properties = true;
                        update.property_locations.extend(values);
                    }
                }
            }
        }
        Ok(update)
    }
}

impl Update {
    /// Notes an `add-schema`, `set-current-schema` or `remove-schemas` in `changes`; the
    /// fields it reads must have the spec's types.
    fn schema_change(&self, changes: &mut SchemaChanges, field: &dyn Fn(&str) -> String) -> Result<(), BodyError> {
        if is(&self.action, "add-schema") {
            let schema =
                self.schema.as_ref().and_then(|raw| json::from_checked_str::<serde_json::Value>(raw.get()).ok());
            match schema {
                Some(schema @ serde_json::Value::Object(_)) => changes.added.push(schema),
                _ => return Err(BodyError::Field { field: field("schema"), expected: "a schema object" }),
            }
        } else if is(&self.action, "set-current-schema") {
            let id = self.schema_id.as_ref().and_then(|raw| json::from_checked_str::<i64>(raw.get()).ok());
            let Some(id) = id else {
                return Err(BodyError::Field { field: field("schema-id"), expected: "an integer" });
            };
            changes.current.push((id, changes.added.len()));
        } else if is(&self.action, "remove-schemas") {
            changes.removes = true;
        }
        Ok(())
    }

    /// The location of a `set-location`; `None` for any other action.
    fn set_location(&self, field: &dyn Fn(&str) -> String) -> Result<Option<String>, BodyError> {
        if !is(&self.action, "set-location") {
            return Ok(None);
        }
        match &self.location {
            Some(raw) => json::from_checked_str::<String>(raw.get())
                .map(Some)
                .map_err(|_| BodyError::Field { field: field("location"), expected: "a string" }),
            None => Err(BodyError::Field { field: field("location"), expected: "a string" }),
        }
    }

    /// The values a property update gives location properties: `None` when it touches none,
    /// no values for a removal (a location property that is set to anything but a string is 400).
    fn location_properties(&self, field: &dyn Fn(&str) -> String) -> Result<Option<Vec<String>>, BodyError> {
        let action = self.action.to_lowercase();
        match action.as_str() {
            "set-properties" => {
                let maps = properties::<HashMap<String, Box<RawValue>>>(
                    [("updates", &self.updates), ("updated", &self.updated)],
                    field,
                    "an object of properties",
                )?;
                let mut values = Vec::new();
                let mut touched = false;
                for (key, raw) in maps.iter().flatten().filter(|(k, _)| is_location_property(k)) {
                    touched = true;
                    let value = json::from_checked_str::<String>(raw.get()).map_err(|_| BodyError::Field {
                        field: field(&format!("updates.{key}")),
                        expected: "a string",
                    })?;
                    values.push(value);
                }
                Ok(touched.then_some(values))
            }
            "remove-properties" => {
                let lists = properties::<Vec<String>>(
                    [("removals", &self.removals), ("removed", &self.removed)],
                    field,
                    "an array of property names",
                )?;
                Ok(lists.iter().flatten().any(|k| is_location_property(k)).then(Vec::new))
            }
            _ => Ok(None),
        }
    }
}

/// Reads the current and the legacy field of a property update; both are read, since which
/// one the upstream honours depends on its version. At least one must be present.
fn properties<T: de::DeserializeOwned>(
    fields: [(&str, &Option<Box<RawValue>>); 2],
    field: &dyn Fn(&str) -> String,
    expected: &'static str,
) -> Result<Vec<T>, BodyError> {
    let mut out = Vec::with_capacity(2);
    for (name, raw) in fields {
        if let Some(raw) = raw {
            let value = json::from_checked_str::<T>(raw.get())
                .map_err(|_| BodyError::Field { field: field(name), expected })?;
            out.push(value);
        }
    }
    if out.is_empty() {
        return Err(BodyError::Field { field: field(fields[0].0), expected });
    }
    Ok(out)
}

/// Case-insensitive: a catalog that folds property names must not turn `WRITE.DATA.PATH` into
/// a move icegate did not see; reading too many keys as moves only asks for more privilege.
fn is_location_property(key: &str) -> bool {
    let key = key.to_lowercase();
    LOCATION_PROPERTIES.contains(&key.as_str())
}

/// As the upstream compares discriminators: lower-cased first.
fn is(value: &str, expected: &str) -> bool {
    value.to_lowercase() == expected
}
