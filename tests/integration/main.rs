//! icegate's integration tests: one binary, one module per area.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::string_slice,
    reason = "a test or benchmark that fails panics"
)]

mod analysis_props;
mod architecture;
mod attacks;
mod catalog_prefixes;
mod catalogs;
mod cli;
mod conformance;
mod conformance_served;
mod deploy;
mod docs;
mod drift;
mod fake_upstream;
mod gravitino;
mod identity_jwt;
mod java_names;
mod logs;
mod many_upstreams;
mod messages;
mod openapi;
mod outbound;
mod owners;
mod owners_default;
mod owners_pg;
mod policy_load;
mod policy_tools;
mod properties;
mod reload;
mod reload_memory;
mod restrictions;
mod restrictions_cover;
mod restrictions_props;
mod roles;
mod serve;
mod shutdown;
mod signing;
mod sts;
mod support;
mod tls;
mod upstream_oauth2;
mod upstream_proxy;
mod upstream_sigv4;
mod vending;
