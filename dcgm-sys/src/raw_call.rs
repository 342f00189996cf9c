//! Calling a libdcgm function by its position in the table, with untyped arguments: what a
//! binding for a dynamic language needs (the `dcgm` Python wheel's `dcgm_agent` layer calls
//! every C function through this). Each argument is converted to the parameter's declared C
//! type with a range check, so a Python int too large for a `u16` is an error, not a
//! truncation.
//!
//! ```
//! use dcgm_sys::{DcgmApi, RawArg, RawCallError};
//! let i = DcgmApi::index_of("dcgmGroupCreate").unwrap();
//! assert_eq!(DcgmApi::SYMBOLS[i], "dcgmGroupCreate");
//! assert_eq!(DcgmApi::arity(i), Some(4));
//! assert!(DcgmApi::index_of("dcgmNoSuchFunction").is_none());
//! # let _ = (RawArg::Int(0), std::marker::PhantomData::<RawCallError>);
//! ```

use std::ffi::c_char;
use std::fmt;

use crate::{
    SymbolError, dcgm_error_meta_t, dcgm_field_meta_t, dcgmFieldValueEntityEnumeration_f,
    dcgmFieldValueEnumeration_f, fpRecvUpdates,
};

/// One argument of [`DcgmApi::call_raw`](crate::DcgmApi::call_raw): an integer (an integer
/// parameter, a handle, or the address a pointer parameter takes) or a float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RawArg {
    /// An integer, a handle or an address.
    Int(i128),
    /// A `double` parameter.
    Float(f64),
}

/// Why [`DcgmApi::call_raw`](crate::DcgmApi::call_raw) made no call.
#[derive(Debug, Clone, PartialEq)]
pub enum RawCallError {
    /// No function of the table has that index.
    UnknownFunction(usize),
    /// The loaded library lacks the function.
    Missing(SymbolError),
    /// The number of arguments differs from the C function's.
    Arity {
        /// The C name.
        function: &'static str,
        /// The C function's parameter count.
        expected: usize,
        /// The arguments given.
        given: usize,
    },
    /// An argument does not fit its parameter's C type.
    Argument {
        /// The C name.
        function: &'static str,
        /// The parameter's C name.
        parameter: &'static str,
        /// What was wrong.
        reason: String,
    },
}

impl fmt::Display for RawCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RawCallError::UnknownFunction(i) => write!(f, "no libdcgm function has index {i}"),
            RawCallError::Missing(e) => e.fmt(f),
            RawCallError::Arity {
                function,
                expected,
                given,
            } => write!(
                f,
                "{function} takes {expected} arguments, {given} were given"
            ),
            RawCallError::Argument {
                function,
                parameter,
                reason,
            } => write!(f, "{function}: argument {parameter}: {reason}"),
        }
    }
}

impl std::error::Error for RawCallError {}

/// A C parameter type [`RawArg`] converts to.
pub trait FromRawArg: Sized {
    /// The value, or why it does not fit.
    fn from_raw_arg(arg: RawArg) -> Result<Self, String>;
}

/// A C return type a call answers as an integer (pointers as their address).
pub trait IntoRawReturn {
    /// The value as an integer.
    fn into_raw_return(self) -> i128;
}

fn int(arg: RawArg, what: &str) -> Result<i128, String> {
    match arg {
        RawArg::Int(v) => Ok(v),
        RawArg::Float(v) => Err(format!("expected an integer ({what}), got the float {v}")),
    }
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl FromRawArg for $t {
            fn from_raw_arg(arg: RawArg) -> Result<Self, String> {
                let v = int(arg, stringify!($t))?;
                <$t>::try_from(v).map_err(|_| {
                    format!("{v} is out of range for {} ({} to {})", stringify!($t), <$t>::MIN, <$t>::MAX)
                })
            }
        }
        impl IntoRawReturn for $t {
            fn into_raw_return(self) -> i128 {
                self as i128
            }
        }
    )*};
}
integer!(u64, usize, i32, i64);

// An unsigned parameter of 32 bits or fewer also takes a negative value of its signed twin, as
// C converts one (`-1` is `0xFFFFFFFF` for a `u32`): the library then answers as it answers C
// callers (an id of -1 is its own "bad parameter", not a refusal here).
macro_rules! unsigned_small {
    ($($t:ty: $signed:ty),*) => {$(
        impl FromRawArg for $t {
            fn from_raw_arg(arg: RawArg) -> Result<Self, String> {
                let v = int(arg, stringify!($t))?;
                if let Ok(u) = <$t>::try_from(v) {
                    return Ok(u);
                }
                <$signed>::try_from(v).map(|s| s as $t).map_err(|_| {
                    format!(
                        "{v} is out of range for {} ({} to {})",
                        stringify!($t),
                        <$signed>::MIN,
                        <$t>::MAX
                    )
                })
            }
        }
        impl IntoRawReturn for $t {
            fn into_raw_return(self) -> i128 {
                self as i128
            }
        }
    )*};
}
unsigned_small!(u16: i16, u32: i32);

impl FromRawArg for f64 {
    fn from_raw_arg(arg: RawArg) -> Result<Self, String> {
        Ok(match arg {
            RawArg::Float(v) => v,
            RawArg::Int(v) => v as f64,
        })
    }
}

fn address(arg: RawArg) -> Result<usize, String> {
    let v = int(arg, "an address")?;
    usize::try_from(v).map_err(|_| format!("{v} is not an address"))
}

impl<T> FromRawArg for *const T {
    fn from_raw_arg(arg: RawArg) -> Result<Self, String> {
        Ok(address(arg)? as *const T)
    }
}

impl<T> FromRawArg for *mut T {
    fn from_raw_arg(arg: RawArg) -> Result<Self, String> {
        Ok(address(arg)? as *mut T)
    }
}

macro_rules! callback {
    ($($t:ty),*) => {$(
        impl FromRawArg for $t {
            fn from_raw_arg(arg: RawArg) -> Result<Self, String> {
                let a = address(arg)?;
                // SAFETY: `Option<extern fn>` has the size of an address, and 0 is `None`. That
                // a non-zero address is a function of this signature is the precondition of
                // `call_raw`, which is unsafe.
                Ok(unsafe { std::mem::transmute::<usize, $t>(a) })
            }
        }
    )*};
}
callback!(
    dcgmFieldValueEnumeration_f,
    dcgmFieldValueEntityEnumeration_f,
    fpRecvUpdates
);

macro_rules! pointer_return {
    ($($t:ty),*) => {$(
        impl IntoRawReturn for *const $t {
            fn into_raw_return(self) -> i128 {
                self as usize as i128
            }
        }
    )*};
}
pointer_return!(c_char, dcgm_error_meta_t, dcgm_field_meta_t);
