//! The process's Prometheus metrics (docs/design.md §10: every name starts with `icegate_`), served
//! as text by the admin listener.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The operationId, or `unrecognized`. Label values are static strings: every request
    /// builds a label set, and an owned one cost two allocations each time.
    pub operation: &'static str,
    /// `allow` (forwarded) or `deny`.
    pub decision: &'static str,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    pub result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ActionLabels {
    /// `kept`, `stripped` or `downscoped`.
    pub action: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OperationLabels {
    pub operation: String,
}

/// The `upstream` label of the metrics that concern one upstream (docs/design.md §7).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpstreamLabels {
    pub upstream: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpstreamResultLabels {
    pub upstream: String,
    pub result: String,
}

/// The families of the upstream credentials' metrics, one per process, labelled by upstream.
#[derive(Clone, Debug, Default)]
pub struct UpstreamAuthFamilies {
    pub refreshes: Family<UpstreamResultLabels, Counter>,
    pub retries: Family<UpstreamLabels, Counter>,
    pub held: Family<UpstreamLabels, Gauge>,
    pub expiry: Family<UpstreamLabels, Gauge>,
}

/// The metrics of one upstream's service credential (docs/operations.md): kept by the credential
/// itself, which exists before the registry, in families [`Metrics::register_upstream_auth`]
/// registers into it.
#[derive(Clone, Debug)]
pub struct UpstreamAuthMetrics {
    families: UpstreamAuthFamilies,
    upstream: UpstreamLabels,
    retries: Counter,
    held: Gauge,
    expiry: Gauge,
}

impl Default for UpstreamAuthMetrics {
    fn default() -> Self {
        Self::new(&UpstreamAuthFamilies::default(), crate::config::upstreams::DEFAULT_NAME)
    }
}

impl UpstreamAuthMetrics {
    /// The metrics of the credential of `upstream`, in `families`.
    pub fn new(families: &UpstreamAuthFamilies, upstream: &str) -> Self {
        let label = UpstreamLabels { upstream: upstream.to_owned() };
        Self {
            retries: families.retries.get_or_create(&label).clone(),
            held: families.held.get_or_create(&label).clone(),
            expiry: families.expiry.get_or_create(&label).clone(),
            families: families.clone(),
            upstream: label,
        }
    }

    /// The families these metrics are in.
    pub fn families(&self) -> &UpstreamAuthFamilies {
        &self.families
    }

    pub fn refreshed(&self, ok: bool) {
        let result = if ok { "ok" } else { "failure" };
        let labels = UpstreamResultLabels { upstream: self.upstream.upstream.clone(), result: result.to_owned() };
        self.families.refreshes.get_or_create(&labels).inc();
    }

    /// A token or credentials were obtained, expiring at `expiry`.
    pub fn held(&self, expiry: Option<std::time::SystemTime>) {
        self.held.set(1);
        let at = expiry.and_then(|e| e.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs());
        self.expiry.set(i64::try_from(at).unwrap_or(i64::MAX));
    }

    /// The token or credentials were let go (refused or expired without a new one).
    pub fn dropped(&self) {
        self.held.set(0);
    }

    /// A request was sent again with a fresh token after a 401.
    pub fn retried(&self) {
        self.retries.inc();
    }
}

/// The per-upstream histogram of the upstream's time to headers.
fn upstream_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_5, 2.0, 16))
}

