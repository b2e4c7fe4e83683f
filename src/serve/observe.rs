//! What happens after a request is answered, besides its audit line: the metrics it moves
//! and its shadow decision (DESIGN.md §9, §10).

use crate::ops::audit;
use crate::serve::state::{DecisionState, Shared};

/// Metrics and the shadow decision, once the request is answered.
pub fn observe(shared: &Shared, state: &DecisionState, record: &audit::Record) {
    let m = &shared.metrics;
    let labels = crate::ops::metrics::RequestLabels {
        operation: record.operation.unwrap_or("unrecognized"),
        decision: record.decision,
        status: record.status,
    };
    m.requests.get_or_create(&labels).inc();
    if let Some(d) = record.decided_after {
        m.decision_seconds.observe(d.as_secs_f64());
    }
    if let Some(d) = record.upstream_took {
        m.upstream_seconds.observe(d.as_secs_f64());
    }
    if record.hidden_entries > 0 {
        m.entries_hidden.inc_by(record.hidden_entries as u64);
    }
    if let (Some(action), "allow") = (record.credential, record.decision) {
        m.credentials.get_or_create(&crate::ops::metrics::ActionLabels { action }).inc();
    }
    if let (Some(candidate), Some(capture)) = (&state.shadow, &record.shadow)
        && let Some(d) =
            crate::ops::shadow::compare(&state.snapshot, candidate, &state.owners, &shared.settings, capture)
    {
        let object = record.objects.first().map_or("", |o| o.full_name.as_str());
        tracing::warn!(
            target: "icegate::shadow",
            operation = d.operation,
            object,
            user = record.user.as_deref().unwrap_or_default(),
            live = %d.live,
            candidate = %d.candidate,
            "shadow policy disagrees"
        );
        m.shadow_disagreements
            .get_or_create(&crate::ops::metrics::OperationLabels { operation: d.operation.to_owned() })
            .inc();
    }
}
