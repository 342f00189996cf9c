//! dcgm-sim (in progress).
