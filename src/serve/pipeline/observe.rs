//! What happens after a request is answered, besides its audit line: the metrics it moves
//! and its shadow decision, made off the serving path (docs/design.md §9, §10).

use crate::core::iceberg::OperationId;
use crate::ops::shadow::Capture;
use crate::serve::pipeline::context::Context;
use crate::serve::pipeline::state::{DecisionState, Shared};
use std::sync::Arc;

/// Metrics and the shadow decision, once the request is answered.
pub fn observe(shared: &Arc<Shared>, state: &Arc<DecisionState>, cx: &mut Context) {
    let m = &shared.metrics;
    let labels = crate::ops::metrics::RequestLabels {
        operation: cx.operation.map_or("unrecognized", OperationId::as_str),
        decision: if cx.allowed { "allow" } else { "deny" },
        status: cx.status,
    };
    m.requests.get_or_create(&labels).inc();
    if let Some(d) = cx.decided_after {
        m.decision_seconds.observe(d.as_secs_f64());
    }
    if let (Some(d), Some(name)) = (cx.upstream_took, &cx.upstream)
        && let Some(lane) = shared.upstreams.lanes().iter().find(|l| Arc::ptr_eq(&l.name, name))
    {
        lane.took(d.as_secs_f64());
    }
    if cx.hidden_entries > 0 {
        m.entries_hidden.inc_by(cx.hidden_entries as u64);
    }
    if let (Some(action), true) = (cx.credential, cx.allowed) {
        m.credentials.get_or_create(&crate::ops::metrics::ActionLabels { action }).inc();
    }
    if let (Some(_), Some(capture)) = (&state.shadow, cx.shadow.take()) {
        let object = cx.objects.first().map_or_else(String::new, |o| o.full_name.clone());
        shadow(shared, state, object, cx.user.clone().unwrap_or_default(), capture);
    }
}

/// Decides `capture` with the live and the candidate policy on a task of its own, never
/// delaying the response; a difference is logged and counted.
fn shadow(shared: &Arc<Shared>, state: &Arc<DecisionState>, object: String, user: String, capture: Capture) {
    let Ok(slot) = Arc::clone(&shared.shadow_slots).try_acquire_owned() else {
        shared.metrics.shadow_skipped.inc();
        return;
    };
    let (shared, state) = (Arc::clone(shared), Arc::clone(state));
    tokio::spawn(async move {
        let _slot = slot;
        let Some(candidate) = &state.shadow else { return };
        let Some(d) =
            crate::ops::shadow::compare(&state.snapshot, candidate, &state.owners, &shared.settings, &capture)
        else {
            return;
        };
        tracing::warn!(
            target: "icegate::shadow",
            operation = d.operation,
            object,
            user,
            live = %d.live,
            candidate = %d.candidate,
            "shadow policy disagrees"
        );
        shared
            .metrics
            .shadow_disagreements
            .get_or_create(&crate::ops::metrics::OperationLabels { operation: d.operation.to_owned() })
            .inc();
    });
}
