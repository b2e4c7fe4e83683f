//! One request's way through icegate, top to bottom in [`proxy`] (docs/design.md §1: accept,
//! identify, parse, classify, narrow, authorize, inspect, forward, rewrite, audit), its stages,
//! the identity providers, the questions only the upstream can answer ([`answers`],
//! [`upstream_calls`]), the shared serving state ([`state`]) and the one place errors become
//! answers ([`rescue`]). It may use the upstream client and storage, never the listener.

pub mod accept;
pub mod answers;
pub mod context;
pub mod directories;
pub mod forwarding;
pub mod identity;
pub mod inspect;
pub mod observe;
pub mod outbound;
pub mod ownership;
pub mod proxy;
pub mod rescue;
pub mod rewrite;
pub mod signer_lookup;
pub mod signing;
pub mod staged;
pub mod state;
pub mod tokens;
pub mod unnarrowed;
pub mod upstream_calls;
