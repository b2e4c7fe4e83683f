//! Reading a Gravitino metalake as the policy source (docs/design.md §9): the roles (names,
//! then each role), the users and groups with their roles, and the owners of the metalake and
//! of every catalog, schema, table and view, at most `gravitino.concurrency` calls in flight;
//! then the catalogs file, and the policy document the core builds from what was read.

mod api;
mod error;

use crate::config::Gravitino;
use crate::core::policy::gravitino::{self, Document, Metalake, ObjectOwner, wire};
use crate::core::policy::model::ObjectType;
use api::{Api, segment};
pub use error::SourceError;
use std::future::Future;
use std::sync::Arc;

/// What the policy source reads with.
#[derive(Debug, Clone)]
pub struct Reader {
    api: Arc<Api>,
    config: Gravitino,
}

/// A read: the document and how many calls it took.
#[derive(Debug)]
pub struct Read {
    pub metalake: Metalake,
    pub document: Document,
    pub calls: usize,
}

impl Reader {
    pub fn new(config: &Gravitino) -> Result<Self, SourceError> {
        Ok(Self { api: Arc::new(Api::new(config)?), config: config.clone() })
    }

    pub fn config(&self) -> &Gravitino {
        &self.config
    }

    /// Reads the metalake and the catalogs file, and builds the policy document.
    pub async fn read(&self) -> Result<Read, SourceError> {
        let (metalake, calls) = self.metalake().await?;
        let catalogs = match &self.config.catalogs_file {
            None => None,
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| SourceError::CatalogsFile {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })?;
                Some(gravitino::parse_catalogs_file(path, &text)?)
            }
        };
        let document = gravitino::document(&metalake, catalogs.as_ref())?;
        Ok(Read { metalake, document, calls })
    }

    /// What the metalake holds, and the number of calls made.
    async fn metalake(&self) -> Result<(Metalake, usize), SourceError> {
        let api = &self.api;
        let limit = self.config.concurrency;
        let names: wire::Names = required(api.get("/roles", false).await?);
        let mut calls = 1 + names.names.len();
        // A role deleted between the list and its read is gone: its users lost it too.
        let roles = bounded(limit, names.names, |name| {
            let api = Arc::clone(api);
            async move {
                let role: Option<wire::RoleAnswer> = api.get(&format!("/roles/{}", segment(&name)), true).await?;
                Ok(role.map(|r| r.role))
            }
        })
        .await?;
        let users: wire::Users = required(api.get("/users?details=true", false).await?);
        let groups: wire::Groups = required(api.get("/groups?details=true", false).await?);
        let objects = self.objects(&mut calls).await?;
        calls += 2 + objects.len();
        let owners = bounded(limit, objects, |(kind, full_name)| {
            let api = Arc::clone(api);
            async move {
                let path = format!("/owners/{}/{}", kind.as_str().to_ascii_lowercase(), segment(&full_name));
                // an object dropped since it was listed has no owner to read
                let answer: Option<wire::OwnerAnswer> = api.get(&path, true).await?;
                Ok(answer.and_then(|a| a.owner).map(|owner| ObjectOwner { kind, full_name, owner }))
            }
        })
        .await?;
        let metalake = Metalake {
            name: self.config.metalake.clone(),
            roles: roles.into_iter().flatten().collect(),
            users: users.users,
            groups: groups.groups,
            owners: owners.into_iter().flatten().collect(),
        };
        Ok((metalake, calls))
    }

    /// The metalake and every catalog, schema, table and view in its relational catalogs.
    async fn objects(&self, calls: &mut usize) -> Result<Vec<(ObjectType, String)>, SourceError> {
        let api = &self.api;
        let limit = self.config.concurrency;
        let mut objects = vec![(ObjectType::Metalake, self.config.metalake.clone())];
        let catalogs: wire::Catalogs = required(api.get("/catalogs?details=true", false).await?);
        *calls += 1;
        let relational: Vec<String> = catalogs
            .catalogs
            .into_iter()
            .filter(|c| c.kind.eq_ignore_ascii_case("relational"))
            .map(|c| c.name)
            .collect();
        objects.extend(relational.iter().map(|c| (ObjectType::Catalog, c.clone())));
        *calls += relational.len();
        let schemas = bounded(limit, relational, |catalog| {
            let api = Arc::clone(api);
            async move {
                let path = format!("/catalogs/{}/schemas", segment(&catalog));
                let list: Option<wire::Identifiers> = api.get(&path, true).await?;
                let names = list.map(|l| l.identifiers).unwrap_or_default();
                Ok(names.into_iter().map(|i| (catalog.clone(), i.name)).collect::<Vec<_>>())
            }
        })
        .await?;
        let schemas: Vec<(String, String)> = schemas.into_iter().flatten().collect();
        objects.extend(schemas.iter().map(|(c, s)| (ObjectType::Schema, format!("{c}.{s}"))));
        *calls += 2 * schemas.len();
        let members = bounded(limit, schemas, |(catalog, schema)| {
            let api = Arc::clone(api);
            async move {
                let base = format!("/catalogs/{}/schemas/{}", segment(&catalog), segment(&schema));
                let mut found = Vec::new();
                for (kind, what) in [(ObjectType::Table, "tables"), (ObjectType::View, "views")] {
                    // A catalog without views answers the view list with an error status: no views.
                    let list = match api.get::<wire::Identifiers>(&format!("{base}/{what}"), true).await {
                        Err(SourceError::Refused { status: 405 | 501, .. }) if kind == ObjectType::View => None,
                        other => other?,
                    };
                    let names = list.map(|l| l.identifiers).unwrap_or_default();
                    found.extend(names.into_iter().map(|i| (kind, format!("{catalog}.{schema}.{}", i.name))));
                }
                Ok(found)
            }
        })
        .await?;
        objects.extend(members.into_iter().flatten());
        Ok(objects)
    }
}

/// A list answer that a 404 cannot stand for (`get` with `missing_ok` false never gives `None`).
fn required<T: Default>(answer: Option<T>) -> T {
    answer.unwrap_or_default()
}

/// Runs `call` on every item, at most `limit` at once; the first error ends the run.
async fn bounded<T, R, F, Fut>(limit: usize, items: Vec<T>, call: F) -> Result<Vec<R>, SourceError>
where
    T: Send + 'static,
    R: Send + 'static,
    F: Fn(T) -> Fut,
    Fut: Future<Output = Result<R, SourceError>> + Send + 'static,
{
    let mut out = Vec::with_capacity(items.len());
    let mut running = tokio::task::JoinSet::new();
    for item in items {
        if running.len() >= limit.max(1)
            && let Some(done) = running.join_next().await
        {
            out.push(joined(done)?);
        }
        running.spawn(call(item));
    }
    while let Some(done) = running.join_next().await {
        out.push(joined(done)?);
    }
    Ok(out)
}

fn joined<R>(done: Result<Result<R, SourceError>, tokio::task::JoinError>) -> Result<R, SourceError> {
    done.map_err(|e| SourceError::Setup(format!("a read task failed: {e}")))?
}
