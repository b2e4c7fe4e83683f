//! The credential steps of the request path that need the network (docs/design.md §8): learning a
//! table's locations from the upstream (cached briefly), minting downscoped credentials, and
//! rewriting a credential-bearing response. The rules themselves are pure, in `credentials`.

use crate::config::Credentials as Config;
use crate::config::credentials::Mode;
use crate::core::clock::Clock;
use crate::core::credentials::clean::{Endpoints, Rules};
use crate::core::credentials::response::{Chunks, Parsed};
use crate::core::credentials::s3url::{Endpoint, Origin};
use crate::core::credentials::storage::TableStorage;
use crate::core::credentials::{Action, clean, envelope::EnvelopeError};
use crate::core::iceberg::OperationId;
use crate::core::iceberg::routes::Route;
use crate::core::policy::authorize::{CredentialScope, Scope};
use crate::serve::cache::TtlCache;
use crate::serve::storage::sts::{Downscoper, MintRequest, Minted, StsError};
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum VendError {
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),
    /// The table's lookup was answered, but not with the table (the upstream's status), or
    /// with a body icegate could not read (502).
    #[error("cannot learn the table's location: the upstream answered {0}")]
    Locations(u16),
    /// The lookup was not answered (unreachable, timed out): answered as the forwarded request
    /// would have been (a timeout is a 504).
    #[error("cannot learn the table's location: {}", .0.message)]
    Unanswered(Box<crate::error::Refusal>),
    #[error("table does not exist upstream")]
    TableMissing,
    #[error("cannot mint downscoped credentials: {0}")]
    Mint(#[from] StsError),
    #[error("cannot mint downscoped credentials: `s3-downscope` is not set up ({0})")]
    NotConfigured(String),
}

/// The signing endpoints and origins of `[credentials.signing]` parse (checked at start-up).
pub fn validate(config: &crate::config::Credentials) -> Result<(), crate::config::ConfigError> {
    let invalid = |key, message: &str| crate::config::ConfigError::Invalid { key, message: message.to_owned() };
    if config.signing.endpoints.iter().any(|e| Endpoint::parse(&e.url, e.path_style).is_none()) {
        return Err(invalid("credentials.signing.endpoints", "each `url` must be `http[s]://host[:port][/base]`"));
    }
    if config.signing.signer_origins.iter().any(|o| Origin::parse(o).is_none()) {
        return Err(invalid("credentials.signing.signer_origins", "each must be `http[s]://host[:port]`"));
    }
    Ok(())
}

/// What happens to one response's credentials: `scope` is the request's credential scope;
/// `service` says the upstream authenticates icegate, not the caller, so what it vends is
/// taken as WRITE (docs/design.md §8).
pub fn action(mode: Mode, scope: CredentialScope, service: bool) -> Action {
    let broader = scope.narrowed < scope.unnarrowed || (service && scope.narrowed == Scope::Read);
    match mode {
        Mode::Passthrough => Action::Keep,
        Mode::StripBroader if broader => Action::Strip,
        Mode::StripBroader => Action::Keep,
        Mode::Strip => Action::Strip,
        Mode::S3Downscope => Action::Downscope(scope.narrowed),
    }
}

/// What happens to one response's credentials as configured: with icegate as the signer
/// (`credentials.signing.signer = "local"`) every answer offers it and carries no credentials,
/// whatever `credentials.mode` says (docs/design.md §8 "Signing without a catalog signer").
pub fn configured_action(config: &Config, scope: CredentialScope, service: bool) -> Action {
    match config.signing.signer {
        crate::config::credentials::Signer::Local => Action::Sign,
        crate::config::credentials::Signer::Upstream => action(config.mode, scope, service),
    }
}

/// Bounds the location cache; past it, expired entries go, then everything.
const MAX_CACHED_TABLES: usize = 10_000;

