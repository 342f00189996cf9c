//! The binary's own parts, one concern a file, in the order `run` (in `main.rs`) takes them:
//! the arguments checked into [`settings`], the [`library`] check, the [`listener`], the
//! [`published`] state the server answers from, the [`workloads`] the labels come from, the
//! [`collectors`] started (each one's [`start`] and its [`collect_loop`]); `--once` is
//! [`once`]. The library half (`dcgm_exporter`) holds everything a test can reach.

pub(crate) mod collect_loop;
pub(crate) mod collectors;
pub(crate) mod library;
pub(crate) mod listener;
pub(crate) mod once;
pub(crate) mod otlp_push;
pub(crate) mod published;
pub(crate) mod settings;
pub(crate) mod start;
pub(crate) mod workloads;

use std::process::ExitCode;

/// Logs `msg` as an error and gives the exit status `code` (1: DCGM or server failure, 2: bad
/// arguments or configuration).
pub(crate) fn fail(code: u8, msg: impl std::fmt::Display) -> ExitCode {
    log::error!("{msg}");
    ExitCode::from(code)
}
