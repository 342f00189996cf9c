//! Two raw answers the first battery missed: `dcgmEntitiesGetLatestValues` with a field id
//! the library does not know (from the cache the whole call fails with
//! `DCGM_ST_GENERIC_ERROR`; a live read marks the value `DCGM_ST_UNKNOWN_FIELD`), and how
//! many field groups a client can create (the engine keeps three of the 64 for itself).

use std::ffi::CString;

use dcgm_sys::*;

use crate::battery::Battery;

impl Battery<'_> {
    fn entities_latest(&mut self, id: &str, fields: &[u16], flags: u32) {
        let mut ents = [dcgmGroupEntityPair_t {
            entityGroupId: DCGM_FE_GPU,
            entityId: 0,
        }];
        let mut ids = fields.to_vec();
        let mut out: Vec<dcgmFieldValue_v2> = (0..fields.len()).map(|_| zeroed()).collect();
        let rc = self.lib.dcgmEntitiesGetLatestValues().ok().map(|f| {
            // SAFETY: one entity, `ids.len()` fields and room for as many values.
            unsafe {
                f(
                    self.h,
                    ents.as_mut_ptr(),
                    1,
                    ids.as_mut_ptr(),
                    ids.len() as u32,
                    flags,
                    out.as_mut_ptr(),
                )
            }
        });
        let shape = if rc == Some(DCGM_ST_OK) {
            out.iter()
                .map(|v| format!("f{}=st{}", v.fieldId, v.status))
                .collect::<Vec<_>>()
                .join(",")
        } else {
            String::new()
        };
        self.rec(format!("reads/{id}"), rc, shape);
    }

    /// The two raw answers.
    pub fn raw_answer_cases(&mut self) {
        let temp = DCGM_FI_DEV_GPU_TEMP_CELSIUS;
        self.entities_latest("entities_unknown_field", &[temp, 60_000], 0);
        self.entities_latest("entities_unknown_field_only", &[60_000], 0);
        self.entities_latest("entities_field_zero", &[temp, 0], 0);
        let live = DCGM_FV_FLAG_LIVE_DATA;
        self.entities_latest("entities_unknown_field_live", &[temp, 60_000], live);

        // Field groups the client has now (the engine's own are named DCGM_INTERNAL_*), then
        // as many more as it may create.
        let mut all = dcgmAllFieldGroup_t::boxed_versioned();
        if let Ok(f) = self.lib.dcgmFieldGroupGetAll() {
            // SAFETY: a versioned struct valid for the call.
            unsafe { f(self.h, &mut *all) };
        }
        let mine = all.fieldGroups[..all.numFieldGroups as usize]
            .iter()
            .filter(|g| {
                let name: Vec<u8> = g
                    .fieldGroupName
                    .iter()
                    .take_while(|c| **c != 0)
                    .map(|c| *c as u8)
                    .collect();
                !name.starts_with(b"DCGM_INTERNAL_")
            })
            .count();
        let (Ok(create), Ok(destroy)) = (
            self.lib.dcgmFieldGroupCreate(),
            self.lib.dcgmFieldGroupDestroy(),
        ) else {
            self.rec("fieldgroups/limit_count", None, "");
            return;
        };
        let mut made = Vec::new();
        let last = loop {
            let c = CString::new(format!("diff-fg-count-{}", made.len())).unwrap();
            let mut id: dcgmFieldGrp_t = 0;
            // SAFETY: one field id, a C string and an out-pointer valid for the call.
            let rc = unsafe { create(self.h, 1, &temp, c.as_ptr(), &mut id) };
            if rc != DCGM_ST_OK || made.len() > 200 {
                break rc;
            }
            made.push(id);
        };
        self.rec(
            "fieldgroups/limit_count",
            Some(last),
            format!("client_field_groups={}", mine + made.len()),
        );
        for id in made {
            // SAFETY: plain arguments.
            unsafe { destroy(self.h, id) };
        }
    }
}
