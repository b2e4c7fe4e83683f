//! Operations: policy reload, shadow decisions, the audit log, metrics, the ownership
//! store (embedded SQLite or PostgreSQL), and waiting on the injectable clock.

pub mod audit;
pub mod gravitino;
pub mod metrics;
pub mod owners;
pub mod reload;
pub mod shadow;
pub mod state;
pub mod timer;
