//! The upstreams icegate forwards to (docs/design.md §7 "One gate, many catalogs"): one [`Lane`]
//! per upstream — its connection pool, timeouts and credential, its readiness, its caches of
//! table locations and advertised signers, its credentials settings — and the routing that
//! picks one: by a request's catalog, by getConfig's `warehouse`, or the default upstream.

use crate::config::upstreams::Entry;
use crate::config::{Config, Upstream as UpstreamConfig, parse_upstream};
use crate::core::clock::Clock;
use crate::ops::metrics::{Metrics, UpstreamAuthFamilies, UpstreamAuthMetrics, UpstreamLabels};
use crate::serve::cache::lock;
use crate::serve::storage::signers::Advertised;
use crate::serve::storage::vending::Vending;
use crate::serve::upstream::forward::{ClientError, Upstream};
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use thiserror::Error;

/// Why no upstream takes a request.
#[derive(Debug, Error)]
pub enum RouteError {
    #[error("no upstream answers getConfig for warehouse `{0}`")]
    UnknownWarehouse(String),
    #[error("getConfig needs a `warehouse` query parameter: no upstream is the default")]
    NoDefault,
    #[error("getToken is not available: no upstream is the default")]
    NoTokenUpstream,
    #[error("the catalog of this request is not served by any upstream")]
    Unserved,
}

/// One upstream and everything icegate keeps for it.
#[derive(Debug)]
pub struct Lane {
    /// Named in `/readyz`, audit lines (`upstream`) and metric labels.
    pub name: Arc<str>,
    /// The pool of connections, the timeouts and the service credential.
    pub client: Upstream,
    pub config: UpstreamConfig,
    /// Vending with this upstream's credentials settings, table location cache and signer origins.
    pub vending: Vending,
    /// The signers this upstream's getConfig advertised (docs/design.md §8).
    pub signers: Advertised,
    /// The upstream answered its last readiness probe.
    pub reachable: AtomicBool,
    /// The query of the last getConfig this upstream answered 2xx, which its readiness probe
    /// sends too (a catalog's signer is asked for with its own prefix's query: `signers`).
    pub config_query: std::sync::Mutex<Option<String>>,
    upstream_seconds: Histogram,
    reachable_gauge: Gauge,
}

impl Lane {
    fn new(
        entry: &Entry<'_>,
        config: &Config,
        clock: &Clock,
        auth: &UpstreamAuthFamilies,
    ) -> Result<Self, ClientError> {
        let url = parse_upstream(entry.upstream.url.as_deref().unwrap_or_default())?;
        // only a credential icegate fetches has series: none for passthrough or a static value
        let fetched =
            matches!(entry.upstream.auth, crate::config::UpstreamAuth::OAuth2 | crate::config::UpstreamAuth::SigV4);
        let metrics =
            if fetched { UpstreamAuthMetrics::new(auth, &entry.name) } else { UpstreamAuthMetrics::default() };
        let client = Upstream::with_metrics(url, entry.upstream, clock.clone(), metrics)?;
        let origin = client.catalog_uri().parse().ok().as_ref().and_then(crate::core::credentials::s3url::Origin::of);
        let read_headers = crate::core::credentials::clean::read_headers(
            &config.identity.header.user_header,
            &config.identity.header.groups_header,
        );
        Ok(Self {
            name: Arc::from(entry.name.as_str()),
            vending: Vending::new(entry.credentials.clone(), origin, read_headers, clock),
            client,
            config: entry.upstream.clone(),
            signers: Advertised::new(Duration::from_secs(entry.credentials.location_cache_seconds), clock),
            reachable: AtomicBool::new(false),
            config_query: std::sync::Mutex::new(None),
            upstream_seconds: Histogram::new(std::iter::empty()),
            reachable_gauge: Gauge::default(),
        })
    }

    /// Whether the upstream answered its last readiness probe.
    pub fn is_reachable(&self) -> bool {
        self.reachable.load(Ordering::Relaxed)
    }

    /// Notes the answer of a readiness probe.
    pub fn probed(&self, reachable: bool) {
        self.reachable.store(reachable, Ordering::Relaxed);
        self.reachable_gauge.set(i64::from(reachable));
    }

    /// Notes the upstream's time to a forwarded request's headers.
    pub fn took(&self, seconds: f64) {
        self.upstream_seconds.observe(seconds);
    }

    /// Remembers a getConfig query this upstream accepted.
    pub fn accepted_config_query(&self, query: &str) {
        let mut q = lock(&self.config_query);
        if q.as_deref() != Some(query) {
            *q = Some(query.to_owned());
        }
    }

    /// The query of the last getConfig this upstream accepted (empty when none).
    pub fn config_query(&self) -> String {
        lock(&self.config_query).clone().unwrap_or_default()
    }
}

/// Every upstream, and which serves what.
#[derive(Debug)]
pub struct Upstreams {
    lanes: Vec<Lane>,
    /// `None`: the single upstream serves every catalog.
    by_catalog: Option<HashMap<String, usize>>,
    by_warehouse: HashMap<String, usize>,
    default: Option<usize>,
    auth_metrics: UpstreamAuthFamilies,
}

