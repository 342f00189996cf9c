//! DCGM's bitmask enums (health systems, policy conditions) as `bitflags` types, with the
//! C-style names DCGM's tools print.

/// Declares a [`bitflags`] type over DCGM's `u32` mask, plus `name()` and a `Display` of the
/// C-style names joined with `|` (`PCIE|MEM`; unnamed bits in hex; `-` for the empty set).
macro_rules! flag_set {
    (
        $(#[$($meta:tt)*])*
        $vis:vis struct $name:ident($ty:ty) {
            $( $(#[$($fmeta:tt)*])* const $flag:ident = $value:expr; )*
        }
    ) => {
        bitflags::bitflags! {
            $(#[$($meta)*])*
            #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
            $vis struct $name: $ty {
                $( $(#[$($fmeta)*])* const $flag = $value; )*
                // DCGM may report bits this version does not name: keep them.
                const _ = !0;
            }
        }

        impl $name {
            /// The C-style name (`PCIE`) of a set that is exactly one named constant.
            pub fn name(self) -> Option<&'static str> {
                <Self as bitflags::Flags>::FLAGS
                    .iter()
                    .find(|f| !f.name().is_empty() && *f.value() == self)
                    .map(|f| f.name())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                if let Some(n) = self.name() {
                    return f.write_str(n);
                }
                if self.is_empty() {
                    return f.write_str("-");
                }
                let mut first = true;
                for b in self.iter() {
                    if !first {
                        f.write_str("|")?;
                    }
                    first = false;
                    match b.name() {
                        Some(n) => f.write_str(n)?,
                        None => write!(f, "{:#x}", b.bits())?,
                    }
                }
                Ok(())
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({})", stringify!($name), self)
            }
        }
    };
}
pub(crate) use flag_set;

#[cfg(test)]
mod tests {
    use crate::{HealthSystems, PolicyCondition};

    #[test]
    fn set_operations_names_and_unknown_bits() {
        let s = HealthSystems::MEM | HealthSystems::PCIE;
        assert_eq!(s.to_string(), "PCIE|MEM");
        assert_eq!((s ^ HealthSystems::MEM), HealthSystems::PCIE);
        assert!((!s).contains(HealthSystems::THERMAL) && !(!s).contains(HealthSystems::MEM));
        assert_eq!(HealthSystems::ALL.name(), Some("ALL"));
        assert_eq!(HealthSystems::empty().to_string(), "-");
        // A bit this version does not name survives a round trip and prints in hex.
        let odd = PolicyCondition::from_bits_retain(PolicyCondition::XID.bits() | 1 << 30);
        assert_eq!(odd.bits() & (1 << 30), 1 << 30);
        assert_eq!(odd.to_string(), "XID|0x40000000");
        assert_eq!(
            format!("{:?}", PolicyCondition::DBE),
            "PolicyCondition(DBE)"
        );
    }
}
