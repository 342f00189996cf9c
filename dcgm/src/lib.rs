//! The safe DCGM object layer (in progress).
