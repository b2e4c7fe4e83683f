//! The JSON of Gravitino's REST API v1 (1.3 and main) that the policy source reads: roles,
//! users, groups, catalogs, object identifiers and owners. Unknown fields are ignored, as
//! Gravitino's own client does: main adds some (`id`, `externalId`, `enabled`).

use serde::{Deserialize, Serialize};

/// What every answer carries: `code` 0 on success, else `type` and `message`.
#[derive(Clone, Debug, Deserialize)]
pub struct Envelope {
    pub code: i64,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub message: Option<String>,
}

/// `GET /api/metalakes/{m}/roles`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Names {
    #[serde(default)]
    pub names: Vec<String>,
}

/// `GET /api/metalakes/{m}/roles/{r}`.
#[derive(Clone, Debug, Deserialize)]
pub struct RoleAnswer {
    pub role: Role,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct Role {
    pub name: String,
    #[serde(rename = "securableObjects", default)]
    pub securable_objects: Vec<SecurableObject>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct SecurableObject {
    #[serde(rename = "fullName")]
    pub full_name: String,
    /// `METALAKE`, `catalog`, ...: either case.
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub privileges: Vec<Privilege>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct Privilege {
    pub name: String,
    pub condition: String,
}

/// `GET /api/metalakes/{m}/users?details=true`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Users {
    #[serde(default)]
    pub users: Vec<User>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct User {
    pub name: String,
    #[serde(default)]
    pub roles: Option<Vec<String>>,
    /// Main only; 1.3 has no disabled users.
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// `GET /api/metalakes/{m}/groups?details=true`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Groups {
    #[serde(default)]
    pub groups: Vec<Group>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    #[serde(default)]
    pub roles: Option<Vec<String>>,
}

/// `GET /api/metalakes/{m}/catalogs?details=true`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Catalogs {
    #[serde(default)]
    pub catalogs: Vec<Catalog>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Catalog {
    pub name: String,
    /// `relational`, `fileset`, `messaging`, `model`: only relational catalogs hold schemas of
    /// tables and views.
    #[serde(rename = "type")]
    pub kind: String,
}

/// `GET .../schemas`, `.../tables`, `.../views`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Identifiers {
    #[serde(default)]
    pub identifiers: Vec<Identifier>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Identifier {
    #[serde(default)]
    pub namespace: Vec<String>,
    pub name: String,
}

/// `GET /api/metalakes/{m}/owners/{type}/{fullName}`: no `owner` (or null) is no owner.
#[derive(Clone, Debug, Deserialize)]
pub struct OwnerAnswer {
    #[serde(default)]
    pub owner: Option<Owner>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct Owner {
    pub name: String,
    /// `USER` or `GROUP`.
    #[serde(rename = "type")]
    pub kind: String,
}
