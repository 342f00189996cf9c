//! Fake MIG instances, global fields read on instances, fake CPUs and the CPU-mask helper:
//! the profile names DCGM gives fake instances, what a GPU-level field of an instance of a
//! fake GPU reads (it has no NVML device), a global value injected for the node read on a GPU
//! and an instance, the answer to a fake CPU where the node has no CPU entities, and
//! `dcgmCpuHierarchyCpuOwnsCore`. It adds a fake GPU: later cases see one more GPU.

use dcgm_sys::*;

use crate::battery::Battery;

impl Battery<'_> {
    /// Creates one fake entity of `group` (under `parent`); the return code and its id.
    fn fake_one(&mut self, group: u32, parent: Option<(u32, u32)>) -> (Option<i32>, u32) {
        let mut c = dcgmCreateFakeEntities_v2::boxed_versioned();
        c.numToCreate = 1;
        c.entityList[0].entity.entityGroupId = group;
        if let Some((pg, pid)) = parent {
            c.entityList[0].parent.entityGroupId = pg;
            c.entityList[0].parent.entityId = pid;
        }
        let rc = self.lib.dcgmCreateFakeEntities().ok().map(|f| {
            // SAFETY: a versioned request valid for the call.
            unsafe { f(self.h, &mut *c) }
        });
        (rc, c.entityList[0].entity.entityId)
    }

    /// `dcgmEntitiesGetLatestValues` of one field: the return code and each value's
    /// `status:i64` (or `status:string` for a string field).
    fn entity_values(
        &mut self,
        entities: &[(u32, u32)],
        field: u16,
        live: bool,
    ) -> (Option<i32>, Vec<String>) {
        let mut pairs: Vec<dcgmGroupEntityPair_t> = entities
            .iter()
            .map(|&(group, id)| dcgmGroupEntityPair_t {
                entityGroupId: group,
                entityId: id,
            })
            .collect();
        let mut ids = [field];
        let mut out: Vec<dcgmFieldValue_v2> = (0..pairs.len()).map(|_| zeroed()).collect();
        let flags = if live { DCGM_FV_FLAG_LIVE_DATA } else { 0 };
        let rc = self.lib.dcgmEntitiesGetLatestValues().ok().map(|f| {
            // SAFETY: the counts match the buffers.
            unsafe {
                f(
                    self.h,
                    pairs.as_mut_ptr(),
                    pairs.len() as u32,
                    ids.as_mut_ptr(),
                    1,
                    flags,
                    out.as_mut_ptr(),
                )
            }
        });
        let shapes = out
            .iter()
            .map(|v| {
                // SAFETY: plain-data union members; the string member is NUL-terminated.
                unsafe {
                    if v.fieldType == u16::from(DCGM_FT_STRING) {
                        let s = std::ffi::CStr::from_ptr(v.value.str_.as_ptr());
                        format!("{}:{}", v.status, s.to_string_lossy())
                    } else {
                        format!("{}:{}", v.status, v.value.i64_)
                    }
                }
            })
            .collect();
        (rc, shapes)
    }

    /// The cases (see the module docs).
    pub fn instance_cases(&mut self) {
        // A new fake GPU; where earlier cases filled the node (32 GPUs), the last one, which
        // is one of theirs (the health cases' pool of fake GPUs).
        let (rc, mut gpu) = self.fake_one(DCGM_FE_GPU, None);
        if rc != Some(DCGM_ST_OK) {
            let mut ids = [0u32; DCGM_MAX_NUM_DEVICES];
            let mut n: std::ffi::c_int = 0;
            let _ = self.lib.dcgmGetAllDevices().ok().map(|f| {
                // SAFETY: room for DCGM_MAX_NUM_DEVICES ids.
                unsafe { f(self.h, ids.as_mut_ptr(), &mut n) }
            });
            gpu = ids[..n.clamp(0, DCGM_MAX_NUM_DEVICES as i32) as usize]
                .last()
                .copied()
                .unwrap_or(0);
        }
        let (rc, gi) = self.fake_one(DCGM_FE_GPU_I, Some((DCGM_FE_GPU, gpu)));
        self.rec("instances/fake_gi", rc, "");
        let (rc, ci) = self.fake_one(DCGM_FE_GPU_CI, Some((DCGM_FE_GPU_I, gi)));
        self.rec("instances/fake_ci", rc, "");
        let inst = [(DCGM_FE_GPU_I, gi), (DCGM_FE_GPU_CI, ci)];
        let (rc, v) = self.entity_values(&inst, DCGM_FI_DEV_GPU_NAME, true);
        self.rec("instances/fake_names", rc, v.join(" "));

        // A GPU-level field watched on the instances of a fake GPU.
        let dbe = DCGM_FI_DEV_ECC_DBE_VOL_TOTAL;
        let name = std::ffi::CString::new("instances").unwrap();
        let mut g: dcgmGpuGrp_t = 0;
        let _ = self.lib.dcgmGroupCreate().ok().map(|f| {
            // SAFETY: valid pointers.
            unsafe { f(self.h, DCGM_GROUP_EMPTY, name.as_ptr(), &mut g) }
        });
        for (group, id) in inst {
            let _ = self.lib.dcgmGroupAddEntity().ok().map(|f| {
                // SAFETY: plain arguments.
                unsafe { f(self.h, g, group, id) }
            });
        }
        let fields = [dbe];
        let mut fg: dcgmFieldGrp_t = 0;
        let _ = self.lib.dcgmFieldGroupCreate().ok().map(|f| {
            // SAFETY: valid pointers.
            unsafe { f(self.h, 1, fields.as_ptr(), name.as_ptr(), &mut fg) }
        });
        let rc = self.lib.dcgmWatchFields().ok().map(|f| {
            // SAFETY: plain arguments.
            unsafe { f(self.h, g, fg, 100_000, 60.0, 0) }
        });
        self.rec("instances/watch_fake_gpu_instances", rc, "");
        let _ = self.lib.dcgmUpdateAllFields().ok().map(|f| {
            // SAFETY: plain arguments.
            unsafe { f(self.h, 1) }
        });
        let (rc, v) = self.entity_values(&inst, dbe, false);
        let statuses: Vec<&str> = v
            .iter()
            .map(|s| s.split(':').next().unwrap_or(""))
            .collect();
        self.rec("instances/fake_gpu_instance_dbe", rc, statuses.join(" "));

        // A global value injected for the node, read on GPU 0 and on the fake instance.
        let mut iv = dcgmInjectFieldValue_v1::new_versioned();
        iv.fieldId = DCGM_FI_SYSTEM_GPU_QUANTITY;
        iv.fieldType = u16::from(DCGM_FT_INT64);
        iv.ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros() as i64;
        iv.value.i64_ = 77;
        let rc = self.lib.dcgmInjectEntityFieldValue().ok().map(|f| {
            // SAFETY: a versioned value.
            unsafe { f(self.h, DCGM_FE_NONE, 0, &mut iv) }
        });
        self.rec("instances/inject_global", rc, "");
        let (rc, v) = self.entity_values(
            &[(DCGM_FE_GPU, 0), (DCGM_FE_GPU_I, gi)],
            DCGM_FI_SYSTEM_GPU_QUANTITY,
            false,
        );
        self.rec("instances/global_on_entities", rc, v.join(" "));

        // Fake CPUs where the node shows no CPU entities (no sysmon module).
        if self.skips_group(DCGM_FE_CPU) {
            self.skipped("instances/fake_cpu");
        } else {
            let (rc, _) = self.fake_one(DCGM_FE_CPU, None);
            self.rec("instances/fake_cpu", rc, "");
        }

        let mut mask: dcgmCpuHierarchyOwnedCores_v1 = zeroed();
        mask.bitmask[0] = 0b101;
        mask.bitmask[15] = 1 << 63;
        let owned = self.lib.dcgmCpuHierarchyCpuOwnsCore().ok().map(|f| {
            [0u32, 1, 2, 1023, 1024]
                .iter()
                // SAFETY: a readable mask.
                .map(|c| unsafe { f(*c, &mask) }.to_string())
                .collect::<Vec<_>>()
                .join(",")
        });
        self.rec(
            "instances/cpu_owns_core",
            owned.as_ref().map(|_| DCGM_ST_OK),
            owned.unwrap_or_default(),
        );
    }
}
