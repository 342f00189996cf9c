//! Entities: the entity-group table `dcgm.fields` and `dcgm.EntityGroup` are built from, and
//! entity arguments (pairs, or pydcgm's entity-pair objects) to and from `dcgm::Entity`.

use dcgm::raw::Binding;
use dcgm::raw::sys;
use dcgm::{Entity, EntityGroup};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Every entity group: `(constant name, value, DCGM's display name)`.
#[pyfunction]
pub fn entity_groups() -> Vec<(&'static str, u32, &'static str)> {
    let all = [
        ("DCGM_FE_NONE", sys::DCGM_FE_NONE),
        ("DCGM_FE_GPU", sys::DCGM_FE_GPU),
        ("DCGM_FE_VGPU", sys::DCGM_FE_VGPU),
        ("DCGM_FE_SWITCH", sys::DCGM_FE_SWITCH),
        ("DCGM_FE_GPU_I", sys::DCGM_FE_GPU_I),
        ("DCGM_FE_GPU_CI", sys::DCGM_FE_GPU_CI),
        ("DCGM_FE_LINK", sys::DCGM_FE_LINK),
        ("DCGM_FE_CPU", sys::DCGM_FE_CPU),
        ("DCGM_FE_CPU_CORE", sys::DCGM_FE_CPU_CORE),
        ("DCGM_FE_CONNECTX", sys::DCGM_FE_CONNECTX),
    ];
    all.iter()
        .map(|(n, v)| (*n, *v, sys::entity_group_name(*v)))
        .collect()
}

/// The number of entity groups (`DCGM_FE_COUNT`).
pub const ENTITY_GROUP_COUNT: u32 = sys::DCGM_FE_COUNT;

/// An entity argument: an `(entityGroupId, entityId)` pair, or an object with
/// `entityGroupId`/`entityId` (pydcgm's `c_dcgmGroupEntityPair_t`) or
/// `entity_group`/`entity_id` attributes.
pub fn extract_entity(obj: &Bound<'_, PyAny>) -> PyResult<Entity> {
    let pair = |g: Bound<'_, PyAny>, i: Bound<'_, PyAny>| -> PyResult<Entity> {
        let g: u32 = g.extract()?;
        let i: u32 = i.extract()?;
        Ok(Entity::new(EntityGroup::from_raw(g), i))
    };
    if let Ok(t) = obj.cast::<PyTuple>()
        && t.len() == 2
    {
        return pair(t.get_item(0)?, t.get_item(1)?);
    }
    for (g, i) in [("entityGroupId", "entityId"), ("entity_group", "entity_id")] {
        if obj.hasattr(g)? && obj.hasattr(i)? {
            return pair(obj.getattr(g)?, obj.getattr(i)?);
        }
    }
    if let Ok(l) = obj.extract::<(u32, u32)>() {
        return Ok(Entity::new(EntityGroup::from_raw(l.0), l.1));
    }
    Err(PyTypeError::new_err(format!(
        "an entity is an (entityGroupId, entityId) pair or an object with entityGroupId and \
         entityId attributes, not {}",
        obj.repr()?
    )))
}

/// A list of entity arguments.
pub fn extract_entities(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Entity>> {
    obj.try_iter()?.map(|e| extract_entity(&e?)).collect()
}

/// An entity as a Python pair.
pub fn entity_tuple(e: Entity) -> (u32, u32) {
    (e.group.raw(), e.id)
}
