//! The client of each upstream catalog: pooled connections and the forwarded exchange
//! ([`forward`]), icegate's own credential to the catalog ([`upstream_auth`]), and the lanes
//! that pair a catalog's client with its storage settings ([`upstreams`]). It may use storage,
//! never the pipeline or the listener: it knows nothing of a request's decision.

pub mod forward;
pub mod upstream_auth;
pub mod upstreams;
