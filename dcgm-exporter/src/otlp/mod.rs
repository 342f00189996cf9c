//! Metrics export over OTLP (`--otlp-endpoint`): the mapping of DCGM's fields to OTLP
//! metrics ([`mapping`]), the conversion of a collection ([`convert`]) into the protobuf
//! encoding (`wire`), the flags and variables ([`config`]), the compression (`compression`),
//! the pusher and its transports ([`push`]), and the push of `--once`
//! ([`once`]).

pub(crate) mod compression;
pub mod config;
pub mod convert;
pub mod mapping;
pub mod once;
pub mod push;
pub(crate) mod wire;
