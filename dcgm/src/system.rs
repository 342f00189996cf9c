//! `System`: what a handle can ask about the node as a whole.

use std::cell::RefCell;
use std::ffi::c_int;

use dcgm_sys::*;

use crate::blank::{BlankKind, NonBlank};
use crate::entity::{Entity, EntityGroup};
use crate::error::{Error, Result, ReturnCode};
use crate::field::{FieldId, FieldMeta};
use crate::handle::{Handle, cstring};
use crate::library::{c_buf, ffi};
use crate::value::{FieldValue, Value};

/// Node-wide queries on a handle. Get one with [`Handle::system`].
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// let sys = handle.system();
/// for gpu in sys.gpu_ids()? {
///     let a = sys.device_attributes(gpu)?;
///     println!("GPU {gpu}: {} {} {}", a.name, a.uuid, a.pci_bus_id);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct System {
    handle: Handle,
}

/// Identity and static properties of a GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceAttributes {
    /// Product name (`NVIDIA H200`).
    pub name: String,
    /// Brand, where reported.
    pub brand: Option<String>,
    /// `GPU-…` UUID.
    pub uuid: String,
    /// Board serial number, where reported.
    pub serial: Option<String>,
    /// PCI bus id (`00000000:00:06.0`).
    pub pci_bus_id: String,
    /// Combined PCI device and vendor id, where reported.
    pub pci_device_id: Option<u32>,
    /// VBIOS version, where reported.
    pub vbios: Option<String>,
    /// InfoROM image version, where reported.
    pub inforom_image_version: Option<String>,
    /// Driver version, where reported.
    pub driver_version: Option<String>,
    /// Frame-buffer memory in MiB: total, used, free (each `None` where the GPU leaves it blank).
    pub memory_total_mib: Option<u32>,
    /// See `memory_total_mib`.
    pub memory_used_mib: Option<u32>,
    /// See `memory_total_mib`.
    pub memory_free_mib: Option<u32>,
    /// Power limits in watts: current, default, min, max, enforced (`None` where blank).
    pub power_limit_w: Option<u32>,
    /// See `power_limit_w`.
    pub power_limit_default_w: Option<u32>,
    /// See `power_limit_w`.
    pub power_limit_min_w: Option<u32>,
    /// See `power_limit_w`.
    pub power_limit_max_w: Option<u32>,
    /// See `power_limit_w`.
    pub power_limit_enforced_w: Option<u32>,
    /// Slowdown and shutdown temperatures in °C (`None` where blank).
    pub slowdown_temp_c: Option<u32>,
    /// See `slowdown_temp_c`.
    pub shutdown_temp_c: Option<u32>,
    /// Persistence mode.
    pub persistence_mode: bool,
    /// MIG mode.
    pub mig_mode: bool,
    /// Confidential-compute mode.
    pub confidential_compute: bool,
    /// Supported (memory MHz, SM MHz) clock pairs; pairs with a blank member are left out.
    pub supported_clocks: Vec<(u32, u32)>,
}

/// Version facts of a library or host engine, parsed from its `key:value;...` string.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VersionInfo {
    /// `4.6.0`, if reported.
    pub version: Option<String>,
    /// Every key and value as reported.
    pub fields: Vec<(String, String)>,
    /// The raw string.
    pub raw: String,
}

impl VersionInfo {
    fn parse(raw: String) -> Self {
        let fields: Vec<(String, String)> = raw
            .split(';')
            .filter_map(|kv| kv.split_once(':'))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let version = fields
            .iter()
            .find(|(k, _)| k == "version")
            .map(|(_, v)| v.clone());
        Self {
            version,
            fields,
            raw,
        }
    }
}

impl Handle {
    /// Node-wide queries.
    pub fn system(&self) -> System {
        System {
            handle: self.clone(),
        }
    }
}

thread_local! {
    static ENTITY_BUF: RefCell<Vec<dcgmFieldValue_v2>> = const { RefCell::new(Vec::new()) };
}

