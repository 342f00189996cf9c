//! The terminal given back on every way out: a guard for quits, errors and panics, and a thread
//! for SIGINT, SIGTERM and SIGHUP.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
/// Gives the terminal back when dropped: on a quit, an error, and a panic's unwinding
/// (`ratatui::try_init` also installs a panic hook that restores it before the message prints).
pub struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// How long the main loop has, after a signal, to leave by itself (it looks every 200 ms)
/// before the signal thread gives the terminal back and exits for it: the loop may be stuck in
/// a DCGM call to a host engine that stopped answering.
const SIGNAL_GRACE: Duration = Duration::from_secs(2);

/// Catches SIGINT, SIGTERM and SIGHUP: the number of the signal is stored in `caught` for the
/// main loop to leave cleanly.
pub fn catch_signals(caught: Arc<AtomicI32>) -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                caught.store(sig, Ordering::SeqCst);
                std::thread::sleep(SIGNAL_GRACE);
                ratatui::restore();
                std::process::exit(128 + sig);
            }
        })?;
    Ok(())
}
