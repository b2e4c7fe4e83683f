//! The PostgreSQL ownership store, shared by replicas: the same schema and migrations as the
//! embedded store, a generation counter bumped by every change of `owners` in the same
//! transaction, and `NOTIFY icegate_owners` so the other replicas re-read at once. A lost
//! notification is covered by polling: every replica re-reads within
//! `owners.poll_interval_seconds` of a change (5 s by default), typically within milliseconds.
//! Columns are read with `try_get`: a table altered behind icegate's back is an error (503 for
//! writes), never a panic.

use super::change::{Change, Intent, OwnersError, Settlement};
use super::pg_tls::{self, MakeRustls, RustlsStream, SslMode};
use super::sql::{
    BEGIN_INTENT, DELETE_INTENT, DELETE_OWNER, FORGET_EXPIRED_STAGED, MIGRATIONS, RECALL_STAGED, RECORD_CREATION,
    RECORD_RECONCILED_CREATION, REMEMBER_STAGED, RENAME_OWNER, SET_OWNER, intent_of, record_of,
};
use crate::config::owners::Config;
use crate::core::ownership::{Kind, Record};
use crate::core::policy::model::OwnerType;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, Notify};
use tokio_postgres::{AsyncMessage, Client};

/// The notification channel.
const CHANNEL: &str = "icegate_owners";

/// A connection to the store (re-established after a failure) and the listener's wake-ups.
#[derive(Debug)]
pub struct Postgres {
    config: tokio_postgres::Config,
    tls: MakeRustls,
    timeout: Duration,
    client: Mutex<Option<Client>>,
    /// Notified when another replica changed the store (or the listener reconnected).
    pub changed: Arc<Notify>,
}

/// The error with its causes (a TLS failure's reason is in its source).
fn db(e: tokio_postgres::Error) -> OwnersError {
    OwnersError::Store(crate::core::text::error_chain(&e))
}

impl Postgres {
    pub fn new(config: &Config) -> Result<Self, OwnersError> {
        let url = match (&config.url, &config.url_file) {
            (Some(url), _) => url.clone(),
            (None, Some(file)) => std::fs::read_to_string(file)
                .map_err(|e| OwnersError::Open { path: file.display().to_string(), reason: e.to_string() })?
                .trim()
                .to_owned(),
            (None, None) => return Err(OwnersError::Off),
        };
        let bad_url = |reason: String| OwnersError::Open { path: "owners.url".into(), reason };
        let (url, tls) = pg_tls::split(&url).map_err(bad_url)?;
        let mut pg: tokio_postgres::Config = url.parse().map_err(|e: tokio_postgres::Error| bad_url(e.to_string()))?;
        let timeout = Duration::from_millis(config.timeout_ms);
        pg.connect_timeout(timeout);
        pg.application_name("icegate");
        pg.ssl_mode(if tls.mode == SslMode::Off {
            tokio_postgres::config::SslMode::Disable
        } else {
            tokio_postgres::config::SslMode::Require
        });
        let remote = pg.get_hosts().iter().any(|h| match h {
            tokio_postgres::config::Host::Tcp(host) => {
                host != "localhost" && !host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
            }
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(_) => false,
        });
        if tls.mode == SslMode::Off && remote {
            tracing::warn!(
                "the ownership store's PostgreSQL connection is not encrypted: add `sslmode=verify-full sslrootcert=CA-FILE` to `owners.url`"
            );
        }
        let tls = pg_tls::connector(&tls).map_err(|e| bad_url(e.to_string()))?;
        Ok(Self { config: pg, tls, timeout, client: Mutex::new(None), changed: Arc::new(Notify::new()) })
    }

    async fn connect(
        &self,
    ) -> Result<(Client, tokio_postgres::Connection<tokio_postgres::Socket, RustlsStream>), OwnersError> {
        self.config.connect(self.tls.clone()).await.map_err(db)
    }

