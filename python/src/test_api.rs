//! DCGM's test API (`dcgmCreateFakeEntities`, `dcgmInjectEntityFieldValue`, `dcgmEmptyCache`)
//! for pytest users: `dcgm.testing.create_fake_gpus` & co., over `dcgm::testing`. The
//! pydcgm-compatible names (`dcgm.agent_internal`) are Python over these.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dcgm::{Entity, Value};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

use crate::entity::extract_entity;
use crate::errors::{self, ResultExt};
use crate::field::extract_field;
use crate::handle::PyHandle;

/// A count of entities to create: a non-negative int.
fn count(py: Python<'_>, n: i64) -> PyResult<usize> {
    usize::try_from(n).map_err(|_| {
        errors::badparam(
            py,
            format!("the number of entities must not be negative, not {n}"),
        )
    })
}

/// Creates `n` fake GPUs and returns their ids.
#[pyfunction]
pub fn create_fake_gpus(
    py: Python<'_>,
    handle: &Bound<'_, PyHandle>,
    n: i64,
) -> PyResult<Vec<u32>> {
    let h = handle.get().get(py)?;
    let n = count(py, n)?;
    py.detach(move || dcgm::testing::create_fake_gpus(&h, n))
        .py(py)
}

/// Creates `n` fake MIG GPU instances under GPU `parent_gpu` and returns their ids.
#[pyfunction]
pub fn create_fake_gpu_instances(
    py: Python<'_>,
    handle: &Bound<'_, PyHandle>,
    parent_gpu: u32,
    n: i64,
) -> PyResult<Vec<u32>> {
    let h = handle.get().get(py)?;
    let n = count(py, n)?;
    py.detach(move || dcgm::testing::create_fake_gpu_instances(&h, parent_gpu, n))
        .py(py)
}

/// Creates `n` fake MIG compute instances under GPU instance `parent_gpu_instance` and
/// returns their ids.
#[pyfunction]
pub fn create_fake_compute_instances(
    py: Python<'_>,
    handle: &Bound<'_, PyHandle>,
    parent_gpu_instance: u32,
    n: i64,
) -> PyResult<Vec<u32>> {
    let h = handle.get().get(py)?;
    let n = count(py, n)?;
    py.detach(move || dcgm::testing::create_fake_compute_instances(&h, parent_gpu_instance, n))
        .py(py)
}

/// An int (a GPU id) or an entity (pair or object with the entity attributes).
fn entity_or_gpu(obj: &Bound<'_, PyAny>) -> PyResult<Entity> {
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        return Ok(Entity::gpu(obj.extract()?));
    }
    extract_entity(obj)
}

/// The value to inject: an int (a bool counts as one), a float or a str.
fn injectable(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<i64>().map(Value::Int).map_err(|_| {
            errors::badparam(py, format!("{obj} does not fit in a 64-bit signed integer"))
        });
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Value::Double(obj.extract()?));
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(Value::String(obj.extract()?));
    }
    Err(errors::badparam(
        py,
        format!(
            "only an int, a float or a str can be injected, not {}",
            obj.get_type().name()?
        ),
    ))
}

/// Seconds since 1970 (as `time.time()` gives) to a `SystemTime`, to the microsecond: the
/// stored `timestamp_us` is Python's `round(t * 1e6)` (ties to even).
fn timestamp(py: Python<'_>, t: f64) -> PyResult<SystemTime> {
    let us = (t * 1e6).round_ties_even();
    if !(0.0..9.0e18).contains(&us) {
        return Err(errors::badparam(
            py,
            format!("timestamp must be seconds since 1970 (time.time()), not {t}"),
        ));
    }
    Ok(UNIX_EPOCH + Duration::from_micros(us as u64))
}

/// Injects `value` as the newest sample of `field` of `entity_or_gpu` (a GPU id or an entity),
/// stamped `timestamp` (seconds since 1970; `None`: now).
#[pyfunction]
#[pyo3(signature = (handle, entity_or_gpu, field, value, timestamp=None))]
pub fn inject_value(
    py: Python<'_>,
    handle: &Bound<'_, PyHandle>,
    entity_or_gpu: &Bound<'_, PyAny>,
    field: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    timestamp: Option<f64>,
) -> PyResult<()> {
    let h = handle.get().get(py)?;
    let entity = self::entity_or_gpu(entity_or_gpu)?;
    let field = extract_field(py, field)?;
    let value = injectable(py, value)?;
    let at = timestamp.map(|t| self::timestamp(py, t)).transpose()?;
    py.detach(move || dcgm::testing::inject_value(&h, entity, field, value, at))
        .py(py)
}

/// Drops every cached sample and every watch of the host engine.
#[pyfunction]
pub fn empty_cache(py: Python<'_>, handle: &Bound<'_, PyHandle>) -> PyResult<()> {
    let h = handle.get().get(py)?;
    py.detach(move || dcgm::testing::empty_cache(&h)).py(py)
}
