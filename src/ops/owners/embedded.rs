//! The embedded ownership store: one SQLite file (WAL, `synchronous = FULL`, so a commit is
//! fsync'd before it returns), its schema migrations, and the statements the store runs.

use super::change::{Change, Intent, OwnersError, Settlement};
use super::sql::{
    BEGIN_INTENT, DELETE_INTENT, DELETE_OWNER, FORGET_EXPIRED_STAGED, MIGRATIONS, RECALL_STAGED, RECORD_CREATION,
    RECORD_RECONCILED_CREATION, REMEMBER_STAGED, RENAME_OWNER, SET_OWNER, intent_of, record_of,
};
use crate::core::ownership::{Kind, Record};
use crate::core::policy::model::OwnerType;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::time::Duration;

/// An open store file.
#[derive(Debug)]
pub struct Embedded {
    conn: Connection,
}

fn db(e: rusqlite::Error) -> OwnersError {
    OwnersError::Store(e.to_string())
}

impl Embedded {
    /// Opens (creating) the file and brings its schema up to date.
    pub fn open(path: &Path, busy_timeout: Duration) -> Result<Self, OwnersError> {
        let open = || -> Result<Self, rusqlite::Error> {
            let mut conn = Connection::open(path)?;
            conn.busy_timeout(busy_timeout)?;
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "FULL")?;
            let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
            let tx = conn.transaction()?;
            for (i, sql) in MIGRATIONS.iter().enumerate() {
                if i64::try_from(i).unwrap_or(i64::MAX) >= version {
                    tx.execute_batch(&sql.replace("{id}", "INTEGER PRIMARY KEY"))?;
                }
            }
            tx.pragma_update(None, "user_version", MIGRATIONS.len())?;
            tx.commit()?;
            Ok(Self { conn })
        };
        open().map_err(|e| OwnersError::Open { path: path.display().to_string(), reason: e.to_string() })
    }

    pub fn records(&self) -> Result<Vec<Record>, OwnersError> {
        let mut stmt = self
            .conn
            .prepare("SELECT object_type, full_name, owner, owner_type, created_at, source FROM owners")
            .map_err(db)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                ))
            })
            .map_err(db)?;
        let mut out = Vec::new();
        for row in rows {
            let (kind, full_name, owner, owner_type, created_at, source) = row.map_err(db)?;
            out.push(record_of([kind, full_name, owner, owner_type, created_at, source])?);
        }
        Ok(out)
    }

    /// Records the intent durably; returns its id.
    pub fn begin(&mut self, intent: &Intent, now: &str) -> Result<i64, OwnersError> {
        let (op, object, to) = match &intent.change {
            Change::Create(o) => ("create", o, None),
            Change::Drop(o) => ("drop", o, None),
            Change::Rename { from, to } => ("rename", from, Some(to)),
        };
        self.conn
            .execute(
                BEGIN_INTENT,
                params![
                    op,
                    object.kind.as_str(),
                    object.full_name,
                    object.path,
                    to.map(|t| t.full_name.as_str()),
                    to.map(|t| t.path.as_str()),
                    intent.user,
                    intent.confirmable,
                    now
                ],
            )
            .map_err(db)?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The intents not yet settled that began before `cutoff` (RFC 3339), oldest first.
    pub fn pending(&self, cutoff: &str) -> Result<Vec<(i64, Intent)>, OwnersError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, op, object_type, full_name, path, to_full_name, to_path, user_name, confirmable
                 FROM intents WHERE started_at < ?1 ORDER BY id",
            )
            .map_err(db)?;
        let rows = stmt
            .query_map([cutoff], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, Option<String>>(5)?,
                    r.get::<_, Option<String>>(6)?,
                    r.get::<_, String>(7)?,
                    r.get::<_, bool>(8)?,
                ))
            })
            .map_err(db)?;
        let mut out = Vec::new();
        for row in rows {
            let (id, op, kind, full_name, path, to_name, to_path, user, confirmable) = row.map_err(db)?;
            out.push((id, intent_of(id, [op, kind, full_name, path, user], to_name.zip(to_path), confirmable)?));
        }
        Ok(out)
    }

    /// Settles an intent in one transaction: applies its change when it happened, and forgets
    /// the intent either way.
    pub fn settle(&mut self, id: i64, intent: &Intent, settlement: Settlement, now: &str) -> Result<(), OwnersError> {
        let tx = self.conn.transaction().map_err(db)?;
        if let Settlement::Happened { direct } = settlement {
            match &intent.change {
                Change::Create(o) => {
                    let statement = if direct { RECORD_CREATION } else { RECORD_RECONCILED_CREATION };
                    tx.execute(statement, params![o.kind.as_str(), o.full_name, intent.user, now]).map_err(db)?;
                }
                Change::Drop(o) => {
                    tx.execute(DELETE_OWNER, params![o.kind.as_str(), o.full_name]).map_err(db)?;
                }
                Change::Rename { from, to } => {
                    tx.execute(DELETE_OWNER, params![to.kind.as_str(), to.full_name]).map_err(db)?;
                    tx.execute(RENAME_OWNER, params![to.full_name, from.kind.as_str(), from.full_name]).map_err(db)?;
                }
            }
        }
        tx.execute(DELETE_INTENT, params![id]).map_err(db)?;
        tx.commit().map_err(db)
    }

    /// `icegate owners set`.
    pub fn set(&mut self, record: &Record) -> Result<(), OwnersError> {
        let owner_type = if record.owner_type == OwnerType::User { "USER" } else { "GROUP" };
        self.conn
            .execute(
                SET_OWNER,
                params![
                    record.kind.as_str(),
                    record.full_name,
                    record.owner,
                    owner_type,
                    record.created_at,
                    record.source.as_str()
                ],
            )
            .map(drop)
            .map_err(db)
    }

    /// `icegate owners remove`; false when there was no record.
    pub fn remove(&mut self, kind: Kind, full_name: &str) -> Result<bool, OwnersError> {
        let n = self.conn.execute(DELETE_OWNER, params![kind.as_str(), full_name]).map_err(db)?;
        Ok(n > 0)
    }

    /// `icegate owners forget`; false when there was no such intent.
    pub fn forget(&mut self, id: i64) -> Result<bool, OwnersError> {
        Ok(self.conn.execute(DELETE_INTENT, params![id]).map_err(db)? > 0)
    }

    /// Changes whenever another connection commits to the file.
    pub fn data_version(&self) -> Result<i64, OwnersError> {
        self.conn.pragma_query_value(None, "data_version", |r| r.get(0)).map_err(db)
    }

    /// Records the location a stage-create answer carried, until `expires_at`.
    pub fn remember_staged(
        &mut self,
        user: &str,
        full_name: &str,
        location: &str,
        (now, expires_at): (&str, &str),
    ) -> Result<(), OwnersError> {
        let tx = self.conn.transaction().map_err(db)?;
        tx.execute(FORGET_EXPIRED_STAGED, params![now]).map_err(db)?;
        tx.execute(REMEMBER_STAGED, params![user, full_name, location, expires_at]).map_err(db)?;
        tx.commit().map_err(db)
    }

    /// The location `user`'s stage-create of `full_name` was assigned, unless expired.
    pub fn recall_staged(&self, user: &str, full_name: &str, now: &str) -> Result<Option<String>, OwnersError> {
        self.conn.query_row(RECALL_STAGED, params![user, full_name, now], |r| r.get(0)).optional().map_err(db)
    }

    /// One record's owner.
    pub fn get(&self, kind: Kind, full_name: &str) -> Result<Option<String>, OwnersError> {
        self.conn
            .query_row(
                "SELECT owner FROM owners WHERE object_type = ?1 AND full_name = ?2",
                params![kind.as_str(), full_name],
                |r| r.get(0),
            )
            .optional()
            .map_err(db)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::owners::Object;

    fn table(name: &str) -> Object {
        Object {
            kind: Kind::Table,
            full_name: format!("prod.s.{name}"),
            path: format!("/v1/namespaces/s/tables/{name}"),
        }
    }

    fn create(name: &str, user: &str) -> Intent {
        Intent { change: Change::Create(table(name)), user: user.into(), confirmable: true }
    }

    #[test]
    fn staged_locations_are_recalled_per_user_and_table_until_they_expire() {
        let dir = std::env::temp_dir().join(format!("icegate-embedded-staged-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut store = Embedded::open(&dir.join("owners.db"), Duration::from_millis(100)).unwrap();
        let (t0, t1, t2) = ("2026-12-03T10:00:00.000Z", "2026-12-03T11:00:00.000Z", "2026-12-03T12:00:00.000Z");
        store.remember_staged("carl", "prod.sales.t", "s3://lake/sales/t", (t0, t1)).unwrap();
        assert_eq!(store.recall_staged("carl", "prod.sales.t", t0).unwrap().as_deref(), Some("s3://lake/sales/t"));
        assert_eq!(store.recall_staged("dora", "prod.sales.t", t0).unwrap(), None);
        assert_eq!(store.recall_staged("carl", "prod.sales.u", t0).unwrap(), None);
        assert_eq!(store.recall_staged("carl", "prod.sales.t", t2).unwrap(), None, "expired");
        // a second stage-create of the same table replaces the first
        store.remember_staged("carl", "prod.sales.t", "s3://lake/sales/t-2", (t0, t2)).unwrap();
        assert_eq!(store.recall_staged("carl", "prod.sales.t", t1).unwrap().as_deref(), Some("s3://lake/sales/t-2"));
        // expired rows go when another is written
        let t3 = "2026-12-03T13:00:00.000Z";
        store.remember_staged("dora", "prod.sales.v", "s3://lake/sales/v", (t3, t3)).unwrap();
        let rows: i64 = store.conn.query_row("SELECT count(*) FROM staged_locations", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn intents_settle_into_records_and_migrations_run_once() {
        let dir = std::env::temp_dir().join(format!("icegate-embedded-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("owners.db");
        let mut store = Embedded::open(&path, Duration::from_millis(100)).unwrap();
        let now = "2026-12-02T13:45:00.000Z";
        let a = store.begin(&create("t", "alice"), now).unwrap();
        assert_eq!(store.pending("9999").unwrap().len(), 1);
        assert!(store.pending("2000").unwrap().is_empty(), "younger than the cutoff");
        store.settle(a, &create("t", "alice"), Settlement::Happened { direct: true }, now).unwrap();
        assert_eq!(store.get(Kind::Table, "prod.s.t").unwrap().as_deref(), Some("alice"));
        // a reconciled create never replaces a recorded owner; a direct one does
        let b = store.begin(&create("t", "bob"), now).unwrap();
        store.settle(b, &create("t", "bob"), Settlement::Happened { direct: false }, now).unwrap();
        assert_eq!(store.get(Kind::Table, "prod.s.t").unwrap().as_deref(), Some("alice"));
        // a rename moves the record, replacing a stale one at the destination
        store.set(&Record { full_name: "prod.s.u".into(), ..store.records().unwrap()[0].clone() }).unwrap();
        let rename = Intent {
            change: Change::Rename { from: table("t"), to: table("u") },
            user: "alice".into(),
            confirmable: false,
        };
        let r = store.begin(&rename, now).unwrap();
        store.settle(r, &rename, Settlement::Happened { direct: true }, now).unwrap();
        assert_eq!(store.records().unwrap().len(), 1);
        assert_eq!(store.get(Kind::Table, "prod.s.u").unwrap().as_deref(), Some("alice"));
        // what did not happen changes nothing, and the intent is gone either way
        let drop_u = Intent { change: Change::Drop(table("u")), user: "alice".into(), confirmable: false };
        let d = store.begin(&drop_u, now).unwrap();
        store.settle(d, &drop_u, Settlement::DidNotHappen, now).unwrap();
        assert!(store.get(Kind::Table, "prod.s.u").unwrap().is_some());
        assert!(store.pending("9999").unwrap().is_empty());
        drop(store);
        // reopening runs no migration twice and keeps the records
        let store = Embedded::open(&path, Duration::from_millis(100)).unwrap();
        assert_eq!(store.records().unwrap().len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
