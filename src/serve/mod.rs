//! The serving path: the listener (TLS, limits, idle connections), the request pipeline of
//! docs/design.md §1 ([`proxy`]) and its stages, the upstream client and the questions only the
//! upstream can answer, the identity providers, credential vending and signing.

pub mod accept;
pub mod admin;
pub mod answers;
pub mod aws_chain;
pub mod aws_remote;
pub mod cache;
pub mod context;
pub mod directories;
pub mod forward;
pub mod framing;
pub mod identity;
pub mod idle;
pub mod inspect;
pub mod local_signer;
pub mod observe;
pub mod outbound;
pub mod ownership;
pub mod proxy;
pub mod rescue;
pub mod rewrite;
pub mod scans;
pub mod server;
pub mod signer_lookup;
pub mod signers;
pub mod signing;
pub mod staged;
pub mod state;
pub mod sts;
pub mod tokens;
pub mod unnarrowed;
pub mod upstream_auth;
pub mod upstream_calls;
pub mod upstreams;
pub mod vending;
