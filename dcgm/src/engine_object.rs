//! An object the host engine keeps for a client (a group, a field group): the id, the handle
//! it lives on, and whether dropping the last clone destroys it on the engine.
//!
//! `Group` and `FieldGroup` share this one owner type, so the rule "created here: destroyed
//! once, when the last clone drops; loaded by id: never destroyed" is written once.

use std::sync::Arc;

use crate::error::Result;
use crate::handle::Handle;

/// An id of an object the host engine can destroy.
pub(crate) trait EngineId: Copy + std::fmt::Debug {
    /// Destroys the object with this id on `handle`'s host engine.
    fn destroy(self, handle: &Handle) -> Result<()>;
}

/// The owner of one engine object, shared by the clones of its safe wrapper through an `Arc`.
/// `D` is what the wrapper keeps beside the id (a field group's name and fields).
pub(crate) struct EngineObject<I: EngineId, D = ()> {
    handle: Handle,
    id: I,
    owned: bool,
    data: D,
}

impl<I: EngineId, D> EngineObject<I, D> {
    /// An object this client created: destroyed when the last clone drops.
    pub(crate) fn created(handle: &Handle, id: I, data: D) -> Arc<Self> {
        Arc::new(Self {
            handle: handle.clone(),
            id,
            owned: true,
            data,
        })
    }

    /// An object created elsewhere (a built-in group, another client's): never destroyed here.
    pub(crate) fn borrowed(handle: &Handle, id: I, data: D) -> Arc<Self> {
        Arc::new(Self {
            handle: handle.clone(),
            id,
            owned: false,
            data,
        })
    }

    pub(crate) fn id(&self) -> I {
        self.id
    }

    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }

    pub(crate) fn owned(&self) -> bool {
        self.owned
    }

    pub(crate) fn data(&self) -> &D {
        &self.data
    }

    /// Destroys the object now and returns the engine's answer (a drop swallows it). Does
    /// nothing while other clones hold it, or for a borrowed object.
    pub(crate) fn destroy(this: Arc<Self>) -> Result<()> {
        match Arc::try_unwrap(this) {
            Ok(mut object) if object.owned => {
                // Cleared first, so that Drop does not destroy it a second time.
                object.owned = false;
                object.id.destroy(&object.handle)
            }
            _ => Ok(()),
        }
    }
}

impl<I: EngineId, D> Drop for EngineObject<I, D> {
    fn drop(&mut self) {
        if self.owned {
            // A drop cannot report an error; `destroy` is there for callers who want it.
            let _ = self.id.destroy(&self.handle);
        }
    }
}
