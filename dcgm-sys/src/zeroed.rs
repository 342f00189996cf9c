//! Zero-initialisation of plain C structs.

use std::alloc::{Layout, alloc_zeroed, handle_alloc_error};

/// Types for which the all-zero bit pattern is a valid value (plain C structs of integers,
/// floats, arrays and raw pointers).
///
/// # Safety
///
/// Implementors must be valid when every byte is zero: no references, no non-nullable function
/// pointers, no enums with Rust layout.
pub unsafe trait Zeroable: Sized {}

/// A zeroed value.
pub fn zeroed<T: Zeroable>() -> T {
    // SAFETY: `Zeroable` guarantees that all-zero bytes are a valid `T`.
    unsafe { std::mem::zeroed() }
}

/// A zeroed value on the heap, allocated directly there (no large stack temporary).
pub fn boxed_zeroed<T: Zeroable>() -> Box<T> {
    let layout = Layout::new::<T>();
    if layout.size() == 0 {
        return Box::new(zeroed());
    }
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        handle_alloc_error(layout);
    }
    // SAFETY: the allocation has `T`'s layout, was made by the global allocator, and all-zero
    // bytes are a valid `T` (`Zeroable`).
    unsafe { Box::from_raw(ptr) }
}

macro_rules! zeroable_primitives {
    ($($t:ty),*) => { $(
        // SAFETY: zero is a valid value of every primitive integer and float type.
        unsafe impl Zeroable for $t {}
    )* };
}
zeroable_primitives!(u8, i8, u16, i16, u32, i32, u64, i64, usize, isize, f32, f64);
// SAFETY: an array of zeroable elements is zeroable.
unsafe impl<T: Zeroable, const N: usize> Zeroable for [T; N] {}
