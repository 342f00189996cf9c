//! Placeholder while the Python bindings are written.
