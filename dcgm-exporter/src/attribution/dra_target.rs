//! What a device claimed through DRA is on this node (a GPU, a MIG device or a MIG GPU
//! instance), and the device-map keys under which its holders are found: shared by the DRA
//! mapping ([`super::dra`]), the ResourceSlice lookup ([`super::resource_slice`]) and the
//! labelling ([`super::kubernetes`]).

use dcgm_prometheus::EntityIdentity;

/// What a claimed device is on this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A whole GPU, by UUID (`GPU-…`).
    Gpu(String),
    /// A MIG device, by its UUID (`MIG-…`).
    MigUuid(String),
    /// A MIG GPU instance, by its GPU's UUID and NVML GPU-instance id.
    Mig {
        /// The GPU's UUID.
        gpu_uuid: String,
        /// The GPU instance (`GPU_I_ID`).
        gpu_instance: u32,
    },
}

impl Target {
    /// The device-map key of the target.
    pub fn key(&self) -> String {
        match self {
            Target::Gpu(u) | Target::MigUuid(u) => format!("dra:{u}"),
            Target::Mig {
                gpu_uuid,
                gpu_instance,
            } => format!("dra:{gpu_uuid}/gi{gpu_instance}"),
        }
    }
}

/// The device-map keys under which a DRA holder of `id` is found (see [`Target::key`]).
pub fn identity_keys(id: &EntityIdentity) -> Vec<String> {
    match &id.mig {
        None => vec![Target::Gpu(id.uuid.clone()).key()],
        Some(m) => m
            .uuid
            .iter()
            .map(|u| Target::MigUuid(u.clone()).key())
            .chain(m.instance_id.map(|gi| {
                Target::Mig {
                    gpu_uuid: id.uuid.clone(),
                    gpu_instance: gi,
                }
                .key()
            }))
            .collect(),
    }
}