impl Upstreams {
    /// The upstreams `config` names (`[upstream]` or `[[upstreams]]`, checked when it loaded).
    pub fn from_config(config: &Config, clock: Clock) -> Result<Self, ClientError> {
        let auth_metrics = UpstreamAuthFamilies::default();
        let entries = config.upstream_entries();
        let mut lanes = Vec::with_capacity(entries.len());
        let mut by_catalog = config.many_upstreams().then(HashMap::new);
        let mut by_warehouse = HashMap::new();
        let mut default = None;
        for (i, entry) in entries.iter().enumerate() {
            lanes.push(Lane::new(entry, config, &clock, &auth_metrics)?);
            if let (Some(map), Some(catalogs)) = (&mut by_catalog, entry.catalogs) {
                map.extend(catalogs.iter().map(|c| (c.clone(), i)));
            }
            by_warehouse.extend(entry.upstream.warehouses.iter().map(|w| (w.clone(), i)));
            if entry.default && default.is_none() {
                default = Some(i);
            }
        }
        Ok(Self { lanes, by_catalog, by_warehouse, default, auth_metrics })
    }

    /// Registers the per-upstream metrics in `metrics` and binds each lane to its series.
    pub fn attach(&mut self, metrics: &mut Metrics) {
        for lane in &mut self.lanes {
            let label = UpstreamLabels { upstream: lane.name.to_string() };
            lane.upstream_seconds = metrics.upstream_seconds.get_or_create(&label).clone();
            lane.reachable_gauge = metrics.upstream_reachable.get_or_create(&label).clone();
        }
        if self.lanes.iter().any(|l| l.client.auth().metrics().is_some()) {
            metrics.register_upstream_auth(&self.auth_metrics);
        }
    }

    pub fn lanes(&self) -> &[Lane] {
        &self.lanes
    }

    /// The first upstream: the single one of the simple form.
    pub fn first(&self) -> Option<&Lane> {
        self.lanes.first()
    }

    /// Whether the config named several upstreams, each serving its catalogs.
    pub fn many(&self) -> bool {
        self.by_catalog.is_some()
    }

    /// The upstream serving `catalog`.
    pub fn for_catalog(&self, catalog: &str) -> Option<&Lane> {
        match &self.by_catalog {
            None => self.lanes.first(),
            Some(map) => map.get(catalog).and_then(|&i| self.lanes.get(i)),
        }
    }

    /// The upstream `config` configures as the default (`default = true`, or the single one).
    pub fn default_lane(&self) -> Option<&Lane> {
        self.default.and_then(|i| self.lanes.get(i))
    }

    /// Where getConfig goes: the upstream whose `warehouses` name `warehouse`, the default one
    /// without a warehouse; the single upstream takes every getConfig.
    pub fn for_config(&self, warehouse: Option<&str>) -> Result<&Lane, RouteError> {
        if !self.many() {
            return self.lanes.first().ok_or(RouteError::NoDefault);
        }
        match warehouse.filter(|w| !w.is_empty()) {
            Some(w) => self
                .by_warehouse
                .get(w)
                .and_then(|&i| self.lanes.get(i))
                .ok_or_else(|| RouteError::UnknownWarehouse(w.to_owned())),
            None => self.default_lane().ok_or(RouteError::NoDefault),
        }
    }

    /// Where getToken goes: the default upstream.
    pub fn for_token(&self) -> Result<&Lane, RouteError> {
        self.default_lane().ok_or(RouteError::NoTokenUpstream)
    }

    /// Whether every upstream answered its last probe.
    pub fn all_reachable(&self) -> bool {
        self.lanes.iter().all(Lane::is_reachable)
    }

    /// Reads each upstream's static credential file again (a reload, docs/design.md §6). A file
    /// that cannot be read or holds no valid value leaves the credential in use, and says so.
    pub fn reread_credentials(&self) {
        for lane in &self.lanes {
            match lane.client.auth().reread() {
                Ok(true) => tracing::info!(upstream = %lane.name, "upstream service credential re-read"),
                Ok(false) => {}
                Err(e) => {
                    tracing::error!(upstream = %lane.name, error = %e, "the upstream service credential in use stays")
                }
            }
        }
    }

    /// Whether some upstream answered its last probe and can authenticate.
    pub fn any_ready(&self) -> bool {
        self.lanes.iter().any(|l| l.is_reachable() && l.client.auth().ready())
    }
}

/// The catalogs some upstream of `config` serves; `None` for every catalog (the single form).
pub fn served_catalogs(config: &Config) -> Option<Vec<String>> {
    config.many_upstreams().then(|| {
        let mut all: Vec<String> = config.upstreams.iter().flat_map(|u| u.catalogs.iter().cloned()).collect();
        all.sort_unstable();
        all
    })
}

/// The separators besides `%1F` any upstream of `config` accepts (refused in namespace levels,
/// whichever upstream serves the catalog: a separator one upstream reads is refused for all).
pub fn namespace_separators(config: &Config) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for entry in config.upstream_entries() {
        for s in &entry.upstream.namespace_separators {
            if !all.contains(s) {
                all.push(s.clone());
            }
        }
    }
    all
}
