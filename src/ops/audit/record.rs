//! One request's audit line as data (docs/design.md §10's keys): the record the serving layer
//! fills and `line` writes.

use serde::Serialize;
use std::sync::Arc;

/// An object a request named, as `{"type", "fullName"}`.
#[derive(Clone, Debug, Serialize)]
pub struct Object {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(rename = "fullName")]
    pub full_name: String,
}

/// One request's audit line: what the stages learned about it; absent values are written as
/// `null`. The serving layer builds it from its request context once the request is answered.
///
/// `line::write` writes it by hand, in this field order; the `Serialize` derive is what a test
/// compares that line with.
#[derive(Debug, Default, Serialize)]
pub struct Record {
    pub ts: String,
    pub request_id: String,
    pub user: Option<String>,
    pub groups: Option<Vec<String>>,
    pub held_roles: Option<Vec<String>>,
    pub active_roles: Option<Vec<String>>,
    pub active_roles_header: Option<String>,
    pub operation: Option<&'static str>,
    pub objects: Vec<Object>,
    /// `allow` when forwarded, `deny` otherwise.
    pub decision: &'static str,
    pub status: u16,
    pub reason: Option<String>,
    /// What was done to vended credentials: `kept`, `stripped`, `downscoped`, or null.
    pub credential: Option<&'static str>,
    pub policy_generation: u64,
    /// The live policy's content hash (`sha256:...`), beside its generation.
    pub policy_hash: String,
    /// The name of the upstream of the request's catalog (docs/design.md §7), beside the
    /// contract's keys; null when none serves it or the request never named one.
    #[serde(serialize_with = "upstream_name")]
    pub upstream: Option<Arc<str>>,
    pub upstream_status: Option<u16>,
    pub duration_ms: f64,
}

fn upstream_name<S: serde::Serializer>(name: &Option<Arc<str>>, s: S) -> Result<S::Ok, S::Error> {
    name.as_deref().serialize(s)
}
