//! Operations: policy reload, shadow decisions, the audit log, metrics, and the ownership
//! store (embedded SQLite or PostgreSQL).

pub mod audit;
pub mod metrics;
pub mod owners;
pub mod reload;
pub mod shadow;
pub mod state;
