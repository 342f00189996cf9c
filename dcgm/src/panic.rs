//! Panics inside callbacks that C calls: caught before they reach C (unwinding through a C
//! frame is undefined behaviour), kept, and raised again once the C call has returned, so the
//! caller sees the original panic and its message, not a stand-in error.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

thread_local! {
    /// The first panic caught on this thread since the last [`check`].
    static CAUGHT: RefCell<Option<Box<dyn Any + Send>>> = const { RefCell::new(None) };
}

/// Runs `f` from inside a C callback: its result, or `None` after keeping its panic for
/// [`check`]. Once a panic is kept, later calls do not run `f` (the C call is being unwound
/// by returning errors to it).
pub(crate) fn wrap<T>(f: impl FnOnce() -> T) -> Option<T> {
    if CAUGHT.with(|c| c.borrow().is_some()) {
        return None;
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(p) => {
            CAUGHT.with(|c| *c.borrow_mut() = Some(p));
            None
        }
    }
}

/// After the C call returns: raises the panic a callback of it kept, if any.
pub(crate) fn check() {
    if let Some(p) = CAUGHT.with(|c| c.borrow_mut().take()) {
        resume_unwind(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_panic_is_raised_again_with_its_message() {
        assert_eq!(wrap(|| 5), Some(5));
        let caught = wrap(|| -> i32 { panic!("decoder bug") });
        assert_eq!(caught, None);
        // Later callbacks of the same C call are skipped.
        assert_eq!(wrap(|| 6), None);
        let raised = catch_unwind(check).unwrap_err();
        assert_eq!(raised.downcast_ref::<&str>(), Some(&"decoder bug"));
        // Raised once: the slot is empty again.
        check();
        assert_eq!(wrap(|| 7), Some(7));
    }
}