/// A table's storage, and whether it was learned by asking for remote signing (a response to
/// a caller who asked for vended credentials may omit the signer).
#[derive(Clone, Debug)]
struct Cached {
    storage: Arc<TableStorage>,
    for_signing: bool,
}

/// The process's vending pieces: the table storage cache, the STS minter, and the signing
/// settings parsed once.
#[derive(Debug)]
pub struct Vending {
    pub config: Config,
    downscoper: Result<Downscoper, String>,
    tables: TtlCache<String, Cached>,
    /// Namespace directories of the location rule, by the namespace's upstream path.
    directories: TtlCache<String, String>,
    /// `credentials.signing.endpoints`.
    signing_endpoints: Vec<Endpoint>,
    /// The upstream's origin and `credentials.signing.signer_origins`.
    signer_origins: Vec<Origin>,
    /// The headers icegate reads, which a table's `header.*` config keys may not set.
    read_headers: Vec<String>,
    /// icegate's own signer, when `credentials.signing.signer` is `local`.
    local_signer: Option<crate::serve::storage::local_signer::LocalSigner>,
    /// Tables' answers as far as they were scanned, for the next answer.
    scans: crate::serve::storage::scans::Scans,
}

/// Who the credentials are for, for session names, tags and the cache key.
#[derive(Clone, Copy, Debug)]
pub struct Caller<'a> {
    pub user: &'a str,
    /// The catalog the request is for (its table's answers are compared with its own only).
    pub catalog: &'a str,
    pub active_roles: &'a [String],
    /// `catalog.schema.table`.
    pub table: &'a str,
    /// The request asked for vended credentials (`X-Iceberg-Access-Delegation`).
    pub asked: bool,
}

impl Vending {
    /// `upstream` is the catalog's origin, where an advertised signer may always be;
    /// `read_headers` are the headers icegate reads ([`clean::read_headers`]).
    pub fn new(config: Config, upstream: Option<Origin>, read_headers: Vec<String>, clock: &Clock) -> Self {
        let downscoper = match config.mode {
            Mode::S3Downscope => Downscoper::new(&config.sts).map_err(|e| e.to_string()),
            _ => Err("the mode is not `s3-downscope`".to_owned()),
        };
        // Validated with the configuration; what does not parse was refused there.
        let signing_endpoints =
            config.signing.endpoints.iter().filter_map(|e| Endpoint::parse(&e.url, e.path_style)).collect();
        let signer_origins =
            upstream.into_iter().chain(config.signing.signer_origins.iter().filter_map(|o| Origin::parse(o))).collect();
        let local_signer = (config.signing.signer == crate::config::credentials::Signer::Local)
            .then(|| crate::serve::storage::local_signer::LocalSigner::new(&config.sts));
        let ttl = Duration::from_secs(config.location_cache_seconds);
        Self {
            local_signer,
            config,
            downscoper,
            tables: TtlCache::new(ttl, MAX_CACHED_TABLES, clock.clone()),
            directories: TtlCache::new(ttl, MAX_CACHED_TABLES, clock.clone()),
            signing_endpoints,
            signer_origins,
            read_headers,
            scans: crate::serve::storage::scans::Scans::default(),
        }
    }

    /// icegate's own signer, when `credentials.signing.signer` is `local` (docs/design.md §8).
    pub fn local_signer(&self) -> Option<&crate::serve::storage::local_signer::LocalSigner> {
        self.local_signer.as_ref()
    }

    pub fn signing_endpoints(&self) -> &[Endpoint] {
        &self.signing_endpoints
    }

    pub fn signer_origins(&self) -> &[Origin] {
        &self.signer_origins
    }

    /// The table's cached storage, if fresh (and, `for_signing`, learned by asking for signing).
    pub fn cached_storage(&self, table_path: &str, for_signing: bool) -> Option<Arc<TableStorage>> {
        self.tables.get_if(table_path, |c| c.for_signing || !for_signing).map(|c| c.storage)
    }

