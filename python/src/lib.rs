//! `dcgm._native`: the Rust half of the `dcgm` Python package (dcgm-rs's safe layer and
//! reader, exposed with pyo3). The Python half (`python/pysrc/dcgm`) adds the pydcgm-compatible
//! names (`dcgm.fields`, `dcgm.structs`, `dcgm.DcgmReader`) on top of it.
//!
//! Every call into DCGM releases the GIL. Objects that call into DCGM when dropped (handles,
//! groups, watches, policy registrations) drop with the GIL released too, since a DCGM thread
//! delivering a policy callback may be waiting for the GIL.

use pyo3::prelude::*;
// Linked for its exported DCGM C API: the extension is also the simulator library (src/sim.rs).
use dcgm_sim as _;

mod burn;
mod config;
mod diagnostic;
mod doctor;
mod duration;
mod entity;
mod errors;
mod field;
mod flags;
mod group;
mod handle;
mod health;
mod hierarchy;
mod introspection;
mod mig;
mod module;
mod nvlink;
mod policy;
mod profiling;
mod raw;
mod reader;
mod return_codes;
mod sim;
mod slot;
mod stats;
mod system;
mod test_api;
mod topology;
mod value;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DCGM_FE_COUNT", entity::ENTITY_GROUP_COUNT)?;
    m.add("DCGM_FI_MAX_FIELDS", dcgm::raw::sys::DCGM_FI_MAX_FIELDS)?;
    m.add("DEFAULT_FIELD_IDS", dcgm_reader::DEFAULT_FIELD_IDS.to_vec())?;
    // The capability names `Handle.supports` takes, with the first release of each.
    m.add(
        "CAPABILITIES",
        dcgm::Capability::ALL
            .iter()
            .map(|c| (c.name(), c.since().to_string()))
            .collect::<std::collections::BTreeMap<_, _>>(),
    )?;
    // For dcgm.structs_internal (the pydcgm-compatible test-API structs).
    m.add(
        "DCGM_MAX_HIERARCHY_INFO",
        dcgm::raw::sys::DCGM_MAX_HIERARCHY_INFO,
    )?;
    m.add(
        "dcgmCreateFakeEntities_version2",
        dcgm::raw::sys::dcgmCreateFakeEntities_version2,
    )?;
    m.add(
        "dcgmInjectFieldValue_version1",
        dcgm::raw::sys::dcgmInjectFieldValue_version1,
    )?;
    m.add_class::<handle::PyHandle>()?;
    m.add_class::<system::PySystem>()?;
    m.add_class::<group::PyGroup>()?;
    m.add_class::<group::PyFieldGroup>()?;
    m.add_class::<group::PyWatch>()?;
    m.add_class::<group::PySinceCursor>()?;
    m.add_class::<value::PyFieldValue>()?;
    m.add_class::<value::PyRunningProcess>()?;
    m.add_class::<value::PyAccountingStats>()?;
    m.add_class::<field::PyFieldMeta>()?;
    m.add_class::<reader::PyReader>()?;
    m.add_class::<reader::PySnapshots>()?;
    m.add_class::<policy::PyPolicyRegistration>()?;
    m.add_class::<policy::PyPolicySubscription>()?;
    m.add_class::<doctor::PyFinding>()?;
    m.add_class::<doctor::PyReport>()?;
    m.add_function(wrap_pyfunction!(doctor::doctor, m)?)?;
    m.add_function(wrap_pyfunction!(doctor::doctor_replay, m)?)?;
    m.add_class::<burn::PyBurnFinding>()?;
    m.add_class::<burn::PyBurnVerdict>()?;
    m.add_class::<burn::PyBurnReport>()?;
    m.add_function(wrap_pyfunction!(burn::burn, m)?)?;
    m.add_function(wrap_pyfunction!(field::field_table, m)?)?;
    m.add_function(wrap_pyfunction!(field::field_info, m)?)?;
    m.add_function(wrap_pyfunction!(return_codes::return_codes, m)?)?;
    m.add_function(wrap_pyfunction!(return_codes::python_error_suffix, m)?)?;
    m.add_function(wrap_pyfunction!(entity::entity_groups, m)?)?;
    m.add_function(wrap_pyfunction!(health::health_systems, m)?)?;
    m.add_function(wrap_pyfunction!(policy::policy_conditions, m)?)?;
    m.add_function(wrap_pyfunction!(sim::set_packaged_simulator, m)?)?;
    m.add_function(wrap_pyfunction!(sim::configure_simulator, m)?)?;
    m.add_function(wrap_pyfunction!(policy::at_exit, m)?)?;
    m.add_function(wrap_pyfunction!(test_api::create_fake_gpus, m)?)?;
    m.add_function(wrap_pyfunction!(test_api::create_fake_gpu_instances, m)?)?;
    m.add_function(wrap_pyfunction!(
        test_api::create_fake_compute_instances,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(test_api::inject_value, m)?)?;
    m.add_function(wrap_pyfunction!(test_api::empty_cache, m)?)?;
    m.add_function(wrap_pyfunction!(raw::raw_open, m)?)?;
    m.add_function(wrap_pyfunction!(raw::raw_library, m)?)?;
    m.add_function(wrap_pyfunction!(raw::raw_index, m)?)?;
    m.add_function(wrap_pyfunction!(raw::raw_has, m)?)?;
    m.add_function(wrap_pyfunction!(raw::raw_call, m)?)?;
    m.add_function(wrap_pyfunction!(raw::raw_symbols, m)?)?;
    m.add_function(wrap_pyfunction!(raw::raw_arities, m)?)?;
    m.add_function(wrap_pyfunction!(raw::raw_layouts, m)?)?;
    m.add_function(wrap_pyfunction!(raw::raw_aliases, m)?)?;
    m.add_function(wrap_pyfunction!(raw::raw_constants, m)?)?;
    Ok(())
}
