//! A value of a field as the simulator holds it, before it is written into a C struct.

/// A generated or injected sample.
#[derive(Debug, Clone, PartialEq)]
pub enum SimValue {
    Int(i64),
    Dbl(f64),
    Str(String),
    Blob(Vec<u8>),
    /// The field is not supported for this entity.
    NotSupported,
    /// No value (blank).
    Blank,
    /// Several samples at the same time (one per running process for the PID-list fields).
    Multi(Vec<SimValue>),
}
