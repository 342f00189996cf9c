//! `dcgm-query`'s parts: `nvidia-smi --query-gpu=... --format=csv` over DCGM, the
//! `--query-compute-apps` process list, and the dispatch of `-q` to nvidia-smi's report
//! ([`crate::nvsmi_report`]).
//!
//! The binary (`src/bin/dcgm-query.rs`) parses the command line ([`nvsmi_args`] first) and
//! calls [`print_gpu_help`], [`print_apps_help`], [`report`] or [`csv`]. The modules: `format`
//! (`--format` and a cell's text), `gpus` (`-i`), `out` (stdout or `-f FILE`), `gpu_csv`
//! (`--query-gpu`), `compute_apps` (`--query-compute-apps`), `help` (the property lists).

mod compute_apps;
mod format;
mod gpu_csv;
mod gpus;
mod help;
mod out;

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use crate::nvsmi_properties as nvsmi;
use crate::nvsmi_report::ReportArgs;
use crate::{ConnectArgs, Result};

pub use help::{print_apps_help, print_gpu_help};

/// nvidia-smi spells the millisecond loop `-lms`, which no argument parser takes as one short
/// option: it becomes `--loop-ms` before parsing.
pub fn nvsmi_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    args.into_iter()
        .map(|a| match a.to_str() {
            Some("-lms") => "--loop-ms".into(),
            Some(s) if s.starts_with("-lms=") => format!("--loop-ms={}", &s[5..]).into(),
            _ => a,
        })
        .collect()
}

/// `-q [-d SECTIONS]`: nvidia-smi's report of the GPUs `ids` names (`-i`; every GPU when
/// empty) on standard output.
pub fn report(conn: &ConnectArgs, ids: &[String], args: &ReportArgs) -> Result<()> {
    let handle = conn.open()?;
    let all = handle.system().gpu_ids()?;
    let ids = gpus::select_gpus(&handle, &all, ids)?;
    crate::nvsmi_report::run_report(
        &handle,
        &ids,
        &args.display,
        args.sample_window(),
        &mut std::io::stdout(),
    )
}

/// The CSV queries as the command line gives them.
#[derive(Debug, Clone, Copy)]
pub struct Queries<'a> {
    /// `--query-gpu`'s properties.
    pub gpu: &'a [String],
    /// `--query-compute-apps`'s properties.
    pub apps: &'a [String],
    /// `--format`.
    pub format: &'a str,
    /// `-i`: the GPUs (every GPU when empty).
    pub ids: &'a [String],
    /// `-f FILE`, instead of standard output.
    pub file: Option<&'a Path>,
    /// `-l`/`-lms`: repeat this often until interrupted.
    pub period: Option<Duration>,
}

/// Prints the `--query-gpu` and `--query-compute-apps` lines of `q`, once or every period.
/// Every name is checked before DCGM is started: a typo costs no engine start.
pub fn csv(conn: &ConnectArgs, q: &Queries<'_>) -> Result<()> {
    let fmt = format::parse_format(q.format)?;
    let gpu_props = q
        .gpu
        .iter()
        .map(|p| nvsmi::gpu_property(p.trim()).ok_or_else(|| not_valid(p)))
        .collect::<Result<Vec<_>, _>>()?;
    let app_props = q
        .apps
        .iter()
        .map(|p| nvsmi::app_property(p.trim()).ok_or_else(|| not_valid(p)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = out::Out::open(q.file)?;
    let handle = conn.open()?;
    let all = handle.system().gpu_ids()?;
    let ids = gpus::select_gpus(&handle, &all, q.ids)?;
    let (group, gpus) = crate::gpu_group(&handle, "query", &ids)?;
    let gpu_query = if gpu_props.is_empty() {
        None
    } else {
        Some(gpu_csv::GpuQuery::watch(
            &handle,
            &group,
            (gpus.clone(), all.len()),
            gpu_props,
            q.period,
        )?)
    };
    let mut first = true;
    loop {
        if let Some(g) = &gpu_query {
            g.print(&handle, &group, &fmt, first, &mut out)?;
        }
        if !app_props.is_empty() {
            compute_apps::query_apps(&handle, &group, &app_props, &fmt, first, &mut out)?;
        }
        first = false;
        match q.period {
            Some(p) => std::thread::sleep(p),
            None => return Ok(()),
        }
    }
}

/// nvidia-smi's words for a property it does not know.
fn not_valid(p: &str) -> String {
    format!(
        "Field \"{}\" is not a valid field to query (--help-query-gpu and \
         --help-query-compute-apps list the valid ones)",
        p.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lms_becomes_loop_ms_and_nothing_else_changes() {
        let args = ["query", "-lms", "500", "-lms=250", "-l", "--lms"].map(OsString::from);
        assert_eq!(
            nvsmi_args(args),
            ["query", "--loop-ms", "500", "--loop-ms=250", "-l", "--lms"].map(OsString::from)
        );
    }
}
