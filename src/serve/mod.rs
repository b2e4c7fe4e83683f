//! The serving path, in four rooms with one-way doors (each room imports only the rooms below
//! it; tests/integration/architecture.rs enforces it):
//!
//! - [`listen`]: the listener (TLS, limits, idle connections, framing) and the admin port;
//! - [`pipeline`]: one request's way through icegate, in docs/design.md §1's order
//!   ([`pipeline::proxy`]), with its stages, the identity providers, the questions asked of
//!   the upstream and the one mapping of errors to answers ([`pipeline::rescue`]);
//! - [`upstream`]: the client of each upstream catalog (pooled connections, its credential);
//! - [`storage`]: credentials and signing for the tables' storage (STS, the AWS credential
//!   chain, vending, the local signer).
//!
//! [`cache`] is the one cache type every room may use; it imports no room.

pub mod cache;
pub mod listen;
pub mod pipeline;
pub mod storage;
pub mod upstream;
