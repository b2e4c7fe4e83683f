//! The other end of a connection, as the providers see it.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};

/// The other end of a connection: its address, and the client certificate the TLS listener
/// verified, if any (DER).
#[derive(Clone, Debug)]
pub struct Peer {
    pub ip: IpAddr,
    pub client_cert: Option<std::sync::Arc<Vec<u8>>>,
    /// Whether the connection sent a head with ambiguous framing ([`crate::serve::listen::framing`]).
    pub framing: std::sync::Arc<Ambiguity>,
}

impl Peer {
    pub fn plain(ip: IpAddr) -> Self {
        Self { ip, client_cert: None, framing: std::sync::Arc::default() }
    }
}

/// Whether a connection sent a request head whose framing two hops could read differently: the
/// listener's framing scanner marks it, the accept stage reads it.
#[derive(Debug, Default)]
pub struct Ambiguity(AtomicBool);

impl Ambiguity {
    pub fn seen(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    pub fn mark(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
