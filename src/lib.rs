//! icegate: an authorizing reverse proxy for Apache Iceberg REST catalogs.
//!
//! Every request runs one fixed pipeline (docs/design.md §1); the first failing stage answers:
//!
//! ```text
//! accept → identify → parse → classify → narrow → authorize (path) → inspect → authorize (body)
//!        → forward → rewrite → audit
//! ```
//!
//! The decision core is pure: `core::policy::Snapshot` is an immutable, indexed policy, and the
//! evaluator decides an operation from it with no I/O. `core::sequence` runs the stages from
//! parse to the body check for the proxy, `icegate explain`, shadow decisions and the
//! conformance cases alike, asking what only the upstream knows through one trait
//! (docs/architecture.md has the layers and the request path).

#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::string_slice,
        reason = "a test that fails panics"
    )
)]

pub mod cli;
pub mod config;
pub mod core;
pub mod error;
pub mod net;
pub mod ops;
pub mod serve;
