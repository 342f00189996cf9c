//! The HTTP(S) side of the exporter: the server of `/metrics` and `/health` ([`server`]), its
//! web configuration ([`WebConfig`](server::WebConfig): TLS, basic auth, headers), and the
//! limits that keep hostile or broken clients from locking anyone out (request framing,
//! deadlines on reads and writes, connection slots per client), with its own metrics.

pub(crate) mod basic_auth;
pub(crate) mod client_slots;
pub(crate) mod deadline_io;
pub(crate) mod request_framing;
pub(crate) mod self_metrics;
pub mod server;
pub(crate) mod throttled_log;
pub(crate) mod web_config;
