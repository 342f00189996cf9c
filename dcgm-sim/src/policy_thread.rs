//! The library-owned thread that delivers policy violations to registered callbacks.

/// Stops the thread (at `dcgmShutdown`).
pub fn stop() {}
