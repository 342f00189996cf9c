//! Typed ids of the host engine's objects (groups, field groups): a number with its own type,
//! so a group id cannot be passed where a field-group id is wanted.

/// Defines an id type over a C id type.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $c:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(u64);

        impl $name {
            /// The number.
            pub fn value(self) -> u64 {
                self.0
            }

            pub(crate) fn from_raw(v: $c) -> Self {
                Self(v as u64)
            }

            pub(crate) fn raw(self) -> $c {
                self.0 as $c
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }

        impl From<u64> for $name {
            fn from(v: u64) -> Self {
                Self(v)
            }
        }
    };
}

pub(crate) use id_type;
