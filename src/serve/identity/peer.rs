//! The other end of a connection, as the providers see it.

use std::net::IpAddr;

/// The other end of a connection: its address, and the client certificate the TLS listener
/// verified, if any (DER).
#[derive(Clone, Debug)]
pub struct Peer {
    pub ip: IpAddr,
    pub client_cert: Option<std::sync::Arc<Vec<u8>>>,
    /// Whether the connection sent a head with ambiguous framing ([`crate::serve::framing`]).
    pub framing: std::sync::Arc<crate::serve::framing::Ambiguity>,
}

impl Peer {
    pub fn plain(ip: IpAddr) -> Self {
        Self { ip, client_cert: None, framing: std::sync::Arc::default() }
    }
}
