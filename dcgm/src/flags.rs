//! A small bit-set newtype generator for DCGM's bitmask enums (health systems, policy
//! conditions).

/// Declares a `Copy` newtype over an integer with named single-bit constants, set operations
/// (`|`, `&`, `-`), iteration over the set bits, and `Display` as `A|B`.
macro_rules! flag_set {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident($ty:ty) {
            $( $(#[$fmeta:meta])* const $flag:ident = $value:expr; )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        $vis struct $name($ty);

        impl $name {
            $( $(#[$fmeta])* pub const $flag: Self = Self($value); )*

            const NAMED: &'static [(&'static str, $ty)] = &[$((stringify!($flag), $value)),*];

            /// The empty set.
            pub const fn empty() -> Self {
                Self(0)
            }

            /// The C bitmask.
            pub const fn bits(self) -> $ty {
                self.0
            }

            /// From a C bitmask; bits this crate does not name are kept.
            pub const fn from_bits(bits: $ty) -> Self {
                Self(bits)
            }

            /// Whether every bit of `other` is set here.
            pub const fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }

            /// Whether any bit of `other` is set here.
            pub const fn intersects(self, other: Self) -> bool {
                self.0 & other.0 != 0
            }

            /// Whether no bit is set.
            pub const fn is_empty(self) -> bool {
                self.0 == 0
            }

            /// Each set bit on its own, lowest first.
            pub fn iter(self) -> impl Iterator<Item = Self> {
                (0..<$ty>::BITS)
                    .map(|b| (1 as $ty) << b)
                    .filter(move |b| self.0 & b != 0)
                    .map(Self)
            }

            /// The C-style name (`PCIE`) of a set that is exactly one named constant.
            pub fn name(self) -> Option<&'static str> {
                Self::NAMED.iter().find(|(_, v)| *v == self.0).map(|(n, _)| *n)
            }
        }

        impl std::ops::BitOr for $name {
            type Output = Self;
            fn bitor(self, rhs: Self) -> Self {
                Self(self.0 | rhs.0)
            }
        }

        impl std::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, rhs: Self) {
                self.0 |= rhs.0;
            }
        }

        impl std::ops::BitAnd for $name {
            type Output = Self;
            fn bitand(self, rhs: Self) -> Self {
                Self(self.0 & rhs.0)
            }
        }

        impl std::ops::Sub for $name {
            type Output = Self;
            fn sub(self, rhs: Self) -> Self {
                Self(self.0 & !rhs.0)
            }
        }

        impl std::fmt::Display for $name {
            /// `PCIE|MEM`; bits without a name as hex; `-` for the empty set.
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
                        None => write!(f, "{:#x}", b.0)?,
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