/// Every metric icegate exports.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub requests: Family<RequestLabels, Counter>,
    /// Time from the request's arrival to the decision (forward or refuse).
    pub decision_seconds: Histogram,
    /// Time the upstream took to answer with headers, by upstream.
    pub upstream_seconds: Family<UpstreamLabels, Histogram, fn() -> Histogram>,
    pub reloads: Family<ResultLabels, Counter>,
    pub generation: Gauge,
    pub stale: Gauge,
    pub entries_hidden: Counter,
    pub credentials: Family<ActionLabels, Counter>,
    pub shadow_disagreements: Family<OperationLabels, Counter>,
    /// Requests given no shadow decision because too many were pending.
    pub shadow_skipped: Counter,
    pub open_connections: Gauge,
    /// 1 when the upstream answered its last probe, by upstream.
    pub upstream_reachable: Family<UpstreamLabels, Gauge>,
    /// Records in this process's view of the ownership store.
    pub owners_records: Gauge,
    /// Ownership store events: `refused` (503 before forwarding), `pending` (left for
    /// reconciliation), `unrecorded` (carried out upstream, not recorded: 503).
    pub owners_events: Family<ResultLabels, Counter>,
    /// Reads of the policy source (Gravitino) by result: `changed`, `unchanged`, `failure`,
    /// `implausible`, `invalid`.
    pub source_reads: Family<ResultLabels, Counter>,
    /// Unix time of the last good read of the policy source (0: none yet).
    pub source_read_at: Gauge,
    /// Seconds since the last good read of the policy source, as of the last attempt.
    pub source_age: Gauge,
    /// Securable objects of types icegate does not enforce, left out of the last good read.
    pub source_ignored: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("icegate");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register("requests", "Requests by operation, decision and status", requests.clone());
        // 50 µs to about 6.5 s.
        let decision_seconds = Histogram::new(exponential_buckets(0.000_05, 2.0, 18));
        registry.register("decision_duration_seconds", "Time to decide a request", decision_seconds.clone());
        let upstream_seconds: Family<UpstreamLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(upstream_histogram);
        registry.register(
            "upstream_duration_seconds",
            "Time the upstream took to answer a forwarded request",
            upstream_seconds.clone(),
        );
        let reloads = Family::<ResultLabels, Counter>::default();
        registry.register("policy_reloads", "Policy reloads by result (success, failure, unchanged)", reloads.clone());
        let generation = Gauge::default();
        registry.register("policy_generation", "The live policy's generation", generation.clone());
        let stale = Gauge::default();
        registry.register("policy_stale", "1 when the last reload failed and an older policy serves", stale.clone());
        let entries_hidden = Counter::default();
        registry.register("list_entries_hidden", "List entries removed from responses", entries_hidden.clone());
        let credentials = Family::<ActionLabels, Counter>::default();
        registry.register("credentials", "Credential-bearing responses by what was done", credentials.clone());
        let shadow_disagreements = Family::<OperationLabels, Counter>::default();
        registry.register(
            "shadow_disagreements",
            "Requests the shadow policy decides differently, by operation",
            shadow_disagreements.clone(),
        );
        let shadow_skipped = Counter::default();
        registry.register(
            "shadow_skipped",
            "Requests given no shadow decision because too many were pending",
            shadow_skipped.clone(),
        );
        let open_connections = Gauge::default();
        registry.register("open_connections", "Client connections open now", open_connections.clone());
        let upstream_reachable = Family::<UpstreamLabels, Gauge>::default();
        registry.register(
            "upstream_reachable",
            "1 when the upstream answered its last probe",
            upstream_reachable.clone(),
        );
        let owners_records = Gauge::default();
        registry.register("owners_records", "Records in the ownership store's current view", owners_records.clone());
        let owners_events = Family::<ResultLabels, Counter>::default();
        registry.register(
            "owners_events",
            "Ownership store events: refused (503 before forwarding), pending, unrecorded",
            owners_events.clone(),
        );
        let source_reads = Family::<ResultLabels, Counter>::default();
        registry.register(
            "policy_source_reads",
            "Reads of the Gravitino policy source by result (changed, unchanged, failure, implausible, invalid)",
            source_reads.clone(),
        );
        let source_read_at = Gauge::default();
        registry.register(
            "policy_source_last_read_timestamp_seconds",
            "Unix time of the last good read of the Gravitino policy source (0: none yet)",
            source_read_at.clone(),
        );
        let source_age = Gauge::default();
        registry.register(
            "policy_source_age_seconds",
            "Seconds since the last good read of the Gravitino policy source, as of the last attempt",
            source_age.clone(),
        );
        let source_ignored = Gauge::default();
        registry.register(
            "policy_source_ignored_objects",
            "Securable objects of types icegate does not enforce, left out of the last good read",
            source_ignored.clone(),
        );
        Self {
            registry,
            requests,
            decision_seconds,
            upstream_seconds,
            reloads,
            generation,
            stale,
            entries_hidden,
            credentials,
            shadow_disagreements,
            shadow_skipped,
            open_connections,
            upstream_reachable,
            owners_records,
            owners_events,
            source_reads,
            source_read_at,
            source_age,
            source_ignored,
        }
    }

    /// Exports `auth`, the metrics of the upstreams' service credentials.
    pub fn register_upstream_auth(&mut self, auth: &UpstreamAuthFamilies) {
        let r = &mut self.registry;
        r.register(
            "upstream_auth_refreshes",
            "Upstream token fetches (oauth2) or AWS credential lookups (sigv4), by result",
            auth.refreshes.clone(),
        );
        r.register(
            "upstream_auth_retries",
            "Requests sent again with a fresh token after the upstream answered 401",
            auth.retries.clone(),
        );
        r.register("upstream_auth_held", "1 while an upstream token or AWS credentials are held", auth.held.clone());
        r.register(
            "upstream_auth_expiry_timestamp_seconds",
            "When the held upstream token or AWS credentials expire (0: no expiry)",
            auth.expiry.clone(),
        );
    }

    pub fn owners_event(&self, result: &str) {
        self.owners_events.get_or_create(&ResultLabels { result: result.to_owned() }).inc();
    }

    pub fn reload(&self, result: &str) {
        self.reloads.get_or_create(&ResultLabels { result: result.to_owned() }).inc();
    }

    pub fn source_reads(&self, result: &str) {
        self.source_reads.get_or_create(&ResultLabels { result: result.to_owned() }).inc();
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}