    /// Runs `f` with a connected client within the timeout; a failure drops the connection so
    /// the next call reconnects.
    async fn with<T>(
        &self,
        f: impl AsyncFnOnce(&mut Client) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, OwnersError> {
        let mut slot = self.client.lock().await;
        let work = async {
            if slot.as_ref().is_none_or(Client::is_closed) {
                let (mut client, connection) = self.connect().await?;
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                migrate(&mut client).await.map_err(db)?;
                *slot = Some(client);
            }
            match slot.as_mut() {
                Some(client) => f(client).await.map_err(db),
                None => Err(OwnersError::Off),
            }
        };
        let result = match tokio::time::timeout(self.timeout, work).await {
            Ok(r) => r,
            Err(_) => {
                Err(OwnersError::Store(format!("no answer from PostgreSQL within {} ms", self.timeout.as_millis())))
            }
        };
        if result.is_err() {
            *slot = None;
        }
        result
    }

    pub async fn begin(&self, intents: &[Intent], now: &str) -> Result<Vec<i64>, OwnersError> {
        self.with(async |c| {
            let tx = c.transaction().await?;
            let mut ids = Vec::with_capacity(intents.len());
            for intent in intents {
                let (op, object, to) = match &intent.change {
                    Change::Create(o) => ("create", o, None),
                    Change::Drop(o) => ("drop", o, None),
                    Change::Rename { from, to } => ("rename", from, Some(to)),
                };
                let row = tx
                    .query_one(
                        &format!("{BEGIN_INTENT} RETURNING id"),
                        &[
                            &op,
                            &object.kind.as_str(),
                            &object.full_name,
                            &object.path,
                            &to.map(|t| t.full_name.as_str()),
                            &to.map(|t| t.path.as_str()),
                            &intent.user,
                            &intent.confirmable,
                            &now,
                        ],
                    )
                    .await?;
                ids.push(row.try_get::<_, i64>(0)?);
            }
            tx.commit().await?;
            Ok(ids)
        })
        .await
    }

    /// Settles an intent; the generation after it when `owners` changed.
    pub async fn settle(
        &self,
        id: i64,
        intent: &Intent,
        settlement: Settlement,
        now: &str,
    ) -> Result<Option<i64>, OwnersError> {
        self.with(async |c| {
            let tx = c.transaction().await?;
            let mut generation = None;
            if let Settlement::Happened { direct } = settlement {
                match &intent.change {
                    Change::Create(o) => {
                        let statement = if direct { RECORD_CREATION } else { RECORD_RECONCILED_CREATION };
                        tx.execute(statement, &[&o.kind.as_str(), &o.full_name, &intent.user, &now]).await?;
                    }
                    Change::Drop(o) => {
                        tx.execute(DELETE_OWNER, &[&o.kind.as_str(), &o.full_name]).await?;
                    }
                    Change::Rename { from, to } => {
                        tx.execute(DELETE_OWNER, &[&to.kind.as_str(), &to.full_name]).await?;
                        tx.execute(RENAME_OWNER, &[&to.full_name, &from.kind.as_str(), &from.full_name]).await?;
                    }
                }
                generation = Some(bump(&tx).await?);
            }
            tx.execute(DELETE_INTENT, &[&id]).await?;
            tx.commit().await?;
            Ok(generation)
        })
        .await
    }

    pub async fn pending(&self, cutoff: &str) -> Result<Vec<(i64, Intent)>, OwnersError> {
        let rows = self
            .with(async |c| {
                c.query(
                    "SELECT id, op, object_type, full_name, path, to_full_name, to_path, user_name, confirmable
                     FROM intents WHERE started_at < $1 ORDER BY id",
                    &[&cutoff],
                )
                .await
            })
            .await?;
        rows.iter()
            .map(|r| {
                let id: i64 = r.try_get(0).map_err(db)?;
                let text = |i: usize| r.try_get::<_, String>(i).map_err(db);
                let to =
                    r.try_get::<_, Option<String>>(5).map_err(db)?.zip(r.try_get::<_, Option<String>>(6).map_err(db)?);
                let confirmable = r.try_get(8).map_err(db)?;
                intent_of(id, [text(1)?, text(2)?, text(3)?, text(4)?, text(7)?], to, confirmable).map(|i| (id, i))
            })
            .collect()
    }

    /// `icegate owners set`; the generation after it.
    pub async fn set(&self, record: &Record) -> Result<i64, OwnersError> {
        let owner_type = if record.owner_type == OwnerType::User { "USER" } else { "GROUP" };
        self.with(async |c| {
            let tx = c.transaction().await?;
            tx.execute(
                SET_OWNER,
                &[
                    &record.kind.as_str(),
                    &record.full_name,
                    &record.owner,
                    &owner_type,
                    &record.created_at,
                    &record.source.as_str(),
                ],
            )
            .await?;
            let generation = bump(&tx).await?;
            tx.commit().await?;
            Ok(generation)
        })
        .await
    }

    /// `icegate owners remove`: whether there was a record, and the generation after it.
    pub async fn remove(&self, kind: Kind, full_name: &str) -> Result<(bool, Option<i64>), OwnersError> {
        self.with(async |c| {
            let tx = c.transaction().await?;
            let n = tx.execute(DELETE_OWNER, &[&kind.as_str(), &full_name]).await?;
            let generation = bump(&tx).await?;
            tx.commit().await?;
            Ok((n > 0, Some(generation)))
        })
        .await
    }

    /// `icegate owners forget`; false when there was no such intent.
    pub async fn forget(&self, id: i64) -> Result<bool, OwnersError> {
        let n = self.with(async |c| c.execute(DELETE_INTENT, &[&id]).await).await?;
        Ok(n > 0)
    }

    /// Records the location a stage-create answer carried, until `expires_at`.
    pub async fn remember_staged(
        &self,
        user: &str,
        full_name: &str,
        location: &str,
        (now, expires_at): (&str, &str),
    ) -> Result<(), OwnersError> {
        self.with(async |c| {
            let tx = c.transaction().await?;
            tx.execute(FORGET_EXPIRED_STAGED, &[&now]).await?;
            tx.execute(REMEMBER_STAGED, &[&user, &full_name, &location, &expires_at]).await?;
            tx.commit().await
        })
        .await
    }

    /// The location `user`'s stage-create of `full_name` was assigned, unless expired.
    pub async fn recall_staged(&self, user: &str, full_name: &str, now: &str) -> Result<Option<String>, OwnersError> {
        let row = self.with(async |c| c.query_opt(RECALL_STAGED, &[&user, &full_name, &now]).await).await?;
        row.map(|r| r.try_get::<_, String>(0)).transpose().map_err(db)
    }

    /// Every record and the generation they are at, unless the generation is still `seen`.
    pub async fn read_if_changed(&self, seen: Option<i64>) -> Result<Option<(i64, Vec<Record>)>, OwnersError> {
        let read = self
            .with(async |c| {
                let tx = c
                    .build_transaction()
                    .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                    .read_only(true)
                    .start()
                    .await?;
                let generation: i64 = tx.query_one("SELECT n FROM owners_generation", &[]).await?.try_get(0)?;
                if Some(generation) == seen {
                    return Ok(None);
                }
                let rows = tx
                    .query("SELECT object_type, full_name, owner, owner_type, created_at, source FROM owners", &[])
                    .await?;
                tx.commit().await?;
                Ok(Some((generation, rows)))
            })
            .await?;
        let Some((generation, rows)) = read else { return Ok(None) };
        let records = rows
            .iter()
            .map(|r| {
                let text = |i: usize| r.try_get::<_, String>(i).map_err(db);
                record_of([text(0)?, text(1)?, text(2)?, text(3)?, text(4)?, text(5)?])
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some((generation, records)))
    }

    /// Listens for other replicas' changes until `stopped`, reconnecting after a failure;
    /// every notification (and every reconnection, to catch up) wakes [`Postgres::changed`].
    pub async fn listen(&self, stopped: impl std::future::Future<Output = ()>) {
        let work = async {
            loop {
                match self.connect().await {
                    Ok((client, mut connection)) => {
                        let drive = async {
                            loop {
                                match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                                    Some(Ok(AsyncMessage::Notification(_))) => self.changed.notify_one(),
                                    Some(Ok(_)) => {}
                                    Some(Err(e)) => return e.to_string(),
                                    None => return "the connection closed".to_owned(),
                                }
                            }
                        };
                        let listen = async {
                            match client.batch_execute(&format!("LISTEN {CHANNEL}")).await {
                                Ok(()) => {
                                    self.changed.notify_one();
                                    std::future::pending::<String>().await
                                }
                                Err(e) => e.to_string(),
                            }
                        };
                        let why = tokio::select! { w = drive => w, w = listen => w };
                        tracing::warn!(reason = %why, "ownership store: lost the PostgreSQL notification connection; reconnecting");
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "ownership store: cannot reach PostgreSQL; deciding from the last view")
                    }
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        };
        tokio::select! {
            () = work => {}
            () = stopped => {}
        }
    }
}

/// Increments the generation and tells the other replicas, at commit.
async fn bump(tx: &tokio_postgres::Transaction<'_>) -> Result<i64, tokio_postgres::Error> {
    let n: i64 = tx.query_one("UPDATE owners_generation SET n = n + 1 RETURNING n", &[]).await?.try_get(0)?;
    tx.batch_execute(&format!("NOTIFY {CHANNEL}")).await?;
    Ok(n)
}

/// Brings the schema up to date; replicas starting together take turns (an advisory lock).
async fn migrate(client: &mut Client) -> Result<(), tokio_postgres::Error> {
    let tx = client.transaction().await?;
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(7305231977);
         CREATE TABLE IF NOT EXISTS icegate_migrations (version INTEGER NOT NULL)",
    )
    .await?;
    let done: i64 = tx.query_one("SELECT count(*) FROM icegate_migrations", &[]).await?.try_get(0)?;
    for (i, sql) in MIGRATIONS.iter().enumerate() {
        let version = i32::try_from(i + 1).unwrap_or(i32::MAX);
        if i64::from(version) > done {
            tx.batch_execute(&sql.replace("{id}", "BIGSERIAL PRIMARY KEY")).await?;
            tx.execute("INSERT INTO icegate_migrations (version) VALUES ($1)", &[&version]).await?;
        }
    }
    tx.commit().await
}