    pub fn remember_storage(&self, table_path: &str, storage: Arc<TableStorage>, for_signing: bool) {
        // A fresh entry learned for signing also serves everything else: keep it.
        self.tables
            .insert_unless(table_path, Cached { storage, for_signing }, |known| known.for_signing && !for_signing);
    }

    /// The directory of the namespace at `namespace_path`, if learned within the cache's time.
    pub fn cached_directory(&self, namespace_path: &str) -> Option<String> {
        self.directories.get(namespace_path)
    }

    pub fn remember_directory(&self, namespace_path: &str, directory: &str) {
        self.directories.insert(namespace_path, directory.to_owned());
    }

    /// icegate's endpoints for the table at `table_path` (after the base path).
    pub fn endpoints(&self, table_path: &str) -> Endpoints {
        let relative = table_path.trim_start_matches('/');
        let public = self.config.public_url.as_deref().map(|u| u.trim_end_matches('/').to_owned());
        // `concat`, not `format!`: every credential-bearing answer builds these.
        Endpoints {
            credentials: match &public {
                Some(base) => [base, "/", relative, "/credentials"].concat(),
                None => [relative, "/credentials"].concat(),
            },
            sign: [relative, "/sign"].concat(),
            signer_uri: public,
        }
    }

    /// Rewrites one credential-bearing response. `locations` loads the table's storage
    /// when the response does not carry its metadata and its locations are needed.
    pub async fn rewrite<F, Fut>(
        &self,
        op: OperationId,
        body: Bytes,
        action: Action,
        caller: Caller<'_>,
        table_path: &str,
        locations: F,
    ) -> Result<(Chunks, Action), VendError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Arc<TableStorage>, VendError>>,
    {
        let earlier = self.scans.earlier(caller.catalog, table_path);
        let (parsed, learned) =
            Parsed::read_resuming(&body, earlier.as_deref(), crate::serve::storage::scans::KEEP_UP_TO)?;
        if let Some(prefix) = learned {
            self.scans.keep(caller.catalog, table_path, prefix);
        }
        let endpoints = self.endpoints(table_path);
        let rules = Rules {
            action,
            extra_allowed: &self.config.allowed_config_keys,
            endpoints: &endpoints,
            minted: None,
            read_headers: &self.read_headers,
        };
        let vends = parsed.vends(&rules);
        let mint =
            matches!(action, Action::Downscope(_)) && (vends || caller.asked || op == OperationId::LoadCredentials);
        let needs_locations = mint || (action == Action::Keep && vends);
        let table = match (parsed.storage(), needs_locations) {
            (Some(from_metadata), _) => {
                let table = Arc::new(from_metadata);
                self.remember_storage(table_path, Arc::clone(&table), false);
                table
            }
            (None, true) => locations().await?,
            (None, false) => Arc::default(),
        };
        let locations = &table.locations;
        let minted = match action {
            Action::Downscope(scope) if mint => self.mint(caller, scope, locations).await?,
            _ => None,
        };
        // Downscoping with nothing to mint (no S3 location) leaves nothing: that is a strip; so
        // is offering icegate's signer for a table known to be off S3.
        let off_s3 = !locations.is_empty() && clean::s3_locations(locations).next().is_none();
        let done = match (action, &minted) {
            (Action::Downscope(_), None) => Action::Strip,
            (Action::Sign, _) if off_s3 => Action::Strip,
            _ => action,
        };
        let rules = Rules { action: done, minted: minted.as_deref(), ..rules };
        Ok((parsed.render(&rules, locations)?, done))
    }

    async fn mint(
        &self,
        caller: Caller<'_>,
        scope: Scope,
        locations: &[String],
    ) -> Result<Option<Arc<Minted>>, VendError> {
        // A table known to be off S3 gets nothing; an unknown location gets a deny-all policy.
        if !locations.is_empty() && clean::s3_locations(locations).next().is_none() {
            return Ok(None);
        }
        let downscoper = self.downscoper.as_ref().map_err(|e| VendError::NotConfigured(e.clone()))?;
        let request =
            MintRequest { user: caller.user, active_roles: caller.active_roles, table: caller.table, scope, locations };
        Ok(Some(downscoper.mint(&request).await?))
    }
}

