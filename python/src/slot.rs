//! `Slot`: the closable Rust value inside a Python object.
//!
//! The Python classes that wrap a DCGM object (handles, groups, field groups, watches, readers,
//! policy registrations and subscriptions) hold it in a `Slot`, so `close()` can release it
//! while other references to the Python object live on. Once closed, using it raises
//! `DCGMError_Uninitialized`. A lock poisoned by a panic is recovered: the value stays usable.

use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;

use crate::errors;

/// A value that can be taken out ("closed") through a shared reference, and that is dropped
/// with the GIL released (see [`drop_detached`]).
pub struct Slot<T: Send> {
    inner: Mutex<Option<T>>,
    /// What the value is, for the error once closed ("this `what` was closed").
    what: &'static str,
}

impl<T: Send> Slot<T> {
    /// An open slot holding `value`; `what` names it in the error raised once it is closed.
    pub fn new(value: T, what: &'static str) -> Self {
        Self {
            inner: Mutex::new(Some(value)),
            what,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<T>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn closed_error(&self, py: Python<'_>) -> PyErr {
        errors::closed(py, self.what)
    }

    /// Whether the value was taken out.
    pub fn is_closed(&self) -> bool {
        self.lock().is_none()
    }

    /// Takes the value out, closing the slot; `None` if it was closed already.
    pub fn take(&self) -> Option<T> {
        self.lock().take()
    }

    /// Takes the value out and consumes it with `f`, with the GIL released; `None` (and `f`
    /// not called) if the slot was closed already.
    pub fn close_with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(T) -> R + Send) -> Option<R> {
        let value = self.take();
        py.detach(move || value.map(f))
    }

    /// Takes the value out and drops it with the GIL released. Closing twice does nothing.
    pub fn close(&self, py: Python<'_>) {
        self.close_with(py, drop);
    }

    /// `f` of the value, with the GIL held; `DCGMError_Uninitialized` once closed.
    pub fn map<R>(&self, py: Python<'_>, f: impl FnOnce(&T) -> R) -> PyResult<R> {
        self.lock()
            .as_ref()
            .map(f)
            .ok_or_else(|| self.closed_error(py))
    }

    /// `f` of the value, with the GIL released and the slot locked meanwhile;
    /// `DCGMError_Uninitialized` once closed.
    pub fn map_detached<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut T) -> R + Send,
    ) -> PyResult<R> {
        py.detach(|| self.lock().as_mut().map(f))
            .ok_or_else(|| self.closed_error(py))
    }

    /// `f` of the value, with the GIL released and the slot locked meanwhile; `None` (and `f`
    /// not called) once closed.
    pub fn try_map_detached<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut T) -> R + Send,
    ) -> Option<R> {
        py.detach(|| self.lock().as_mut().map(f))
    }

    /// `f` of the value, or of `None` once closed.
    pub fn peek<R>(&self, f: impl FnOnce(Option<&T>) -> R) -> R {
        f(self.lock().as_ref())
    }

    /// Like [`Slot::peek`] without waiting: `None` if the slot is locked (or poisoned).
    pub fn try_peek<R>(&self, f: impl FnOnce(Option<&T>) -> R) -> Option<R> {
        self.inner.try_lock().ok().map(|guard| f(guard.as_ref()))
    }
}

impl<T: Send + Clone> Slot<T> {
    /// A clone of the value (DCGM objects are shared handles), or `DCGMError_Uninitialized`
    /// once closed.
    pub fn get(&self, py: Python<'_>) -> PyResult<T> {
        self.lock().clone().ok_or_else(|| self.closed_error(py))
    }
}

impl<T: Send> Drop for Slot<T> {
    fn drop(&mut self) {
        if let Some(value) = self
            .inner
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            drop_detached(value);
        }
    }
}

/// Drops a value that may call into DCGM with the GIL released: a DCGM thread (a policy
/// callback) may need the GIL before the call it blocks returns.
fn drop_detached<T: Send>(v: T) {
    Python::attach(|py| py.detach(move || drop(v)));
}
