//! The adversarial suite (issue 8): every known way to make an authorizing proxy say yes when it
//! must not, or fall over, tried against icegate in front of the recording fake catalog. Each
//! test asserts the response (status and Iceberg error JSON) and what the upstream received —
//! usually nothing, or exactly the canonical request when the request is allowed.
//!
//! Expected outcomes come from DESIGN.md §5–§8. Where a case was already covered by another
//! module when this suite was written, the suite names that test instead of repeating it.
//! Tests named `finding_*` are regressions for what this suite found and src/ now fixes.

mod availability;
mod bodies;
mod framing;
mod headers;
mod jwt;
mod locations;
mod paths;
mod responses;
mod seams;

use crate::fake_upstream::{Answer, FakeUpstream, Gate, Recorded, Reply, basic, gate, send};

pub use crate::support::SALES_POLICY as POLICY;

pub const ORDERS: &str = "/v1/prod/namespaces/sales/tables/orders";

/// The recording catalog and icegate in front of it.
pub struct Lab {
    pub up: FakeUpstream,
    pub gate: Gate,
}

impl Lab {
    /// A catalog where nothing exists yet: `{}` 200 to everything but `HEAD` (404).
    pub async fn new() -> Self {
        Self::with(Reply::empty_catalog, |_| {}).await
    }

    pub async fn with(
        script: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
        tweak: impl FnOnce(&mut icegate::config::Config),
    ) -> Self {
        Self::with_policy(POLICY, script, tweak).await
    }

    /// As [`Lab::with`], with another policy.
    pub async fn with_policy(
        policy: &str,
        script: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
        tweak: impl FnOnce(&mut icegate::config::Config),
    ) -> Self {
        let up = FakeUpstream::start(script).await;
        let gate = gate(&up.url(""), policy, tweak).await;
        Self { up, gate }
    }

    pub fn addr(&self) -> std::net::SocketAddr {
        self.gate.addr
    }

    /// A GET as `user` (simple identity).
    pub async fn get(&self, user: &str, target: &str) -> Answer {
        send(self.gate.addr, "GET", target, &[("authorization", &basic(user))], b"").await
    }

    /// A request as `user` with extra headers and a body.
    pub async fn call(&self, user: &str, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
        let auth = basic(user);
        let mut all = vec![("authorization", auth.as_str())];
        all.extend_from_slice(headers);
        send(self.gate.addr, method, target, &all, body).await
    }

    /// The targets the upstream received, in order.
    pub fn targets(&self) -> Vec<String> {
        self.up.requests().into_iter().map(|r| r.target).collect()
    }
}

/// `raw` HTTP/1.1 bytes as alice, with `connection: close` and the given request line and extra
/// header lines (each ending in `\r\n`).
pub fn raw_request(line: &str, extra: &str, body: &str) -> String {
    format!("{line}\r\nhost: x\r\nauthorization: {}\r\nconnection: close\r\n{extra}\r\n{body}", basic("alice"))
}

/// The status code of the first response in `out`, or 0 when nothing came back.
pub fn status_of(out: &str) -> u16 {
    out.strip_prefix("HTTP/1.1 ").and_then(|s| s.get(..3)).and_then(|s| s.parse().ok()).unwrap_or(0)
}