/// The path of the table a route names (after the base path),
/// `/v1[/prefix]/namespaces/{ns}/tables/{t}`; for createTable and registerTable, whose table
/// is named in the body, `body_name`.
pub fn table_path(route: &Route, body_name: Option<&str>) -> Option<String> {
    let path = route.canonical_path.as_str();
    let prefixed = route.prefix_segments;
    // ["", "v1", prefix segments..., "namespaces", ns, "tables", name, ...]
    let (namespaces, tables) = (2 + prefixed, 4 + prefixed);
    let segments = Segments::new(path);
    let segment = |i: usize| segments.get(i);
    let through = |last: usize| segments.through(last);
    if segment(namespaces) != Some("namespaces") {
        return None;
    }
    match (route.name.as_ref(), body_name) {
        (Some(_), _) if segment(tables) == Some("tables") => through(tables + 1).map(str::to_owned),
        (None, Some(name)) => {
            let namespace = through(namespaces + 1)?;
            Some([namespace, "/tables/", &crate::core::iceberg::path::encode(name)].concat())
        }
        _ => None,
    }
}

/// A path's segments as `split('/')` counts them, from one pass over the path (a loadTable
/// asks for several).
struct Segments<'a> {
    path: &'a str,
    slashes: smallvec::SmallVec<[usize; 16]>,
}

impl<'a> Segments<'a> {
    fn new(path: &'a str) -> Self {
        Self { path, slashes: memchr::memchr_iter(b'/', path.as_bytes()).collect() }
    }

    /// Where segment `i` ends: at slash `i`, or the path's end.
    fn end(&self, i: usize) -> usize {
        self.slashes.get(i).copied().unwrap_or(self.path.len())
    }

    fn get(&self, i: usize) -> Option<&'a str> {
        let start = match i.checked_sub(1) {
            None => 0,
            Some(before) => self.slashes.get(before)? + 1,
        };
        self.path.get(start..self.end(i))
    }

    /// The path through segment `last`.
    fn through(&self, last: usize) -> Option<&'a str> {
        self.get(last)?;
        self.path.get(..self.end(last))
    }
}

/// The storage a loadTable response from the upstream describes.
pub fn storage_of(body: Bytes) -> Result<Arc<TableStorage>, VendError> {
    Ok(Arc::new(Parsed::read(&body)?.storage().unwrap_or_default()))
}

/// The table a credential-bearing request is about, as vending names it: a create or register
/// names it in its body, a load in its path; a stage-create's table has its assigned location
/// remembered from the answer.
#[derive(Debug)]
pub struct Created {
    /// The table's name in the body of a create or register.
    pub body_name: Option<String>,
    /// The table's path after the base path.
    pub table_path: Option<String>,
    /// The table a stage-create stages.
    pub staged: Option<crate::core::iceberg::TableIdent>,
}

impl Created {
    pub fn of(route: &Route, body: Option<&crate::core::iceberg::body::Body>) -> Self {
        use crate::core::iceberg::body::Body as B;
        let body_name = match body {
            Some(B::CreateTable { name, .. } | B::RegisterTable { name }) => Some(name.clone()),
            _ => None,
        };
        let staged = match body {
            Some(B::CreateTable { name, stage_create: true, .. }) => {
                route.namespace.clone().and_then(|ns| crate::core::iceberg::TableIdent::new(ns, name.clone()).ok())
            }
            _ => None,
        };
        Self { table_path: table_path(route, body_name.as_deref()), body_name, staged }
    }

    /// The table's full name, given the full name of the object the path names (`object`).
    pub fn table_name(&self, object: &str) -> String {
        match &self.body_name {
            Some(name) => format!("{object}.{name}"),
            None => object.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests;
