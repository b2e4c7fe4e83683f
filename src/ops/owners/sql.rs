//! What both stores say in SQL: the schema migrations, the statements that read the same in
//! SQLite and PostgreSQL, and how a stored row becomes an intent or a record.

use super::change::{Change, Intent, Object, OwnersError};
use crate::core::ownership::{Kind, Record, Source};
use crate::core::policy::model::OwnerType;

/// Schema migrations, applied in order; SQLite's `PRAGMA user_version` and PostgreSQL's
/// `icegate_migrations` say how many have run. The same statements serve both, with `{id}`
/// standing for each one's auto-numbered key.
pub const MIGRATIONS: &[&str] = &[
    // 1: the records and the intents of changes not yet settled
    "CREATE TABLE owners (
        object_type TEXT NOT NULL CHECK (object_type IN ('SCHEMA', 'TABLE', 'VIEW')),
        full_name TEXT NOT NULL,
        owner TEXT NOT NULL,
        owner_type TEXT NOT NULL CHECK (owner_type IN ('USER', 'GROUP')),
        created_at TEXT NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('creation', 'operator')),
        PRIMARY KEY (object_type, full_name)
    );
    CREATE TABLE intents (
        id {id},
        op TEXT NOT NULL CHECK (op IN ('create', 'drop', 'rename')),
        object_type TEXT NOT NULL,
        full_name TEXT NOT NULL,
        path TEXT NOT NULL,
        to_full_name TEXT,
        to_path TEXT,
        user_name TEXT NOT NULL,
        confirmable BOOLEAN NOT NULL,
        started_at TEXT NOT NULL
    );",
    // 2: a counter every change of `owners` increments, so replicas tell when to re-read
    "CREATE TABLE owners_generation (n BIGINT NOT NULL);
    INSERT INTO owners_generation (n) VALUES (0);",
    // 3: the location the upstream assigned to each caller's stage-create (docs/design.md §4
    // updateTable), so that any replica can check the commit of a staged create
    "CREATE TABLE staged_locations (
        user_name TEXT NOT NULL,
        full_name TEXT NOT NULL,
        location TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        PRIMARY KEY (user_name, full_name)
    );",
];

// The statements below serve both stores. SQLite numbers a `$N` parameter by where it first
// appears, not by N (`SELECT $2, $1` binds the first value to `$2`), so each statement names
// its parameters in order, `$1` first, and both stores bind the same values alike.

pub const BEGIN_INTENT: &str =
    "INSERT INTO intents (op, object_type, full_name, path, to_full_name, to_path, user_name, confirmable, started_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
/// A creation the request itself carried out: its creator is the owner, whatever was recorded.
pub const RECORD_CREATION: &str = "INSERT INTO owners (object_type, full_name, owner, owner_type, created_at, source)
     VALUES ($1, $2, $3, 'USER', $4, 'creation') ON CONFLICT (object_type, full_name)
     DO UPDATE SET owner = excluded.owner, owner_type = excluded.owner_type,
     created_at = excluded.created_at, source = excluded.source";
/// A reconciled creation never replaces an owner recorded in the meantime.
pub const RECORD_RECONCILED_CREATION: &str =
    "INSERT INTO owners (object_type, full_name, owner, owner_type, created_at, source)
     VALUES ($1, $2, $3, 'USER', $4, 'creation') ON CONFLICT (object_type, full_name) DO NOTHING";
pub const DELETE_OWNER: &str = "DELETE FROM owners WHERE object_type = $1 AND full_name = $2";
/// Parameters: the new full name, the object type, the old full name.
pub const RENAME_OWNER: &str = "UPDATE owners SET full_name = $1 WHERE object_type = $2 AND full_name = $3";
pub const DELETE_INTENT: &str = "DELETE FROM intents WHERE id = $1";
pub const SET_OWNER: &str = "INSERT INTO owners (object_type, full_name, owner, owner_type, created_at, source)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (object_type, full_name) DO UPDATE SET owner = excluded.owner,
     owner_type = excluded.owner_type, created_at = excluded.created_at, source = excluded.source";

/// The statements of the staged locations. Expired rows go when a new one is written; RFC 3339
/// times of one format compare as text.
pub const REMEMBER_STAGED: &str = "INSERT INTO staged_locations (user_name, full_name, location, expires_at)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_name, full_name) DO UPDATE SET location = excluded.location, expires_at = excluded.expires_at";
pub const FORGET_EXPIRED_STAGED: &str = "DELETE FROM staged_locations WHERE expires_at < $1";
pub const RECALL_STAGED: &str =
    "SELECT location FROM staged_locations WHERE user_name = $1 AND full_name = $2 AND expires_at > $3";

/// An intent as stored: `[op, object_type, full_name, path, user_name]`, the rename's
/// destination, and `confirmable`.
pub fn intent_of(
    id: i64,
    [op, kind, full_name, path, user]: [String; 5],
    to: Option<(String, String)>,
    confirmable: bool,
) -> Result<Intent, OwnersError> {
    let kind = Kind::parse(&kind).ok_or_else(|| OwnersError::Store(format!("stored object type `{kind}`")))?;
    let object = Object { kind, full_name, path };
    let change = match (op.as_str(), to) {
        ("create", _) => Change::Create(object),
        ("drop", _) => Change::Drop(object),
        ("rename", Some((full_name, path))) => Change::Rename { from: object, to: Object { kind, full_name, path } },
        _ => return Err(OwnersError::Store(format!("stored intent {id} is not valid"))),
    };
    Ok(Intent { change, user, confirmable })
}

/// A stored record: `[object_type, full_name, owner, owner_type, created_at, source]`.
pub fn record_of([kind, full_name, owner, owner_type, created_at, source]: [String; 6]) -> Result<Record, OwnersError> {
    let bad = |what: &str, v: &str| OwnersError::Store(format!("stored {what} `{v}` is not valid"));
    Ok(Record {
        kind: Kind::parse(&kind).ok_or_else(|| bad("object type", &kind))?,
        full_name,
        owner,
        owner_type: OwnerType::parse(&owner_type).ok_or_else(|| bad("owner type", &owner_type))?,
        created_at,
        source: Source::parse(&source).ok_or_else(|| bad("source", &source))?,
    })
}
