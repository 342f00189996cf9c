//! One-call DCGM reads (in progress).
