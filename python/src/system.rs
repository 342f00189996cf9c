//! `dcgm.System`: node-wide queries on a handle (GPUs and entities, device attributes, field
//! metadata, versions, topology, NVLink, hierarchies, introspection, modules).

use dcgm::EntityGroup;
use dcgm::raw::Binding;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::entity::{entity_tuple, extract_entities};
use crate::errors::ResultExt;
use crate::field::{PyFieldMeta, extract_fields};
use crate::value::{PyFieldValue, values_to_list};
use crate::{hierarchy, introspection, mig, module, nvlink, profiling, topology};

/// Node-wide queries on a handle.
#[pyclass(frozen, name = "System", module = "dcgm")]
pub struct PySystem {
    inner: dcgm::System,
}

impl PySystem {
    pub fn wrap(s: dcgm::System) -> Self {
        Self { inner: s }
    }
}

fn version_dict<'py>(py: Python<'py>, v: dcgm::VersionInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("version", v.version)?;
    let fields = PyDict::new(py);
    for (k, val) in v.fields {
        fields.set_item(k, val)?;
    }
    d.set_item("fields", fields)?;
    d.set_item("raw", v.raw)?;
    Ok(d)
}

#[pymethods]
impl PySystem {
    /// Every GPU id.
    fn gpu_ids(&self, py: Python<'_>) -> PyResult<Vec<u32>> {
        let s = self.inner.clone();
        py.detach(move || s.gpu_ids()).py(py)
    }

    /// GPU ids DCGM supports.
    fn supported_gpu_ids(&self, py: Python<'_>) -> PyResult<Vec<u32>> {
        let s = self.inner.clone();
        py.detach(move || s.supported_gpu_ids()).py(py)
    }

    /// Entities of one group (`DCGM_FE_*`) as `(entity_group, entity_id)` pairs.
    #[pyo3(signature = (group, only_supported=false))]
    fn entities(
        &self,
        py: Python<'_>,
        group: u32,
        only_supported: bool,
    ) -> PyResult<Vec<(u32, u32)>> {
        let s = self.inner.clone();
        let e = py
            .detach(move || s.entities(EntityGroup::from_raw(group), only_supported))
            .py(py)?;
        Ok(e.into_iter().map(entity_tuple).collect())
    }

