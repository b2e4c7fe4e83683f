//! The core: pure and synchronous. The policy (model, loading, the indexed snapshot and the
//! evaluator), the active-roles grammar and narrowing, the Iceberg REST protocol as icegate
//! reads it (names, routes, bodies, list and credential scanners), the decision sequence that
//! `explain`, shadow decisions and the proxy all run, and the policy-as-code analyses. No
//! runtime, no network, no database.

pub mod analysis;
pub mod clock;
pub mod credentials;
pub mod decide;
pub mod iceberg;
pub mod offline;
pub mod ownership;
pub mod policy;
pub mod refused;
pub mod restrictions;
pub mod roles;
pub mod sequence;
pub mod text;
pub mod wordscan;
