//! The listener: connections accepted (TLS, mTLS, limits), watched (idle time, ambiguous
//! framing) and handed to the pipeline one request at a time; and the admin port (health,
//! readiness, metrics). It owns no decision: it may use the pipeline, the upstream client
//! and storage, and none of them may use it.

pub mod admin;
pub mod framing;
pub mod idle;
pub mod server;
