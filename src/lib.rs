//! icegate: an authorizing reverse proxy for Apache Iceberg REST catalogs.
//!
//! Every request runs one fixed pipeline (DESIGN.md §1); the first failing stage answers:
//!
//! ```text
//! accept → identify → parse → classify → narrow → authorize (path) → inspect → authorize (body)
//!        → forward → rewrite → audit
//! ```
//!
//! The decision core is pure: [`policy::Snapshot`] is an immutable, indexed policy, and
//! [`policy::eval`] decides an operation from it with no I/O. [`decide`] runs the stages that
//! need no network in the pipeline's order; `icegate explain` and the conformance tests use it.

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
