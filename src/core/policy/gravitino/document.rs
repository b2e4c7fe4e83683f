//! What was read from a metalake, as a policy document in §3's format with Gravitino's
//! semantics: every caller needs a user record (`require_known_user`), securable objects of the
//! types no Iceberg operation checks are left out and counted, and a privilege or condition
//! that cannot be read refuses the whole read. Lists are sorted, so the same metalake always
//! makes the same canonical JSON (and content hash).

use super::read::{CatalogPrefix, CatalogsFile, GravitinoError, Metalake};
use crate::core::policy::model::{Condition, ObjectType, OwnerType, Privilege};
use serde::Serialize;

/// A policy file's content (docs/design.md §3), as read from Gravitino.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Document {
    pub version: u64,
    pub metalake: String,
    pub require_known_user: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_catalog: Option<String>,
    pub catalogs: Vec<CatalogPrefix>,
    pub users: Vec<DocUser>,
    pub groups: Vec<DocGroup>,
    pub roles: Vec<DocRole>,
    pub owners: Vec<DocOwner>,
    /// Securable objects of types icegate does not enforce, left out.
    #[serde(skip)]
    pub ignored_objects: usize,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DocUser {
    pub name: String,
    pub roles: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DocGroup {
    pub name: String,
    pub roles: Vec<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DocRole {
    pub name: String,
    #[serde(rename = "securableObjects")]
    pub securable_objects: Vec<DocObject>,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct DocObject {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(rename = "fullName")]
    pub full_name: String,
    pub privileges: Vec<DocPrivilege>,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct DocPrivilege {
    pub name: &'static str,
    pub condition: &'static str,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct DocOwner {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(rename = "fullName")]
    pub full_name: String,
    pub owner: String,
    #[serde(rename = "ownerType")]
    pub owner_type: &'static str,
}

/// The types whose grants and owners an Iceberg operation checks.
fn enforced(kind: ObjectType) -> bool {
    matches!(
        kind,
        ObjectType::Metalake | ObjectType::Catalog | ObjectType::Schema | ObjectType::Table | ObjectType::View
    )
}

/// Builds the policy document of a read; `catalogs` is the catalogs file, when configured.
pub fn document(read: &Metalake, catalogs: Option<&CatalogsFile>) -> Result<Document, GravitinoError> {
    let mut ignored_objects = 0;
    let mut roles = Vec::with_capacity(read.roles.len());
    for role in &read.roles {
        let mut objects = Vec::with_capacity(role.securable_objects.len());
        for object in &role.securable_objects {
            let Some(kind) = ObjectType::parse(&object.kind).filter(|k| enforced(*k)) else {
                ignored_objects += 1;
                continue;
            };
            let mut privileges = Vec::with_capacity(object.privileges.len());
            for p in &object.privileges {
                let Some(name) = Privilege::parse(&p.name) else {
                    return Err(GravitinoError::UnknownPrivilege {
                        role: role.name.clone(),
                        privilege: p.name.clone(),
                        kind,
                        full_name: object.full_name.clone(),
                    });
                };
                let Some(condition) = Condition::parse(&p.condition) else {
                    return Err(GravitinoError::UnknownCondition {
                        role: role.name.clone(),
                        privilege: p.name.clone(),
                        kind,
                        full_name: object.full_name.clone(),
                        condition: p.condition.clone(),
                    });
                };
                privileges.push(DocPrivilege { name: name.as_str(), condition: condition.as_str() });
            }
            privileges.sort();
            privileges.dedup();
            objects.push(DocObject { kind: kind.as_str(), full_name: object.full_name.clone(), privileges });
        }
        objects.sort();
        roles.push(DocRole { name: role.name.clone(), securable_objects: objects });
    }
    roles.sort_by(|a, b| a.name.cmp(&b.name));
    let sorted = |names: &Option<Vec<String>>| {
        let mut names = names.clone().unwrap_or_default();
        names.sort();
        names.dedup();
        names
    };
    let mut users: Vec<DocUser> = read
        .users
        .iter()
        .map(|u| DocUser { name: u.name.clone(), roles: sorted(&u.roles), enabled: u.enabled.filter(|e| !e) })
        .collect();
    users.sort_by(|a, b| a.name.cmp(&b.name));
    let mut groups: Vec<DocGroup> =
        read.groups.iter().map(|g| DocGroup { name: g.name.clone(), roles: sorted(&g.roles) }).collect();
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    let mut owners = Vec::with_capacity(read.owners.len());
    for o in read.owners.iter().filter(|o| enforced(o.kind)) {
        let owner_type = match OwnerType::parse(&o.owner.kind) {
            Some(OwnerType::User) => "USER",
            Some(OwnerType::Group) => "GROUP",
            None => {
                return Err(GravitinoError::UnknownOwnerType {
                    kind: o.kind,
                    full_name: o.full_name.clone(),
                    owner_type: o.owner.kind.clone(),
                });
            }
        };
        owners.push(DocOwner {
            kind: o.kind.as_str(),
            full_name: o.full_name.clone(),
            owner: o.owner.name.clone(),
            owner_type,
        });
    }
    owners.sort();
    Ok(Document {
        version: 1,
        metalake: read.name.clone(),
        require_known_user: true,
        default_catalog: catalogs.and_then(|c| c.default_catalog.clone()),
        catalogs: catalogs.map(|c| c.catalogs.clone()).unwrap_or_default(),
        users,
        groups,
        roles,
        owners,
        ignored_objects,
    })
}

impl Document {
    /// The canonical JSON: keys in a fixed order, lists sorted, one entry of each list per
    /// line (so that a diagnostic's line points at the entry).
    pub fn canonical_json(&self) -> String {
        let mut out = String::with_capacity(256 + 128 * (self.users.len() + self.roles.len() + self.owners.len()));
        out.push_str("{\"version\":1,\"metalake\":");
        out.push_str(&quote(&self.metalake));
        out.push_str(",\"require_known_user\":");
        out.push_str(if self.require_known_user { "true" } else { "false" });
        if let Some(d) = &self.default_catalog {
            out.push_str(",\"default_catalog\":");
            out.push_str(&quote(d));
        }
        list(&mut out, "catalogs", &self.catalogs);
        list(&mut out, "users", &self.users);
        list(&mut out, "groups", &self.groups);
        list(&mut out, "roles", &self.roles);
        list(&mut out, "owners", &self.owners);
        out.push_str("}\n");
        out
    }
}

fn list<T: Serialize>(out: &mut String, key: &str, entries: &[T]) {
    out.push_str(",\n\"");
    out.push_str(key);
    out.push_str("\":[");
    for (i, e) in entries.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        out.push_str(&serde_json::to_string(e).unwrap_or_default());
    }
    out.push(']');
}

/// A JSON string (serializing a string cannot fail; were it to, the empty text would not load,
/// which fails closed).
pub(super) fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}
