//! The names of dcgm's flag types, for the Python enums built from them.

/// Every named constant of a flags type (the unnamed catch-all that keeps unknown bits is left
/// out).
pub fn named_flags<F: bitflags::Flags<Bits = u32>>() -> Vec<(&'static str, u32)> {
    F::FLAGS
        .iter()
        .filter(|f| !f.name().is_empty())
        .map(|f| (f.name(), f.value().bits()))
        .collect()
}
