//! The DCGM library check at start-up.

use std::process::ExitCode;

use dcgm_exporter::cli::Cli;

use super::fail;

/// Without `--disable-startup-validate`, a library that cannot load is a start-up error, exit
/// status 1 (it will not appear by waiting); an unreachable host engine is waited for later.
pub(crate) fn check(cli: &Cli) -> Result<(), ExitCode> {
    if !cli.disable_startup_validate
        && !cli.simulate
        && let Err(e) = dcgm::Handle::builder().check_library()
    {
        return Err(fail(
            1,
            format_args!("{e} (--disable-startup-validate starts anyway and waits)"),
        ));
    }
    Ok(())
}
