//! MIG management cases of the battery: `dcgmCreateMigEntity` and `dcgmDeleteMigEntity` with
//! every profile, bad profiles, unknown parents and entities, the delay flag and bad versions.
//! The captured H200 is not in MIG mode, so these record the real library's answers for a GPU
//! without MIG (NVML's `NOT_SUPPORTED` for a valid request) and its argument checks; creating
//! on a GPU in MIG mode is tested on the simulator alone (`dcgm-sim/tests/mig.rs`).

use dcgm_sys::*;

use crate::battery::Battery;

impl Battery<'_> {
    fn create_mig(&mut self, id: &str, parent: u32, profile: u32, option: u32, flags: u32) {
        let mut c = dcgmCreateMigEntity_v1::new_versioned();
        if id.ends_with("bad_version") {
            c.version = (c.version & 0x00ff_ffff) | (9 << 24);
        }
        c.parentId = parent;
        c.profile = profile;
        c.createOption = option;
        c.flags = flags;
        let rc = self.lib.dcgmCreateMigEntity().ok().map(|f| {
            // SAFETY: a versioned request valid for the call.
            unsafe { f(self.h, &mut c) }
        });
        self.rec(format!("mig/create/{id}"), rc, "");
    }

    fn delete_mig(&mut self, id: &str, group: u32, entity: u32, flags: u32) {
        let mut d = dcgmDeleteMigEntity_v1::new_versioned();
        if id.ends_with("bad_version") {
            d.version = (d.version & 0x00ff_ffff) | (9 << 24);
        }
        d.entityGroupId = group;
        d.entityId = entity;
        d.flags = flags;
        let rc = self.lib.dcgmDeleteMigEntity().ok().map(|f| {
            // SAFETY: a versioned request valid for the call.
            unsafe { f(self.h, &mut d) }
        });
        self.rec(format!("mig/delete/{id}"), rc, "");
    }

    /// The MIG management cases (run before the test API's fake entities exist).
    pub fn mig_cases(&mut self) {
        let gi = DcgmMigCreateGpuInstance;
        let ci = DcgmMigCreateComputeInstance;
        let delay = DCGM_MIG_RECONFIG_DELAY_PROCESSING;
        for p in DcgmMigProfileGpuInstanceSlice1..=DcgmMigProfileGpuInstanceSlice1Rev2 {
            self.create_mig(&format!("gi_profile{p}"), 0, p, gi, 0);
        }
        self.create_mig("gi_profile_none", 0, DcgmMigProfileNone, gi, 0);
        self.create_mig(
            "gi_profile_gfx",
            0,
            DcgmMigProfileGpuInstanceSlice1GFX,
            gi,
            0,
        );
        self.create_mig(
            "gi_with_ci_profile",
            0,
            DcgmMigProfileComputeInstanceSlice1,
            gi,
            0,
        );
        self.create_mig(
            "gi_unknown_gpu",
            9999,
            DcgmMigProfileGpuInstanceSlice1,
            gi,
            0,
        );
        self.create_mig(
            "gi_delay_flag",
            0,
            DcgmMigProfileGpuInstanceSlice1,
            gi,
            delay,
        );
        self.create_mig("gi_bad_version", 0, DcgmMigProfileGpuInstanceSlice1, gi, 0);
        self.create_mig(
            "ci_unknown_parent",
            0,
            DcgmMigProfileComputeInstanceSlice1,
            ci,
            0,
        );
        self.create_mig(
            "ci_unknown_parent_delay_flag",
            0,
            DcgmMigProfileComputeInstanceSlice1,
            ci,
            delay,
        );
        self.create_mig(
            "ci_with_gi_profile",
            0,
            DcgmMigProfileGpuInstanceSlice1,
            ci,
            0,
        );
        self.create_mig("ci_profile_past_last", 0, 38, ci, 0);
        self.create_mig("unknown_option", 0, DcgmMigProfileGpuInstanceSlice1, 7, 0);
        self.delete_mig("gi_unknown", DCGM_FE_GPU_I, 0, 0);
        self.delete_mig("gi_unknown_delay_flag", DCGM_FE_GPU_I, 0, delay);
        self.delete_mig("ci_unknown", DCGM_FE_GPU_CI, 0, 0);
        self.delete_mig(
            "gi_id_past_max",
            DCGM_FE_GPU_I,
            DCGM_MAX_INSTANCES as u32,
            0,
        );
        self.delete_mig(
            "ci_id_past_max",
            DCGM_FE_GPU_CI,
            DCGM_MAX_COMPUTE_INSTANCES as u32,
            0,
        );
        self.delete_mig("gpu_group", DCGM_FE_GPU, 0, 0);
        self.delete_mig("gi_bad_version", DCGM_FE_GPU_I, 0, 0);
        let mut m = dcgmMigHierarchy_v2::boxed_versioned();
        let rc = self.lib.dcgmGetGpuInstanceHierarchy().ok().map(|f| {
            // SAFETY: a versioned struct valid for the call.
            unsafe { f(self.h, &mut *m) }
        });
        self.rec(
            "mig/hierarchy_after_requests",
            rc,
            format!("count={}", m.count),
        );
    }

    /// Creates one fake entity of `group` under `parent`; its id.
    fn fake_mig(&mut self, group: u32, parent: (u32, u32)) -> Option<u32> {
        let mut c = dcgmCreateFakeEntities_v2::boxed_versioned();
        c.numToCreate = 1;
        c.entityList[0].entity.entityGroupId = group;
        c.entityList[0].parent.entityGroupId = parent.0;
        c.entityList[0].parent.entityId = parent.1;
        let f = self.lib.dcgmCreateFakeEntities().ok()?;
        // SAFETY: a versioned request valid for the call.
        let rc = unsafe { f(self.h, &mut *c) };
        (rc == DCGM_ST_OK).then_some(c.entityList[0].entity.entityId)
    }

    /// MIG requests on fake instances (`dcgmCreateFakeEntities`), which no driver knows.
    pub fn mig_fake_cases(&mut self) {
        let Some(gi) = self.fake_mig(DCGM_FE_GPU_I, (DCGM_FE_GPU, 0)) else {
            self.rec("mig/fake/gi_created", Some(DCGM_ST_GENERIC_ERROR), "");
            return;
        };
        let ci = self.fake_mig(DCGM_FE_GPU_CI, (DCGM_FE_GPU_I, gi));
        self.rec(
            "mig/fake/ci_created",
            Some(DCGM_ST_OK),
            format!("ok={}", ci.is_some()),
        );
        self.create_mig(
            "ci_in_fake_gi",
            gi,
            DcgmMigProfileComputeInstanceSlice1,
            DcgmMigCreateComputeInstance,
            0,
        );
        if let Some(ci) = ci {
            self.delete_mig("fake_ci", DCGM_FE_GPU_CI, ci, 0);
        }
        self.delete_mig("fake_gi", DCGM_FE_GPU_I, gi, 0);
    }
}