impl System {
    /// The handle.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    fn lib(&self) -> &crate::library::Lib {
        self.handle.lib()
    }

    /// Version of the client library.
    ///
    /// # Errors
    ///
    /// Only the library's own code, as `Error::Dcgm`: the call reads the loaded client library
    /// and involves no host engine.
    #[doc(alias = "dcgmVersionInfo")]
    pub fn library_version(&self) -> Result<VersionInfo> {
        let mut v = dcgmVersionInfo_v2::new_versioned();
        let lib = self.lib();
        // SAFETY: a versioned struct valid for the call.
        unsafe { ffi!(lib, dcgmVersionInfo(&mut v)) }?;
        Ok(VersionInfo::parse(c_buf(&v.rawBuildInfoString)))
    }

    /// Version of the host engine this handle talks to.
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmHostengineVersionInfo")]
    pub fn hostengine_version(&self) -> Result<VersionInfo> {
        let mut v = dcgmVersionInfo_v2::new_versioned();
        let lib = self.lib();
        // SAFETY: a versioned struct valid for the call.
        unsafe { ffi!(lib, dcgmHostengineVersionInfo(self.handle.raw(), &mut v)) }?;
        Ok(VersionInfo::parse(c_buf(&v.rawBuildInfoString)))
    }

    /// Whether the host engine reports itself healthy.
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away. An engine reporting itself unhealthy is
    /// `Ok(false)`, not an error.
    #[doc(alias = "dcgmHostengineIsHealthy")]
    pub fn hostengine_healthy(&self) -> Result<bool> {
        let mut v = dcgmHostengineHealth_v1::new_versioned();
        let lib = self.lib();
        // SAFETY: a versioned struct valid for the call.
        unsafe { ffi!(lib, dcgmHostengineIsHealthy(self.handle.raw(), &mut v)) }?;
        Ok(v.overallHealth == 0)
    }

    /// Every GPU id, supported by DCGM or not.
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away.
    pub fn gpu_ids(&self) -> Result<Vec<u32>> {
        self.device_list(false)
    }

    /// GPU ids DCGM supports.
    ///
    /// # Errors
    ///
    /// As [`System::gpu_ids`]: `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmGetAllSupportedDevices")]
    pub fn supported_gpu_ids(&self) -> Result<Vec<u32>> {
        self.device_list(true)
    }

    fn device_list(&self, supported_only: bool) -> Result<Vec<u32>> {
        let mut ids = [0u32; DCGM_MAX_NUM_DEVICES];
        let mut n: c_int = 0;
        let (h, lib) = (self.handle.raw(), self.lib());
        // SAFETY: room for DCGM_MAX_NUM_DEVICES ids and a valid count pointer.
        unsafe {
            if supported_only {
                ffi!(lib, dcgmGetAllSupportedDevices(h, ids.as_mut_ptr(), &mut n))
            } else {
                ffi!(lib, dcgmGetAllDevices(h, ids.as_mut_ptr(), &mut n))
            }
        }?;
        Ok(ids[..(n.max(0) as usize).min(ids.len())].to_vec())
    }

    /// Ids of every group created on the host engine (by any client).
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmGroupGetAllIds")]
    pub fn group_ids(&self) -> Result<Vec<crate::GroupId>> {
        let mut ids = [0 as dcgmGpuGrp_t; DCGM_MAX_NUM_GROUPS];
        let mut n = 0u32;
        let lib = self.lib();
        // SAFETY: room for DCGM_MAX_NUM_GROUPS ids and a valid count pointer.
        unsafe {
            ffi!(
                lib,
                dcgmGroupGetAllIds(self.handle.raw(), ids.as_mut_ptr(), &mut n)
            )
        }?;
        Ok(ids[..(n as usize).min(ids.len())]
            .iter()
            .map(|&id| crate::GroupId::from_raw(id))
            .collect())
    }

    /// The id of the field group with this name, if there is one.
    ///
    /// # Errors
    ///
    /// As [`crate::all_field_groups`]; a name no field group has is `Ok(None)`.
    #[doc(alias = "dcgmFieldGroupGetAll")]
    pub fn field_group_id_by_name(&self, name: &str) -> Result<Option<crate::FieldGroupId>> {
        Ok(crate::all_field_groups(&self.handle)?
            .into_iter()
            .find(|(_, n, _)| n == name)
            .map(|(id, _, _)| id))
    }

    /// Entities of one entity group.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NOT_SUPPORTED` for `None`, `Vgpu` and unknown kinds, and for `Link` on the one-GPU
    /// node recorded (libdcgm 4.6.0); `DCGM_ST_MODULE_NOT_LOADED` for `Cpu` and `CpuCore` on a node
    /// without supported CPUs; `ConnectionLost`. A kind the node has none of is an empty list.
    #[doc(alias = "dcgmGetEntityGroupEntities")]
    pub fn entities(&self, group: EntityGroup, only_supported: bool) -> Result<Vec<Entity>> {
        let flags = if only_supported {
            DCGM_GEGE_FLAG_ONLY_SUPPORTED
        } else {
            0
        };
        let mut cap = 64usize;
        loop {
            let mut buf = vec![0u32; cap];
            let mut n = cap as c_int;
            let lib = self.lib();
            // SAFETY: `buf` has room for `n` ids.
            let r = unsafe {
                ffi!(
                    lib,
                    dcgmGetEntityGroupEntities(
                        self.handle.raw(),
                        group.raw(),
                        buf.as_mut_ptr(),
                        &mut n,
                        flags
                    )
                )
            };
            match r {
                Ok(()) => {
                    buf.truncate((n.max(0) as usize).min(cap));
                    return Ok(buf.into_iter().map(|id| Entity::new(group, id)).collect());
                }
                Err(Error::Dcgm { code, .. })
                    if code.raw() == DCGM_ST_INSUFFICIENT_SIZE
                        && (n as usize) > cap
                        && cap < 1 << 20 =>
                {
                    cap = n as usize;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Identity and static properties of a GPU.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_BADPARAM` for a GPU id the node does not have (libdcgm 4.6.0 answers those with
    /// an empty struct, which this reports as the bad parameter it is); `ConnectionLost`.
    #[doc(alias = "dcgmGetDeviceAttributes")]
    pub fn device_attributes(&self, gpu: u32) -> Result<DeviceAttributes> {
        let mut a = dcgmDeviceAttributes_v3::boxed_versioned();
        let lib = self.lib();
        // SAFETY: a versioned struct valid for the call.
        unsafe {
            ffi!(
                lib,
                dcgmGetDeviceAttributes(self.handle.raw(), gpu, &mut *a)
            )
        }?;
        let id = &a.identifiers;
        // libdcgm 4.6.0 answers an unknown GPU id with success and an empty struct; report it
        // as the bad parameter it is, as other calls given an unknown GPU do.
        if id.uuid[0] == 0 {
            return Err(Error::Dcgm {
                code: ReturnCode::from_raw(DCGM_ST_BADPARAM),
                call: "dcgmGetDeviceAttributes",
                message: Some(format!(
                    "no GPU with id {gpu} (the library returned empty attributes)"
                )),
            });
        }
        let nclk = (a.clockSets.count as usize).min(a.clockSets.clockSet.len());
        Ok(DeviceAttributes {
            name: c_buf(&id.deviceName),
            brand: c_buf(&id.brandName).non_blank(),
            uuid: c_buf(&id.uuid),
            serial: c_buf(&id.serial).non_blank(),
            pci_bus_id: c_buf(&id.pciBusId),
            pci_device_id: id.pciDeviceId.non_blank(),
            vbios: c_buf(&id.vbios).non_blank(),
            inforom_image_version: c_buf(&id.inforomImageVersion).non_blank(),
            driver_version: c_buf(&id.driverVersion).non_blank(),
            memory_total_mib: a.memoryUsage.fbTotal.non_blank(),
            memory_used_mib: a.memoryUsage.fbUsed.non_blank(),
            memory_free_mib: a.memoryUsage.fbFree.non_blank(),
            power_limit_w: a.powerLimits.curPowerLimit.non_blank(),
            power_limit_default_w: a.powerLimits.defaultPowerLimit.non_blank(),
            power_limit_min_w: a.powerLimits.minPowerLimit.non_blank(),
            power_limit_max_w: a.powerLimits.maxPowerLimit.non_blank(),
            power_limit_enforced_w: a.powerLimits.enforcedPowerLimit.non_blank(),
            slowdown_temp_c: a.thermalSettings.slowdownTemp.non_blank(),
            shutdown_temp_c: a.thermalSettings.shutdownTemp.non_blank(),
            persistence_mode: a.settings.persistenceModeEnabled.non_blank() == Some(1),
            mig_mode: a.settings.migModeEnabled.non_blank() == Some(1),
            confidential_compute: a.settings.confidentialComputeMode.non_blank() == Some(1),
            supported_clocks: a.clockSets.clockSet[..nclk]
                .iter()
                .filter_map(|c| Some((c.memClock.non_blank()?, c.smClock.non_blank()?)))
                .collect(),
        })
    }

    /// Field metadata as the library reports it, copied out (`None` for an unknown id).
    ///
    /// # Errors
    ///
    /// Only `SymbolNotAvailable`, for a library that does not export `DcgmFieldGetById`; an id the
    /// library does not know is `Ok(None)`.
    #[doc(alias = "DcgmFieldGetById")]
    pub fn field_meta(&self, field: FieldId) -> Result<Option<FieldMeta>> {
        let lib = self.lib();
        let f = lib.sym(lib.raw.DcgmFieldGetById())?;
        // SAFETY: a plain argument; the returned pointer is read at once, while this handle
        // keeps the library initialised.
        let p = unsafe { f(field.0) };
        // SAFETY: non-null pointers point to the library's metadata.
        Ok(unsafe { p.as_ref() }.map(FieldMeta::from_raw))
    }

    /// Field metadata by tag (`gpu_temp`) as the library reports it, or by 4.6 name / pre-4.6
    /// alias through the crate's field table.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a name with a NUL byte; `SymbolNotAvailable` for a library without
    /// `DcgmFieldGetById` or `DcgmFieldGetByTag`; a name the library does not know is `Ok(None)`.
    #[doc(alias = "DcgmFieldGetByTag")]
    pub fn field_meta_by_name(&self, name: &str) -> Result<Option<FieldMeta>> {
        if let Ok(id) = FieldId::parse(name) {
            return self.field_meta(id);
        }
        let lib = self.lib();
        let f = lib.sym(lib.raw.DcgmFieldGetByTag())?;
        let c = cstring(name)?;
        // SAFETY: a C string; the returned pointer is read at once (see `field_meta`).
        let p = unsafe { f(c.as_ptr()) };
        // SAFETY: non-null pointers point to the library's metadata.
        Ok(unsafe { p.as_ref() }.map(FieldMeta::from_raw))
    }

    /// `dcgmUpdateAllFields`.
    ///
    /// # Errors
    ///
    /// As [`Handle::update_all_fields`]: `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmUpdateAllFields")]
    pub fn update_all_fields(&self, wait: bool) -> Result<()> {
        self.handle.update_all_fields(wait)
    }

    /// Latest values of `fields` for any list of entities, in one call (the fields must be
    /// watched). Entities that do not exist come back blank with a `NOT_WATCHED` status (as
    /// libdcgm 4.6.0 answers).
    ///
    /// # Errors
    ///
    /// As [`System::entities_latest_values_into`].
    #[doc(alias = "dcgmEntitiesGetLatestValues")]
    pub fn entities_latest_values(
        &self,
        entities: &[Entity],
        fields: &[FieldId],
    ) -> Result<Vec<FieldValue>> {
        let mut out = Vec::new();
        self.entities_latest_values_into(entities, fields, &mut out)?;
        Ok(out)
    }

    /// Like [`System::entities_latest_values`], reusing `out` (and a per-thread raw buffer).
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away; `InvalidArgument` naming the field for
    /// a field id DCGM does not know (libdcgm 4.6.0 fails the whole read for it). Unknown
    /// entities and unwatched fields are not errors: their values are blank with the reason in `status` (`DCGM_ST_NOT_WATCHED` on
    /// libdcgm 4.6.0); empty lists give an empty result without asking DCGM. A field of this
    /// crate's table that the release answering the handle lacks (added later, such as 4.6.1's
    /// `DCGM_FI_DEV_SM_CLOCK_HERTZ` on 4.6.0; see [`Handle::knows_field`]) is not asked for,
    /// since the library would refuse the whole read: its values are
    /// `Value::Blank(BlankKind::NotFound)` with `DCGM_ST_UNKNOWN_FIELD`, as libdcgm marks a
    /// field it does not know in a live read.
    #[doc(alias = "dcgmEntitiesGetLatestValues")]
    pub fn entities_latest_values_into(
        &self,
        entities: &[Entity],
        fields: &[FieldId],
        out: &mut Vec<FieldValue>,
    ) -> Result<()> {
        out.clear();
        if entities.is_empty() || fields.is_empty() {
            return Ok(());
        }
        let lacks: Vec<bool> = fields
            .iter()
            .map(|f| f.info().is_some() && !self.handle.knows_field(*f))
            .collect();
        if !lacks.contains(&true) {
            return self.read_latest(entities, fields, out);
        }
        let asked: Vec<FieldId> = fields
            .iter()
            .zip(&lacks)
            .filter(|(_, lacks)| !**lacks)
            .map(|(f, _)| *f)
            .collect();
        let mut got = Vec::with_capacity(entities.len() * asked.len());
        if !asked.is_empty() {
            self.read_latest(entities, &asked, &mut got)?;
        }
        let mut got = got.into_iter();
        for e in entities {
            for (f, lacks) in fields.iter().zip(&lacks) {
                if *lacks {
                    out.push(FieldValue {
                        entity: *e,
                        field: *f,
                        timestamp_us: 0,
                        value: Value::Blank(BlankKind::NotFound),
                        status: ReturnCode::from_raw(DCGM_ST_UNKNOWN_FIELD),
                    });
                } else {
                    out.extend(got.next());
                }
            }
        }
        Ok(())
    }

    /// `dcgmEntitiesGetLatestValues` for `fields`, into `out` (empty), entity by entity.
    fn read_latest(
        &self,
        entities: &[Entity],
        fields: &[FieldId],
        out: &mut Vec<FieldValue>,
    ) -> Result<()> {
        let pairs: Vec<dcgmGroupEntityPair_t> = entities.iter().map(|e| e.raw()).collect();
        let mut ids: Vec<u16> = fields.iter().map(|f| f.0).collect();
        let total = pairs.len() * ids.len();
        ENTITY_BUF.with(|b| {
            let mut buf = b.borrow_mut();
            while buf.len() < total {
                buf.push(zeroed());
            }
            let lib = self.lib();
            // SAFETY: `pairs`, `ids` and `buf` hold the counts passed.
            let done = unsafe {
                ffi!(
                    lib,
                    dcgmEntitiesGetLatestValues(
                        self.handle.raw(),
                        pairs.as_ptr().cast_mut(),
                        pairs.len() as u32,
                        ids.as_mut_ptr(),
                        ids.len() as u32,
                        0,
                        buf.as_mut_ptr()
                    )
                )
            };
            // libdcgm 4.6.0 fails the whole read with GENERIC_ERROR for a field id it does
            // not know: say which.
            if let Err(e) = done {
                let unknown = ids.iter().find(|f| field_by_id(**f).is_none());
                return Err(match (e.code().raw(), unknown) {
                    (DCGM_ST_GENERIC_ERROR, Some(f)) => Error::InvalidArgument(format!(
                        "field id {f} is not a DCGM field: dcgmEntitiesGetLatestValues \
                         refuses the whole read for it (DCGM_ST_GENERIC_ERROR); leave it out"
                    )),
                    _ => e,
                });
            }
            out.extend(buf[..total].iter().map(FieldValue::from_raw_v2));
            Ok(())
        })
    }
}