    /// Identity and static properties of a GPU, as a dict.
    fn device_attributes<'py>(&self, py: Python<'py>, gpu: u32) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.clone();
        let a = py.detach(move || s.device_attributes(gpu)).py(py)?;
        let d = PyDict::new(py);
        d.set_item("name", a.name)?;
        d.set_item("brand", a.brand)?;
        d.set_item("uuid", a.uuid)?;
        d.set_item("serial", a.serial)?;
        d.set_item("pci_bus_id", a.pci_bus_id)?;
        d.set_item("pci_device_id", a.pci_device_id)?;
        d.set_item("vbios", a.vbios)?;
        d.set_item("inforom_image_version", a.inforom_image_version)?;
        d.set_item("driver_version", a.driver_version)?;
        d.set_item("memory_total_mib", a.memory_total_mib)?;
        d.set_item("memory_used_mib", a.memory_used_mib)?;
        d.set_item("memory_free_mib", a.memory_free_mib)?;
        d.set_item("power_limit_w", a.power_limit_w)?;
        d.set_item("power_limit_default_w", a.power_limit_default_w)?;
        d.set_item("power_limit_min_w", a.power_limit_min_w)?;
        d.set_item("power_limit_max_w", a.power_limit_max_w)?;
        d.set_item("power_limit_enforced_w", a.power_limit_enforced_w)?;
        d.set_item("slowdown_temp_c", a.slowdown_temp_c)?;
        d.set_item("shutdown_temp_c", a.shutdown_temp_c)?;
        d.set_item("persistence_mode", a.persistence_mode)?;
        d.set_item("mig_mode", a.mig_mode)?;
        d.set_item("confidential_compute", a.confidential_compute)?;
        d.set_item("supported_clocks", a.supported_clocks)?;
        Ok(d)
    }

    /// Field metadata as the library reports it (by id, name, alias or tag); `None` if the
    /// library does not know the field.
    fn field_meta(
        &self,
        py: Python<'_>,
        field: &Bound<'_, PyAny>,
    ) -> PyResult<Option<PyFieldMeta>> {
        let s = self.inner.clone();
        let m = if let Ok(id) = field.extract::<u16>() {
            py.detach(move || s.field_meta(dcgm::FieldId(id))).py(py)?
        } else {
            let name: String = field.extract()?;
            py.detach(move || s.field_meta_by_name(&name)).py(py)?
        };
        Ok(m.as_ref().map(PyFieldMeta::from_meta))
    }

    /// Version of the client library: `{"version": ..., "fields": {...}, "raw": ...}`.
    fn library_version<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.clone();
        let v = py.detach(move || s.library_version()).py(py)?;
        version_dict(py, v)
    }

    /// Version of the host engine.
    fn hostengine_version<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.clone();
        let v = py.detach(move || s.hostengine_version()).py(py)?;
        version_dict(py, v)
    }

    /// Whether the host engine reports itself healthy.
    fn hostengine_healthy(&self, py: Python<'_>) -> PyResult<bool> {
        let s = self.inner.clone();
        py.detach(move || s.hostengine_healthy()).py(py)
    }

    /// Samples every watched field now.
    #[pyo3(signature = (wait=true))]
    fn update_all_fields(&self, py: Python<'_>, wait: bool) -> PyResult<()> {
        let s = self.inner.clone();
        py.detach(move || s.update_all_fields(wait)).py(py)
    }

    /// Profiling metric groups of a GPU: `[{"major", "minor", "fields"}]`.
    fn profiling_metric_groups<'py>(
        &self,
        py: Python<'py>,
        gpu: u32,
    ) -> PyResult<Bound<'py, PyList>> {
        profiling::profiling_metric_groups_gpu(py, self.inner.clone(), gpu)
    }

    /// A GPU's CPU affinity and its paths to the other GPUs.
    fn device_topology<'py>(&self, py: Python<'py>, gpu: u32) -> PyResult<Bound<'py, PyDict>> {
        topology::device_topology(py, self.inner.clone(), gpu)
    }

    /// Picks `count` of `candidates` (empty: every GPU) with the best connections between them.
    #[pyo3(signature = (count, candidates=Vec::new(), ignore_health=false))]
    fn select_gpus_by_topology(
        &self,
        py: Python<'_>,
        count: u32,
        candidates: Vec<u32>,
        ignore_health: bool,
    ) -> PyResult<Vec<u32>> {
        topology::select_gpus_by_topology(py, self.inner.clone(), candidates, count, ignore_health)
    }

    /// Link states: `{"gpus": {gpu: [state, ...]}, "switches": {switch: [...]}}`.
    fn nvlink_status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        nvlink::nvlink_status(py, self.inner.clone())
    }

    /// Peer-to-peer status: `{gpu: {peer: status}}`.
    fn nvlink_p2p_status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        nvlink::nvlink_p2p_status(py, self.inner.clone())
    }

    /// GPUs in MIG mode with their GPU and compute instances.
    fn mig_hierarchy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        hierarchy::mig_hierarchy(py, self.inner.clone())
    }

    /// Creates a MIG GPU instance of `profile` (DCGM's `DcgmMigProfileGpuInstanceSlice*`: 1,
    /// 2, 3, 4 slices; 5 seven; 8 one with media extensions; 10 one slice with double memory)
    /// on GPU `gpu`; returns it as `mig_hierarchy` lists it once DCGM shows it. On real GPUs
    /// this needs root, the GPU in MIG mode (`nvidia-smi -i N -mig 1` and a GPU reset) and no
    /// process on it; the simulator does it in its simulated driver.
    fn create_gpu_instance<'py>(
        &self,
        py: Python<'py>,
        gpu: u32,
        profile: u32,
    ) -> PyResult<Bound<'py, PyDict>> {
        mig::create_gpu_instance(py, self.inner.clone(), gpu, profile)
    }

    /// Creates a MIG compute instance of `profile` (DCGM's
    /// `DcgmMigProfileComputeInstanceSlice*`: 30 one slice, 31 two, 32 three, 33 four, 34
    /// seven) in the GPU instance with entity id `gpu_instance`; returns it as a dict.
    /// Privileges as for `create_gpu_instance`.
    fn create_compute_instance<'py>(
        &self,
        py: Python<'py>,
        gpu_instance: u32,
        profile: u32,
    ) -> PyResult<Bound<'py, PyDict>> {
        mig::create_compute_instance(py, self.inner.clone(), gpu_instance, profile)
    }

    /// Deletes the MIG GPU instance with entity id `gpu_instance` (its compute instances
    /// first: `DCGMError_NvmlError` while it has some or a process runs in it).
    fn delete_gpu_instance(&self, py: Python<'_>, gpu_instance: u32) -> PyResult<()> {
        mig::delete_gpu_instance(py, self.inner.clone(), gpu_instance)
    }

    /// Deletes the MIG compute instance with entity id `compute_instance`.
    fn delete_compute_instance(&self, py: Python<'_>, compute_instance: u32) -> PyResult<()> {
        mig::delete_compute_instance(py, self.inner.clone(), compute_instance)
    }

    /// CPUs and their cores.
    fn cpu_hierarchy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        hierarchy::cpu_hierarchy(py, self.inner.clone())
    }

    /// Memory the host engine uses, in bytes.
    fn hostengine_memory_bytes(&self, py: Python<'_>) -> PyResult<u64> {
        introspection::hostengine_memory_bytes(py, self.inner.clone())
    }

    /// CPU the host engine uses: `{"total", "kernel", "user"}`.
    fn hostengine_cpu_utilization<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        introspection::hostengine_cpu_utilization(py, self.inner.clone())
    }

    /// `{module name: status}`.
    fn module_statuses<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        module::module_statuses(py, self.inner.clone())
    }

    /// Keeps a module (by name or `DcgmModuleId*` number) from loading.
    fn module_denylist(&self, py: Python<'_>, module: &Bound<'_, PyAny>) -> PyResult<()> {
        module::module_denylist(py, self.inner.clone(), module)
    }

    /// A GPU's status (`"Ok"`, `"Lost"`, ...).
    fn gpu_status(&self, py: Python<'_>, gpu: u32) -> PyResult<String> {
        let s = self.inner.clone();
        Ok(format!(
            "{:?}",
            py.detach(move || s.gpu_status(gpu)).py(py)?
        ))
    }

    /// Every process running on a GPU now, from DCGM's PID lists (compute and graphics), in
    /// pid order: all of the latest update, which libdcgm stores at consecutive microseconds.
    fn running_processes(
        &self,
        py: Python<'_>,
        gpu: u32,
    ) -> PyResult<Vec<crate::value::PyRunningProcess>> {
        let s = self.inner.clone();
        let list = py.detach(move || s.running_processes(gpu)).py(py)?;
        Ok(list
            .into_iter()
            .map(crate::value::PyRunningProcess::wrap)
            .collect())
    }

    /// A GPU's chip architecture (`"Hopper"`, ...).
    fn chip_architecture(&self, py: Python<'_>, gpu: u32) -> PyResult<String> {
        let s = self.inner.clone();
        Ok(py
            .detach(move || s.chip_architecture(gpu))
            .py(py)?
            .to_string())
    }

    /// Latest values of watched fields for any list of entities, in one call.
    fn entities_latest_values(
        &self,
        py: Python<'_>,
        entities: &Bound<'_, PyAny>,
        fields: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Py<PyFieldValue>>> {
        let ents = extract_entities(entities)?;
        let ids = extract_fields(py, fields)?;
        let s = self.inner.clone();
        let vals = py
            .detach(move || s.entities_latest_values(&ents, &ids))
            .py(py)?;
        values_to_list(py, vals)
    }
}
