//! The battery: raw `dcgm-sys` calls with valid, invalid and edge-case arguments, each recorded
//! as (return code, shape of the answer). The shape holds what any libdcgm must agree on
//! (counts, per-value statuses, value types, blank kinds), never the measured values.

use std::ffi::{CString, c_int, c_void};

use dcgm_sys::*;

/// One recorded call.
pub struct Record {
    pub id: String,
    pub rc: String,
    pub shape: String,
}

/// Runs calls against one library and keeps their records.
pub struct Battery<'a> {
    pub lib: &'a DcgmLibrary,
    pub h: dcgmHandle_t,
    pub records: Vec<Record>,
    /// Whether calls may name CPU entities (false for DCGM 3.x, whose sysmon module crashes
    /// where /sys/class/hwmon is absent): those calls are then recorded as `skipped`.
    pub cpu_entities: bool,
}

/// Calls a table function, or records the symbol as missing.
macro_rules! call {
    ($b:expr, $name:ident ( $($arg:expr),* $(,)? )) => {
        match $b.lib.$name() {
            // SAFETY: every argument is a valid pointer to a live, correctly versioned
            // value of the C type, or a plain value; the battery passes wrong *values*
            // (ids, versions, sizes), never dangling pointers.
            Ok(f) => Some(unsafe { f($($arg),*) }),
            Err(_) => None,
        }
    };
}

fn rc_text(rc: Option<dcgmReturn_t>) -> String {
    rc.map_or_else(|| "missing".into(), |r| r.to_string())
}

/// A struct's version word with the version number replaced by 9 (unknown everywhere).
fn bad_version(v: u32) -> u32 {
    (v & 0x00ff_ffff) | (9 << 24)
}

fn value_shape(field_type: u16, status: i32, value: &dcgmFieldValue_v1__bindgen_ty_1) -> String {
    let t = char::from(field_type as u8);
    if status != DCGM_ST_OK {
        return format!("st{status}");
    }
    // SAFETY: the union member read is the one the field type names.
    let blank = unsafe {
        match t {
            'i' => int64_blank_kind(value.i64_).map(|k| format!("{k:?}")),
            'd' => fp64_blank_kind(value.dbl).map(|k| format!("{k:?}")),
            's' => {
                let bytes: Vec<u8> = value
                    .str_
                    .iter()
                    .take_while(|c| **c != 0)
                    .map(|c| *c as u8)
                    .collect();
                str_blank_kind(&String::from_utf8_lossy(&bytes)).map(|k| format!("{k:?}"))
            }
            _ => None,
        }
    };
    match blank {
        Some(k) => format!("{t}:{k}"),
        None => format!("{t}"),
    }
}

struct Sink(Vec<String>);

unsafe extern "C" fn collect(
    group: dcgm_field_entity_group_t,
    id: dcgm_field_eid_t,
    values: *mut dcgmFieldValue_v1,
    n: c_int,
    user: *mut c_void,
) -> c_int {
    // SAFETY: `user` is the `Sink` of the running call; the library passes `n` records.
    let sink = unsafe { &mut *user.cast::<Sink>() };
    if !values.is_null() && n > 0 {
        // SAFETY: as above.
        let vals = unsafe { std::slice::from_raw_parts(values, n as usize) };
        for v in vals {
            sink.0.push(format!(
                "e{group}.{id}/f{}={}",
                v.fieldId,
                value_shape(v.fieldType, v.status, &v.value)
            ));
        }
    }
    0
}

/// Sorted and de-duplicated, so the order of the library's callbacks does not matter, with
/// the number of records first.
fn sink_shape(mut s: Vec<String>) -> String {
    let n = s.len();
    s.sort();
    s.dedup();
    format!("n={n} {}", s.join(","))
}

impl<'a> Battery<'a> {
    pub fn new(lib: &'a DcgmLibrary, h: dcgmHandle_t) -> Self {
        Self {
            lib,
            h,
            records: Vec::new(),
            cpu_entities: true,
        }
    }

    /// Whether a call naming this entity group must be left out (see `cpu_entities`).
    pub fn skips_group(&self, group: dcgm_field_entity_group_t) -> bool {
        !self.cpu_entities && (group == DCGM_FE_CPU || group == DCGM_FE_CPU_CORE)
    }

    /// Records a call left out for this library.
    pub fn skipped(&mut self, id: impl Into<String>) {
        self.records.push(Record {
            id: id.into(),
            rc: "skipped".into(),
            shape: "CPU entities crash DCGM 3.x's sysmon without /sys/class/hwmon".into(),
        });
    }

    pub fn rec(
        &mut self,
        id: impl Into<String>,
        rc: Option<dcgmReturn_t>,
        shape: impl Into<String>,
    ) {
        self.records.push(Record {
            id: id.into(),
            rc: rc_text(rc),
            shape: shape.into(),
        });
    }

    // --- building blocks used by several areas -------------------------------------------

    fn group(&mut self, id: &str, kind: dcgmGroupType_t, name: &str) -> dcgmGpuGrp_t {
        let c = CString::new(name).unwrap();
        let mut g: dcgmGpuGrp_t = 0;
        let rc = call!(self, dcgmGroupCreate(self.h, kind, c.as_ptr(), &mut g));
        self.rec(id, rc, "");
        g
    }

    fn field_group(&mut self, id: &str, fields: &[u16], name: &str) -> dcgmFieldGrp_t {
        let c = CString::new(name).unwrap();
        let mut fg: dcgmFieldGrp_t = 0;
        let rc = call!(
            self,
            dcgmFieldGroupCreate(
                self.h,
                fields.len() as c_int,
                fields.as_ptr(),
                c.as_ptr(),
                &mut fg
            )
        );
        self.rec(id, rc, "");
        fg
    }

    fn latest(&mut self, id: &str, g: dcgmGpuGrp_t, fg: dcgmFieldGrp_t) {
        let mut sink = Sink(Vec::new());
        let rc = call!(
            self,
            dcgmGetLatestValues_v2(
                self.h,
                g,
                fg,
                Some(collect),
                (&mut sink as *mut Sink).cast()
            )
        );
        self.rec(id, rc, sink_shape(sink.0));
    }

    fn since(&mut self, id: &str, g: dcgmGpuGrp_t, fg: dcgmFieldGrp_t, since: i64) -> i64 {
        let mut sink = Sink(Vec::new());
        let mut next = 0i64;
        let rc = call!(
            self,
            dcgmGetValuesSince_v2(
                self.h,
                g,
                fg,
                since,
                &mut next,
                Some(collect),
                (&mut sink as *mut Sink).cast()
            )
        );
        // Only whether samples came, not how many: sampling times differ between libraries.
        let any = sink.0.iter().any(|s| !s.contains("=st"));
        let mut kinds: Vec<String> = sink
            .0
            .iter()
            .map(|s| s.split_once('=').unwrap().1.to_string())
            .collect();
        kinds.sort();
        kinds.dedup();
        let advanced = if next > since {
            "next>since"
        } else {
            "next<=since"
        };
        let mut no_data: Vec<&str> = sink
            .0
            .iter()
            .filter(|s| s.ends_with("=st-14"))
            .filter_map(|s| s.split('/').nth(1)?.split('=').next())
            .collect();
        no_data.sort();
        no_data.dedup();
        self.rec(
            id,
            rc,
            format!(
                "samples={any} {advanced} kinds={} nodata={}",
                kinds.join(","),
                no_data.join(",")
            ),
        );
        next
    }

    fn update(&mut self, id: &str) {
        let rc = call!(self, dcgmUpdateAllFields(self.h, 1));
        self.rec(id, rc, "");
    }

    // --- the areas ------------------------------------------------------------------------

    pub fn discovery(&mut self) {
        let mut ids = [0u32; DCGM_MAX_NUM_DEVICES];
        let mut n: c_int = 0;
        let rc = call!(self, dcgmGetAllDevices(self.h, ids.as_mut_ptr(), &mut n));
        self.rec("discovery/all_devices", rc, format!("n={n}"));
        let rc = call!(
            self,
            dcgmGetAllSupportedDevices(self.h, ids.as_mut_ptr(), &mut n)
        );
        self.rec("discovery/supported_devices", rc, format!("n={n}"));
        for gpu in [
            0u32,
            1,
            2,
            3,
            4,
            7,
            8,
            15,
            16,
            31,
            32,
            63,
            64,
            100,
            1000,
            9999,
            u32::MAX,
        ] {
            let mut a = dcgmDeviceAttributes_v3::boxed_versioned();
            let rc = call!(self, dcgmGetDeviceAttributes(self.h, gpu, &mut *a));
            let shape = format!(
                "uuid={} power_blank={}",
                a.identifiers.uuid[0] != 0,
                int32_blank_kind(a.powerLimits.curPowerLimit as i32).is_some()
            );
            self.rec(format!("discovery/attributes/gpu{gpu}"), rc, shape);
            let mut a = dcgmDeviceAttributes_v3::boxed_versioned();
            a.version = bad_version(a.version);
            let rc = call!(self, dcgmGetDeviceAttributes(self.h, gpu, &mut *a));
            self.rec(format!("discovery/attributes/gpu{gpu}/bad_version"), rc, "");
            let mut st: DcgmEntityStatus_t = 0;
            let rc = call!(self, dcgmGetGpuStatus(self.h, gpu, &mut st));
            self.rec(
                format!("discovery/gpu_status/gpu{gpu}"),
                rc,
                format!("status={st}"),
            );
            let mut arch: dcgmChipArchitecture_t = 0;
            let rc = call!(self, dcgmGetGpuChipArchitecture(self.h, gpu, &mut arch));
            self.rec(format!("discovery/chip_arch/gpu{gpu}"), rc, "");
        }
        for group in [
            DCGM_FE_NONE,
            DCGM_FE_GPU,
            DCGM_FE_VGPU,
            DCGM_FE_SWITCH,
            DCGM_FE_GPU_I,
            DCGM_FE_GPU_CI,
            DCGM_FE_LINK,
            DCGM_FE_CPU,
            DCGM_FE_CPU_CORE,
            DCGM_FE_CONNECTX,
            10,
            99,
        ] {
            if self.skips_group(group) {
                for flags in [0u32, DCGM_GEGE_FLAG_ONLY_SUPPORTED] {
                    self.skipped(format!("discovery/entities/group{group}/flags{flags}"));
                }
                self.skipped(format!("discovery/entities/group{group}/zero_capacity"));
                continue;
            }
            for flags in [0u32, DCGM_GEGE_FLAG_ONLY_SUPPORTED] {
                let mut ents = vec![0u32; 4096];
                let mut n: c_int = ents.len() as c_int;
                let rc = call!(
                    self,
                    dcgmGetEntityGroupEntities(self.h, group, ents.as_mut_ptr(), &mut n, flags)
                );
                self.rec(
                    format!("discovery/entities/group{group}/flags{flags}"),
                    rc,
                    format!("n={n}"),
                );
            }
            let mut n: c_int = 0;
            let mut one = [0u32; 1];
            let rc = call!(
                self,
                dcgmGetEntityGroupEntities(self.h, group, one.as_mut_ptr(), &mut n, 0)
            );
            self.rec(
                format!("discovery/entities/group{group}/zero_capacity"),
                rc,
                "",
            );
        }
        let mut health = dcgmHostengineHealth_v1::new_versioned();
        let rc = call!(self, dcgmHostengineIsHealthy(self.h, &mut health));
        self.rec(
            "discovery/hostengine_healthy",
            rc,
            format!("health={}", health.overallHealth),
        );
    }

    pub fn groups(&mut self) {
        let g = self.group("groups/create_empty", DCGM_GROUP_EMPTY, "diff-empty");
        self.group(
            "groups/create_duplicate_name",
            DCGM_GROUP_EMPTY,
            "diff-empty",
        );
        let d = self.group("groups/create_default", DCGM_GROUP_DEFAULT, "diff-default");
        self.group(
            "groups/create_default_switches",
            DCGM_GROUP_DEFAULT_NVSWITCHES,
            "diff-sw",
        );
        self.group("groups/create_bad_type", 99, "diff-badtype");
        self.group("groups/create_empty_name", DCGM_GROUP_EMPTY, "");
        for gpu in [0u32, 1, 9999] {
            let rc = call!(self, dcgmGroupAddDevice(self.h, g, gpu));
            self.rec(format!("groups/add_device/gpu{gpu}"), rc, "");
        }
        let rc = call!(self, dcgmGroupAddDevice(self.h, g, 0));
        self.rec("groups/add_device_twice", rc, "");
        for (eg, eid) in [
            (DCGM_FE_GPU, 0u32),
            (DCGM_FE_GPU, 5000),
            (DCGM_FE_SWITCH, 0),
            (DCGM_FE_GPU_I, 0),
            (DCGM_FE_GPU_CI, 0),
            (DCGM_FE_LINK, 0),
            // Links of GPU 0 (type 1, port in bits 8-23, GPU in 24-31): port 1, port 40 (past
            // its 18 links), port 72 (past what a link id of a GPU may name); a link of GPU 5.
            (DCGM_FE_LINK, 0x0000_0101),
            (DCGM_FE_LINK, 0x0000_2801),
            (DCGM_FE_LINK, 0x0000_4801),
            (DCGM_FE_LINK, 0x0500_0001),
            // Link 0 of NvSwitch 0 (type 3).
            (DCGM_FE_LINK, 0x0000_0003),
            (DCGM_FE_CPU, 0),
            (DCGM_FE_CPU_CORE, 0),
            (DCGM_FE_VGPU, 0),
            (DCGM_FE_NONE, 0),
            (77, 0),
        ] {
            if self.skips_group(eg) {
                self.skipped(format!("groups/add_entity/{eg}.{eid}"));
                continue;
            }
            let rc = call!(self, dcgmGroupAddEntity(self.h, g, eg, eid));
            self.rec(format!("groups/add_entity/{eg}.{eid}"), rc, "");
        }
        let mut info = dcgmGroupInfo_v3::boxed_versioned();
        let rc = call!(self, dcgmGroupGetInfo(self.h, g, &mut *info));
        self.rec("groups/info", rc, format!("count={}", info.count));
        let mut info = dcgmGroupInfo_v3::boxed_versioned();
        let rc = call!(self, dcgmGroupGetInfo(self.h, d, &mut *info));
        self.rec("groups/info_default", rc, format!("count={}", info.count));
        let mut info = dcgmGroupInfo_v3::boxed_versioned();
        info.version = bad_version(info.version);
        let rc = call!(self, dcgmGroupGetInfo(self.h, g, &mut *info));
        self.rec("groups/info_bad_version", rc, "");
        for gid in [4_000_000usize, usize::MAX] {
            let mut info = dcgmGroupInfo_v3::boxed_versioned();
            let rc = call!(
                self,
                dcgmGroupGetInfo(self.h, gid as dcgmGpuGrp_t, &mut *info)
            );
            self.rec(format!("groups/info_unknown/{gid}"), rc, "");
            let rc = call!(self, dcgmGroupDestroy(self.h, gid as dcgmGpuGrp_t));
            self.rec(format!("groups/destroy_unknown/{gid}"), rc, "");
            let rc = call!(self, dcgmGroupAddDevice(self.h, gid as dcgmGpuGrp_t, 0));
            self.rec(format!("groups/add_to_unknown/{gid}"), rc, "");
        }
        for gpu in [0u32, 1, 9999] {
            let rc = call!(self, dcgmGroupRemoveDevice(self.h, g, gpu));
            self.rec(format!("groups/remove_device/gpu{gpu}"), rc, "");
        }
        let rc = call!(self, dcgmGroupRemoveDevice(self.h, g, 0));
        self.rec("groups/remove_device_twice", rc, "");
        let mut all = [0 as dcgmGpuGrp_t; 128];
        let mut n = 0u32;
        let rc = call!(self, dcgmGroupGetAllIds(self.h, all.as_mut_ptr(), &mut n));
        self.rec("groups/all_ids", rc, "");
        let rc = call!(self, dcgmGroupDestroy(self.h, g));
        self.rec("groups/destroy", rc, "");
        let rc = call!(self, dcgmGroupDestroy(self.h, g));
        self.rec("groups/destroy_twice", rc, "");
        let rc = call!(self, dcgmGroupDestroy(self.h, d));
        self.rec("groups/destroy_default", rc, "");
        // The limit: how many more can be made, and what the next one gets.
        let mut made = Vec::new();
        let mut last = Some(0);
        for i in 0..200 {
            let c = CString::new(format!("diff-limit-{i}")).unwrap();
            let mut id: dcgmGpuGrp_t = 0;
            last = call!(
                self,
                dcgmGroupCreate(self.h, DCGM_GROUP_EMPTY, c.as_ptr(), &mut id)
            );
            if last != Some(DCGM_ST_OK) {
                break;
            }
            made.push(id);
        }
        self.rec("groups/limit", last, format!("made={}", made.len()));
        for id in made {
            call!(self, dcgmGroupDestroy(self.h, id));
        }
        // Remove the rest made above, by name-agnostic sweep of what this battery created.
        let mut n = 0u32;
        call!(self, dcgmGroupGetAllIds(self.h, all.as_mut_ptr(), &mut n));
        for id in &all[..n as usize] {
            call!(self, dcgmGroupDestroy(self.h, *id));
        }
    }

    pub fn field_groups(&mut self) {
        let temp = DCGM_FI_DEV_GPU_TEMP_CELSIUS;
        self.field_group("fieldgroups/create_zero_fields", &[], "diff-fg-zero");
        let fg = self.field_group("fieldgroups/create_one", &[temp], "diff-fg-one");
        self.field_group("fieldgroups/create_duplicate_name", &[temp], "diff-fg-one");
        self.field_group(
            "fieldgroups/create_unknown_field",
            &[60_000],
            "diff-fg-unknown",
        );
        self.field_group("fieldgroups/create_field_zero", &[0], "diff-fg-fieldzero");
        self.field_group(
            "fieldgroups/create_duplicate_field",
            &[temp, temp],
            "diff-fg-dupfield",
        );
        self.field_group("fieldgroups/create_empty_name", &[temp], "");
        let known: Vec<u16> = (1..2000u16)
            .filter(|id| field_by_id(*id).is_some())
            .collect();
        for n in [127usize, 128, 129] {
            self.field_group(
                &format!("fieldgroups/create_{n}_fields"),
                &known[..n],
                &format!("diff-fg-{n}"),
            );
        }
        let mut info = dcgmFieldGroupInfo_v1::boxed_versioned();
        info.fieldGroupId = fg;
        let rc = call!(self, dcgmFieldGroupGetInfo(self.h, &mut *info));
        self.rec("fieldgroups/info", rc, format!("n={}", info.numFieldIds));
        let mut info = dcgmFieldGroupInfo_v1::boxed_versioned();
        info.fieldGroupId = 4_000_000 as dcgmFieldGrp_t;
        let rc = call!(self, dcgmFieldGroupGetInfo(self.h, &mut *info));
        self.rec("fieldgroups/info_unknown", rc, "");
        let mut info = dcgmFieldGroupInfo_v1::boxed_versioned();
        info.version = bad_version(info.version);
        info.fieldGroupId = fg;
        let rc = call!(self, dcgmFieldGroupGetInfo(self.h, &mut *info));
        self.rec("fieldgroups/info_bad_version", rc, "");
        let rc = call!(self, dcgmFieldGroupDestroy(self.h, fg));
        self.rec("fieldgroups/destroy", rc, "");
        let rc = call!(self, dcgmFieldGroupDestroy(self.h, fg));
        self.rec("fieldgroups/destroy_twice", rc, "");
        let rc = call!(
            self,
            dcgmFieldGroupDestroy(self.h, 4_000_000 as dcgmFieldGrp_t)
        );
        self.rec("fieldgroups/destroy_unknown", rc, "");
        let mut all = dcgmAllFieldGroup_t::boxed_versioned();
        let rc = call!(self, dcgmFieldGroupGetAll(self.h, &mut *all));
        self.rec("fieldgroups/get_all", rc, "");
        let mut made = Vec::new();
        let mut last = Some(0);
        for i in 0..200 {
            let c = CString::new(format!("diff-fg-limit-{i}")).unwrap();
            let mut id: dcgmFieldGrp_t = 0;
            last = call!(
                self,
                dcgmFieldGroupCreate(self.h, 1, &temp, c.as_ptr(), &mut id)
            );
            if last != Some(DCGM_ST_OK) {
                break;
            }
            made.push(id);
        }
        self.rec(
            "fieldgroups/limit",
            last,
            format!("made>0={}", !made.is_empty()),
        );
        for id in made {
            call!(self, dcgmFieldGroupDestroy(self.h, id));
        }
        let mut all = dcgmAllFieldGroup_t::boxed_versioned();
        call!(self, dcgmFieldGroupGetAll(self.h, &mut *all));
        for i in 0..all.numFieldGroups as usize {
            call!(
                self,
                dcgmFieldGroupDestroy(self.h, all.fieldGroups[i].fieldGroupId)
            );
        }
    }

    pub fn watches_and_reads(&mut self) {
        let fields = [
            DCGM_FI_DEV_GPU_TEMP_CELSIUS,
            DCGM_FI_DEV_BOARD_POWER_WATTS,
            DCGM_FI_DEV_FB_USED,
            DCGM_FI_DEV_GPU_NAME,
            DCGM_FI_DEV_ECC_DBE_VOL_TOTAL,
            DCGM_FI_PROF_SM_UTIL_RATIO,
        ];
        let g = self.group("reads/group", DCGM_GROUP_DEFAULT, "diff-reads");
        let fg = self.field_group("reads/fieldgroup", &fields, "diff-reads-fg");
        let empty = self.group("reads/empty_group", DCGM_GROUP_EMPTY, "diff-reads-empty");
        self.latest("reads/latest_before_watch", g, fg);
        self.since("reads/since_before_watch", g, fg, 0);
        self.latest("reads/latest_empty_group", empty, fg);
        self.latest("reads/latest_unknown_group", 4_000_000 as dcgmGpuGrp_t, fg);
        self.latest(
            "reads/latest_unknown_fieldgroup",
            g,
            4_000_000 as dcgmFieldGrp_t,
        );
        for (name, freq, age, samples) in [
            ("zero_freq", 0i64, 60.0, 0),
            ("negative_freq", -1, 60.0, 0),
            ("zero_age", 100_000, 0.0, 0),
            ("negative_age", 100_000, -1.0, 0),
            ("negative_samples", 100_000, 60.0, -1),
            ("odd_freq", 333_333, 7.5, 3),
        ] {
            let fgx = self.field_group(
                &format!("reads/watch_{name}/fg"),
                &[DCGM_FI_DEV_GPU_TEMP_CELSIUS],
                &format!("diff-w-{name}"),
            );
            let rc = call!(self, dcgmWatchFields(self.h, g, fgx, freq, age, samples));
            self.rec(format!("reads/watch_{name}"), rc, "");
            let rc = call!(self, dcgmUnwatchFields(self.h, g, fgx));
            self.rec(format!("reads/unwatch_{name}"), rc, "");
            call!(self, dcgmFieldGroupDestroy(self.h, fgx));
        }
        let rc = call!(self, dcgmUnwatchFields(self.h, g, fg));
        self.rec("reads/unwatch_before_watch", rc, "");
        let rc = call!(
            self,
            dcgmWatchFields(self.h, 4_000_000 as dcgmGpuGrp_t, fg, 100_000, 60.0, 0)
        );
        self.rec("reads/watch_unknown_group", rc, "");
        let rc = call!(
            self,
            dcgmWatchFields(self.h, g, 4_000_000 as dcgmFieldGrp_t, 100_000, 60.0, 0)
        );
        self.rec("reads/watch_unknown_fieldgroup", rc, "");
        let rc = call!(self, dcgmWatchFields(self.h, empty, fg, 100_000, 60.0, 0));
        self.rec("reads/watch_empty_group", rc, "");
        let rc = call!(self, dcgmWatchFields(self.h, g, fg, 100_000, 60.0, 0));
        self.rec("reads/watch", rc, "");
        let rc = call!(self, dcgmWatchFields(self.h, g, fg, 100_000, 60.0, 0));
        self.rec("reads/watch_twice", rc, "");
        self.update("reads/update_all");
        self.latest("reads/latest_after_update", g, fg);
        let next = self.since("reads/since_zero", g, fg, 0);
        self.since("reads/since_negative", g, fg, -1);
        self.since("reads/since_future", g, fg, i64::MAX / 2);
        self.since("reads/since_max", g, fg, i64::MAX);
        self.update("reads/update_again");
        std::thread::sleep(std::time::Duration::from_millis(150));
        self.update("reads/update_third");
        self.since("reads/since_cursor", g, fg, next);
        // Entity reads, with the live-data flag, unknown entities and unwatched fields.
        let mut entities = [
            dcgmGroupEntityPair_t {
                entityGroupId: DCGM_FE_GPU,
                entityId: 0,
            },
            dcgmGroupEntityPair_t {
                entityGroupId: DCGM_FE_GPU,
                entityId: 9999,
            },
            dcgmGroupEntityPair_t {
                entityGroupId: DCGM_FE_SWITCH,
                entityId: 0,
            },
        ];
        let mut f2 = [
            DCGM_FI_DEV_GPU_TEMP_CELSIUS,
            DCGM_FI_DEV_PCIE_REPLAY_TOTAL,
            DCGM_FI_DEV_GPU_NAME,
        ];
        for (name, flags, ne) in [
            ("cached", 0u32, 1usize),
            ("live", DCGM_FV_FLAG_LIVE_DATA, 1),
            ("mixed", 0, 3),
            ("mixed_live", DCGM_FV_FLAG_LIVE_DATA, 3),
        ] {
            let mut out: Vec<dcgmFieldValue_v2> = (0..ne * f2.len())
                .map(|_| dcgmFieldValue_v2::new_versioned())
                .collect();
            let rc = call!(
                self,
                dcgmEntitiesGetLatestValues(
                    self.h,
                    entities.as_mut_ptr(),
                    ne as u32,
                    f2.as_mut_ptr(),
                    f2.len() as u32,
                    flags,
                    out.as_mut_ptr()
                )
            );
            let shape: Vec<String> = out
                .iter()
                .map(|v| {
                    format!(
                        "e{}.{}/f{}={}",
                        v.entityGroupId,
                        v.entityId,
                        v.fieldId,
                        value_shape(v.fieldType, v.status, &v.value)
                    )
                })
                .collect();
            self.rec(format!("reads/entities_{name}"), rc, shape.join(","));
        }
        // Link entities (GPU 0's link 0 and port 40, a link of GPU 5, NvSwitch 0's link 0):
        // the link state and a PRM counter from the cache (a live read of links takes
        // libdcgm 4.6.0's NVLink register path, which the simulator does not model).
        let mut links: Vec<dcgmGroupEntityPair_t> = [0x0000_0001, 0x0000_2801, 0x0500_0001, 3]
            .into_iter()
            .map(|id| dcgmGroupEntityPair_t {
                entityGroupId: DCGM_FE_LINK,
                entityId: id,
            })
            .collect();
        let mut lf = [
            DCGM_FI_DEV_NVLINK_GET_STATE,
            DCGM_FI_DEV_NVLINK_PPCNT_PLR_RX_CODE_TOTAL,
        ];
        {
            let (name, flags) = ("cached", 0u32);
            let mut out: Vec<dcgmFieldValue_v2> = (0..links.len() * lf.len())
                .map(|_| dcgmFieldValue_v2::new_versioned())
                .collect();
            let rc = call!(
                self,
                dcgmEntitiesGetLatestValues(
                    self.h,
                    links.as_mut_ptr(),
                    links.len() as u32,
                    lf.as_mut_ptr(),
                    lf.len() as u32,
                    flags,
                    out.as_mut_ptr()
                )
            );
            let shape: Vec<String> = out
                .iter()
                .map(|v| {
                    let shape = value_shape(v.fieldType, v.status, &v.value);
                    format!("{:#x}/f{}={shape}", v.entityId, v.fieldId)
                })
                .collect();
            self.rec(format!("reads/links_{name}"), rc, shape.join(","));
        }
        let mut out: Vec<dcgmFieldValue_v2> =
            (0..3).map(|_| dcgmFieldValue_v2::new_versioned()).collect();
        let rc = call!(
            self,
            dcgmEntitiesGetLatestValues(
                self.h,
                entities.as_mut_ptr(),
                0,
                f2.as_mut_ptr(),
                3,
                0,
                out.as_mut_ptr()
            )
        );
        self.rec("reads/entities_zero_entities", rc, "");
        let rc = call!(
            self,
            dcgmEntitiesGetLatestValues(
                self.h,
                entities.as_mut_ptr(),
                1,
                f2.as_mut_ptr(),
                0,
                0,
                out.as_mut_ptr()
            )
        );
        self.rec("reads/entities_zero_fields", rc, "");
        // Field summary requires a watched field with samples.
        let rc = call!(self, dcgmUnwatchFields(self.h, g, fg));
        self.rec("reads/unwatch", rc, "");
        let rc = call!(self, dcgmUnwatchFields(self.h, g, fg));
        self.rec("reads/unwatch_twice", rc, "");
        self.latest("reads/latest_after_unwatch", g, fg);
        call!(self, dcgmFieldGroupDestroy(self.h, fg));
        call!(self, dcgmGroupDestroy(self.h, g));
        call!(self, dcgmGroupDestroy(self.h, empty));
    }

    pub fn single_field_api(&mut self) {
        for gpu in [0 as c_int, 9999] {
            for field in [
                DCGM_FI_DEV_GPU_TEMP_CELSIUS,
                DCGM_FI_DEV_GPU_NAME,
                60_000u16,
            ] {
                let rc = call!(
                    self,
                    dcgmWatchFieldValue(self.h, gpu, field, 100_000, 60.0, 0)
                );
                self.rec(format!("single/watch/gpu{gpu}/f{field}"), rc, "");
            }
        }
        self.update("single/update");
        for gpu in [0 as c_int, 9999] {
            let mut fields = [
                DCGM_FI_DEV_GPU_TEMP_CELSIUS,
                DCGM_FI_DEV_GPU_NAME,
                DCGM_FI_DEV_ECC_SBE_VOL_TOTAL,
            ];
            let mut out: Vec<dcgmFieldValue_v1> =
                (0..3).map(|_| dcgmFieldValue_v1::new_versioned()).collect();
            let rc = call!(
                self,
                dcgmGetLatestValuesForFields(self.h, gpu, fields.as_mut_ptr(), 3, out.as_mut_ptr())
            );
            let shape: Vec<String> = out
                .iter()
                .map(|v| {
                    format!(
                        "f{}={}",
                        v.fieldId,
                        value_shape(v.fieldType, v.status, &v.value)
                    )
                })
                .collect();
            self.rec(
                format!("single/latest_for_fields/gpu{gpu}"),
                rc,
                shape.join(","),
            );
            for (order_name, order) in [
                ("asc", DCGM_ORDER_ASCENDING),
                ("desc", DCGM_ORDER_DESCENDING),
                ("zero", 0),
            ] {
                let mut count: c_int = 4;
                let mut out: Vec<dcgmFieldValue_v1> =
                    (0..4).map(|_| dcgmFieldValue_v1::new_versioned()).collect();
                let rc = call!(
                    self,
                    dcgmGetMultipleValuesForField(
                        self.h,
                        gpu,
                        DCGM_FI_DEV_GPU_TEMP_CELSIUS,
                        &mut count,
                        0,
                        0,
                        order,
                        out.as_mut_ptr()
                    )
                );
                self.rec(
                    format!("single/multiple/gpu{gpu}/{order_name}"),
                    rc,
                    format!("some={}", count > 0),
                );
            }
        }
        let mut count: c_int = 4;
        let mut out: Vec<dcgmFieldValue_v1> =
            (0..4).map(|_| dcgmFieldValue_v1::new_versioned()).collect();
        let rc = call!(
            self,
            dcgmGetMultipleValuesForField(
                self.h,
                0,
                DCGM_FI_DEV_BOARD_POWER_WATTS,
                &mut count,
                0,
                0,
                DCGM_ORDER_ASCENDING,
                out.as_mut_ptr()
            )
        );
        // How many samples the cache holds depends on timing; that it holds some does not.
        self.rec(
            "single/multiple/unwatched",
            rc,
            format!("some={}", count > 0),
        );
        for field in [DCGM_FI_DEV_GPU_TEMP_CELSIUS, DCGM_FI_DEV_GPU_NAME] {
            for clear in [0 as c_int, 1] {
                let rc = call!(self, dcgmUnwatchFieldValue(self.h, 0, field, clear));
                self.rec(format!("single/unwatch/f{field}/clear{clear}"), rc, "");
            }
        }
        let rc = call!(
            self,
            dcgmUnwatchFieldValue(self.h, 9999, DCGM_FI_DEV_GPU_TEMP_CELSIUS, 0)
        );
        self.rec("single/unwatch/unknown_gpu", rc, "");
    }

    pub fn field_metadata(&mut self) {
        let ids = [
            0u16, 1, 150, 155, 210, 220, 600, 1001, 1508, 1533, 1534, 2000, 65535,
        ]
        .into_iter()
        .chain((2..1600).step_by(50));
        for id in ids {
            let p = self.lib.DcgmFieldGetById().ok().map(|f| {
                // SAFETY: a plain argument; the pointer is only tested for NULL.
                unsafe { f(id) }
            });
            let shape = match p {
                None => "missing".to_string(),
                Some(p) if p.is_null() => "null".to_string(),
                // SAFETY: a non-NULL pointer into the library's field table.
                Some(p) => format!("type={}", char::from(unsafe { (*p).fieldType } as u8)),
            };
            self.rec(format!("meta/by_id/{id}"), Some(0), shape);
        }
    }

    /// Error texts and failure-reason metadata: whether each code has one.
    pub fn error_texts(&mut self) {
        for code in -70..=2 {
            let p = self.lib.errorString().ok().map(|f| {
                // SAFETY: a plain argument; the pointer is only tested for NULL.
                unsafe { f(code) }
            });
            let shape = match p {
                None => "missing",
                Some(p) if p.is_null() => "null",
                Some(_) => "text",
            };
            self.rec(format!("errors/string/{code}"), Some(0), shape);
        }
        for code in [0u32, 1, 3, 4, 43, 95, 120, 200, 9999] {
            let sev = call!(self, dcgmErrorGetPriorityByCode(code));
            let cat = call!(self, dcgmErrorGetCategoryByCode(code));
            self.rec(
                format!("errors/reason/{code}"),
                Some(0),
                format!("severity={sev:?} category={cat:?}"),
            );
        }
        // The message format and suggestion of a failure reason (NULL for unknown codes).
        let text = |p: *const std::ffi::c_char| {
            if p.is_null() {
                "NULL".to_string()
            } else {
                // SAFETY: a non-NULL pointer to a NUL-terminated static string of the library.
                unsafe { std::ffi::CStr::from_ptr(p) }
                    .to_string_lossy()
                    .into_owned()
            }
        };
        for code in [0u32, 13, 70, 71, 119, 121, 122, 130, 132, 133, 9999] {
            let fmt = call!(self, dcgmErrorGetFormatMsgByCode(code)).map(text);
            let meta = call!(self, dcgmGetErrorMeta(code)).map(|m| {
                if m.is_null() {
                    "NULL".to_string()
                } else {
                    // SAFETY: a non-NULL pointer to the library's static metadata entry.
                    let m = unsafe { &*m };
                    format!("id={} suggestion={}", m.errorId, text(m.suggestion))
                }
            });
            self.rec(
                format!("errors/format/{code}"),
                Some(0),
                format!("format={fmt:?} meta={meta:?}"),
            );
        }
    }

    pub fn health_policy_config(&mut self) {
        let g = self.group("health/group", DCGM_GROUP_DEFAULT, "diff-health");
        for (name, sys) in [
            ("none", 0u32),
            ("mem_pcie", DCGM_HEALTH_WATCH_MEM | DCGM_HEALTH_WATCH_PCIE),
            ("all", DCGM_HEALTH_WATCH_ALL),
            ("bogus_bits", 0x4000_0000),
        ] {
            let rc = call!(self, dcgmHealthSet(self.h, g, sys));
            self.rec(format!("health/set/{name}"), rc, "");
            let mut got = 0u32;
            let rc = call!(self, dcgmHealthGet(self.h, g, &mut got));
            self.rec(
                format!("health/get/{name}"),
                rc,
                format!("equal={}", got == sys),
            );
        }
        let mut r = dcgmHealthResponse_v5::boxed_versioned();
        let rc = call!(self, dcgmHealthCheck(self.h, g, &mut *r));
        self.rec(
            "health/check",
            rc,
            format!("overall={} incidents={}", r.overallHealth, r.incidentCount),
        );
        let mut r = dcgmHealthResponse_v5::boxed_versioned();
        r.version = bad_version(r.version);
        let rc = call!(self, dcgmHealthCheck(self.h, g, &mut *r));
        self.rec("health/check_bad_version", rc, "");
        let mut r = dcgmHealthResponse_v5::boxed_versioned();
        let rc = call!(
            self,
            dcgmHealthCheck(self.h, 4_000_000 as dcgmGpuGrp_t, &mut *r)
        );
        self.rec("health/check_unknown_group", rc, "");
        let rc = call!(
            self,
            dcgmHealthSet(self.h, 4_000_000 as dcgmGpuGrp_t, DCGM_HEALTH_WATCH_MEM)
        );
        self.rec("health/set_unknown_group", rc, "");

        let mut p = dcgmPolicy_v1::boxed_versioned();
        let rc = call!(
            self,
            dcgmPolicyGet(self.h, g, 1, &mut *p, 0 as dcgmStatus_t)
        );
        self.rec("policy/get_unset", rc, format!("condition={}", p.condition));
        let mut p = dcgmPolicy_v1::boxed_versioned();
        p.version = bad_version(p.version);
        let rc = call!(
            self,
            dcgmPolicyGet(self.h, g, 1, &mut *p, 0 as dcgmStatus_t)
        );
        self.rec("policy/get_bad_version", rc, "");
        let mut p = dcgmPolicy_v1::boxed_versioned();
        let rc = call!(
            self,
            dcgmPolicyGet(self.h, g, 0, &mut *p, 0 as dcgmStatus_t)
        );
        self.rec("policy/get_zero_count", rc, "");
        let mut p = dcgmPolicy_v1::boxed_versioned();
        let rc = call!(
            self,
            dcgmPolicyGet(
                self.h,
                4_000_000 as dcgmGpuGrp_t,
                1,
                &mut *p,
                0 as dcgmStatus_t
            )
        );
        self.rec("policy/get_unknown_group", rc, "");

        let mut c: Vec<dcgmConfig_v2> = (0..1).map(|_| dcgmConfig_v2::new_versioned()).collect();
        for (name, kind) in [
            ("current", DCGM_CONFIG_CURRENT_STATE),
            ("target", DCGM_CONFIG_TARGET_STATE),
            ("bogus", 9),
        ] {
            let rc = call!(
                self,
                dcgmConfigGet(self.h, g, kind, 1, c.as_mut_ptr(), 0 as dcgmStatus_t)
            );
            self.rec(format!("config/get/{name}"), rc, "");
        }
        let rc = call!(
            self,
            dcgmConfigGet(
                self.h,
                4_000_000 as dcgmGpuGrp_t,
                DCGM_CONFIG_CURRENT_STATE,
                1,
                c.as_mut_ptr(),
                0 as dcgmStatus_t
            )
        );
        self.rec("config/get_unknown_group", rc, "");
        call!(self, dcgmGroupDestroy(self.h, g));
    }

    pub fn hierarchy_and_more(&mut self) {
        for gpu in [0u32, 9999] {
            let mut t = dcgmDeviceTopology_v2::boxed_versioned();
            let rc = call!(self, dcgmGetDeviceTopology(self.h, gpu, &mut *t));
            self.rec(format!("topology/device/gpu{gpu}"), rc, "");
        }
        for (name, mask, n) in [
            ("one_of_one", 1u64, 1u32),
            ("two_of_one", 1, 2),
            ("zero", 1, 0),
            ("none_given", 0, 1),
        ] {
            let mut out = 0u64;
            let rc = call!(self, dcgmSelectGpusByTopology(self.h, mask, n, &mut out, 0));
            self.rec(
                format!("topology/select/{name}"),
                rc,
                format!("out={out:#x}"),
            );
        }
        let mut s = dcgmNvLinkStatus_v5::boxed_versioned();
        let rc = call!(self, dcgmGetNvLinkLinkStatus(self.h, &mut *s));
        self.rec(
            "nvlink/status",
            rc,
            format!("gpus={} switches={}", s.numGpus, s.numNvSwitches),
        );
        let mut s = dcgmNvLinkStatus_v5::boxed_versioned();
        s.version = bad_version(s.version);
        let rc = call!(self, dcgmGetNvLinkLinkStatus(self.h, &mut *s));
        self.rec("nvlink/status_bad_version", rc, "");
        // Peer-to-peer status: every GPU, named GPUs (more than the node has, an unknown one);
        // rows and columns past what is served keep the caller's 9.
        for (name, ids) in [
            ("all", &[][..]),
            ("gpu0", &[0u32][..]),
            ("gpu0_thrice", &[0, 0, 0][..]),
            ("gpu0_unknown", &[0, 5][..]),
            ("unknown", &[5][..]),
        ] {
            let mut p = dcgmNvLinkP2PStatus_v1::boxed_versioned();
            p.numGpus = ids.len() as u32;
            for (i, row) in p.gpus.iter_mut().enumerate() {
                row.entityId = ids.get(i).copied().unwrap_or(0);
                row.linkStatus = [9; 32];
            }
            let rc = call!(self, dcgmGetNvLinkP2PStatus(self.h, &mut *p));
            let rows: Vec<String> = p.gpus[..ids.len().max(1)]
                .iter()
                .map(|r| format!("{}:{:?}", r.entityId, &r.linkStatus[..3]))
                .collect();
            self.rec(
                format!("nvlink/p2p/{name}"),
                rc,
                format!("n={} {}", p.numGpus, rows.join(" ")),
            );
        }
        let mut m = dcgmMigHierarchy_v2::boxed_versioned();
        let rc = call!(self, dcgmGetGpuInstanceHierarchy(self.h, &mut *m));
        self.rec("mig/hierarchy", rc, format!("count={}", m.count));
        let mut m = dcgmMigHierarchy_v2::boxed_versioned();
        m.version = bad_version(m.version);
        let rc = call!(self, dcgmGetGpuInstanceHierarchy(self.h, &mut *m));
        self.rec("mig/hierarchy_bad_version", rc, "");
        let mut st = dcgmModuleGetStatuses_v1::boxed_versioned();
        let rc = call!(self, dcgmModuleGetStatuses(self.h, &mut *st));
        self.rec("modules/statuses", rc, format!("n={}", st.numStatuses));
        let mut mem = dcgmIntrospectMemory_v1::new_versioned();
        let rc = call!(
            self,
            dcgmIntrospectGetHostengineMemoryUsage(self.h, &mut mem, 1)
        );
        self.rec(
            "introspect/memory",
            rc,
            format!("nonzero={}", mem.bytesUsed > 0),
        );
        let mut pg = dcgmProfGetMetricGroups_v3::boxed_versioned();
        pg.gpuId = 0;
        let rc = call!(self, dcgmProfGetSupportedMetricGroups(self.h, &mut *pg));
        self.rec("prof/metric_groups", rc, "");
        // Pausing needs the profiling module, which does not load beside GPM GPUs; a module
        // in use (introspection, just used) cannot be denylisted.
        let rc = call!(self, dcgmProfPause(self.h));
        self.rec("prof/pause", rc, "");
        let rc = call!(self, dcgmModuleDenylist(self.h, DcgmModuleIdIntrospect));
        self.rec("modules/denylist_in_use", rc, "");
        let mut st = dcgmModuleGetStatuses_v1::boxed_versioned();
        let rc = call!(self, dcgmModuleGetStatuses(self.h, &mut *st));
        let of = |id: u32| st.statuses[id as usize].status;
        self.rec(
            "modules/statuses_after_use",
            rc,
            format!(
                "core={} introspect={} profiling={}",
                of(DcgmModuleIdCore),
                of(DcgmModuleIdIntrospect),
                of(DcgmModuleIdProfiling)
            ),
        );
        let g = self.group("stats/group", DCGM_GROUP_DEFAULT, "diff-stats");
        let mut pid = dcgmPidInfo_v2::boxed_versioned();
        pid.pid = 0x7fff_0001;
        let rc = call!(self, dcgmGetPidInfo(self.h, g, &mut *pid));
        self.rec("stats/pid_before_watch", rc, "");
        let rc = call!(self, dcgmWatchPidFields(self.h, g, 1_000_000, 60.0, 0));
        self.rec("stats/watch_pid_fields", rc, "");
        let rc = call!(self, dcgmWatchPidFields(self.h, g, 0, 60.0, 0));
        self.rec("stats/watch_pid_fields_zero_freq", rc, "");
        self.update("stats/update");
        let mut pid = dcgmPidInfo_v2::boxed_versioned();
        pid.pid = 0x7fff_0001;
        let rc = call!(self, dcgmGetPidInfo(self.h, g, &mut *pid));
        self.rec("stats/pid_unknown", rc, "");
        for (name, job) in [
            ("job", "diff-job"),
            ("empty", ""),
            ("long", &"j".repeat(80)[..]),
        ] {
            let mut id = [0 as std::ffi::c_char; 64];
            for (d, s) in id.iter_mut().zip(job.bytes().take(63)) {
                *d = s as std::ffi::c_char;
            }
            let rc = call!(self, dcgmJobStartStats(self.h, g, id.as_mut_ptr()));
            self.rec(format!("stats/job_start/{name}"), rc, "");
            let rc = call!(self, dcgmJobStartStats(self.h, g, id.as_mut_ptr()));
            self.rec(format!("stats/job_start_twice/{name}"), rc, "");
            let mut info = dcgmJobInfo_v3::boxed_versioned();
            let rc = call!(self, dcgmJobGetStats(self.h, id.as_mut_ptr(), &mut *info));
            self.rec(format!("stats/job_get/{name}"), rc, "");
            let rc = call!(self, dcgmJobStopStats(self.h, id.as_mut_ptr()));
            self.rec(format!("stats/job_stop/{name}"), rc, "");
            let rc = call!(self, dcgmJobRemove(self.h, id.as_mut_ptr()));
            self.rec(format!("stats/job_remove/{name}"), rc, "");
            let rc = call!(self, dcgmJobRemove(self.h, id.as_mut_ptr()));
            self.rec(format!("stats/job_remove_twice/{name}"), rc, "");
        }
        call!(self, dcgmGroupDestroy(self.h, g));
    }

    /// Which fields the GPU supports and which it leaves blank: every field of DcgmReader's
    /// defaults and of the exporter's default counters, watched and read once.
    pub fn field_support(&mut self) {
        let mut ids: Vec<u16> = dcgm_reader::DEFAULT_FIELD_IDS.to_vec();
        let counters = include_str!("../../dcgm-exporter/etc/default-counters.csv");
        for line in counters.lines().filter(|l| l.starts_with("DCGM_FI_")) {
            let name = line.split(',').next().unwrap().trim();
            if let Some(f) = field_by_name(name) {
                ids.push(f.id);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        let g = self.group("support/group", DCGM_GROUP_DEFAULT, "diff-support");
        let fg = self.field_group("support/fieldgroup", &ids, "diff-support-fg");
        let rc = call!(self, dcgmWatchFields(self.h, g, fg, 100_000, 60.0, 0));
        self.rec("support/watch", rc, "");
        self.update("support/update");
        self.update("support/update_again");
        let mut e = [dcgmGroupEntityPair_t {
            entityGroupId: DCGM_FE_GPU,
            entityId: 0,
        }];
        let mut f = ids.clone();
        let mut out: Vec<dcgmFieldValue_v2> = ids
            .iter()
            .map(|_| dcgmFieldValue_v2::new_versioned())
            .collect();
        let rc = call!(
            self,
            dcgmEntitiesGetLatestValues(
                self.h,
                e.as_mut_ptr(),
                1,
                f.as_mut_ptr(),
                f.len() as u32,
                0,
                out.as_mut_ptr()
            )
        );
        self.rec("support/read", rc, format!("n={}", ids.len()));
        for v in &out {
            let shape = value_shape(v.fieldType, v.status, &v.value);
            self.rec(format!("support/field/{}", v.fieldId), Some(0), shape);
        }
        call!(self, dcgmUnwatchFields(self.h, g, fg));
        call!(self, dcgmFieldGroupDestroy(self.h, fg));
        call!(self, dcgmGroupDestroy(self.h, g));
    }

    /// The cached latest value of one field of GPU 0.
    fn read_gpu0(&mut self, field: u16) -> (Option<dcgmReturn_t>, dcgmFieldValue_v2) {
        let mut e = [dcgmGroupEntityPair_t {
            entityGroupId: DCGM_FE_GPU,
            entityId: 0,
        }];
        let mut f = [field];
        let mut out = [dcgmFieldValue_v2::new_versioned()];
        let rc = call!(
            self,
            dcgmEntitiesGetLatestValues(
                self.h,
                e.as_mut_ptr(),
                1,
                f.as_mut_ptr(),
                1,
                0,
                out.as_mut_ptr()
            )
        );
        (rc, out[0])
    }

    /// DCGM's test API: fake entities, injection, cache info, empty cache, link state,
    /// telemetry pause, reloadable modules. Run last: emptying the cache drops every watch.
    pub fn test_api(&mut self) {
        let fake =
            |b: &mut Self, id: &str, group: u32, parent: Option<(u32, u32)>, n: u32, bad: bool| {
                let mut c = dcgmCreateFakeEntities_v2::boxed_versioned();
                if bad {
                    c.version = bad_version(c.version);
                }
                c.numToCreate = n;
                for e in c.entityList.iter_mut().take(n as usize) {
                    e.entity.entityGroupId = group;
                    if let Some((pg, pid)) = parent {
                        e.parent.entityGroupId = pg;
                        e.parent.entityId = pid;
                    }
                }
                let rc = call!(b, dcgmCreateFakeEntities(b.h, &mut *c));
                b.rec(format!("testapi/fake/{id}"), rc, "");
            };
        fake(self, "bad_version", DCGM_FE_GPU, None, 1, true);
        fake(self, "zero", DCGM_FE_GPU, None, 0, false);
        fake(self, "gpu", DCGM_FE_GPU, None, 1, false);
        fake(
            self,
            "gpu_instance",
            DCGM_FE_GPU_I,
            Some((DCGM_FE_GPU, 0)),
            1,
            false,
        );
        fake(
            self,
            "gpu_instance_unknown_parent",
            DCGM_FE_GPU_I,
            Some((DCGM_FE_GPU, 9999)),
            1,
            false,
        );
        fake(self, "switch", DCGM_FE_SWITCH, None, 1, false);
        let mut ids = [0u32; DCGM_MAX_NUM_DEVICES];
        let mut n: c_int = 0;
        let rc = call!(self, dcgmGetAllDevices(self.h, ids.as_mut_ptr(), &mut n));
        self.rec("testapi/all_devices_after_fake", rc, format!("n={n}"));

        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros() as i64;
        let inject =
            |b: &mut Self, id: &str, group: u32, eid: u32, field: u16, ty: u8, bad: bool| {
                let mut v = dcgmInjectFieldValue_v1::new_versioned();
                if bad {
                    v.version = bad_version(v.version);
                }
                v.fieldId = field;
                v.fieldType = u16::from(ty);
                v.ts = now;
                v.value.i64_ = 77;
                if ty == b'd' {
                    v.value.dbl = 77.0;
                }
                let rc = if group == DCGM_FE_GPU {
                    call!(b, dcgmInjectFieldValue(b.h, eid, &mut v))
                } else {
                    call!(b, dcgmInjectEntityFieldValue(b.h, group, eid, &mut v))
                };
                b.rec(format!("testapi/inject/{id}"), rc, "");
            };
        let temp = DCGM_FI_DEV_GPU_TEMP_CELSIUS;
        inject(self, "bad_version", DCGM_FE_GPU, 0, temp, b'i', true);
        inject(self, "gpu_temp", DCGM_FE_GPU, 0, temp, b'i', false);
        inject(self, "wrong_type", DCGM_FE_GPU, 0, temp, b'd', false);
        inject(self, "unknown_gpu", DCGM_FE_GPU, 9999, temp, b'i', false);
        inject(self, "unknown_field", DCGM_FE_GPU, 0, 60_000, b'i', false);
        inject(self, "entity_unknown_group", 102, 0, temp, b'i', false);
        // A PRM counter of GPU 0's link 1 and of its port 40 (no link there), of port 72 (past
        // what a GPU link id may name), of a link of GPU 5 (no such GPU), and of NvSwitch 0's
        // ports 0 and 600 (past what a switch link id may name).
        let prm = DCGM_FI_DEV_NVLINK_PPCNT_PLR_RX_CODE_TOTAL;
        for (id, link) in [
            ("link_prm", 0x0000_0101),
            ("link_prm_port40", 0x0000_2801),
            ("link_prm_port72", 0x0000_4801),
            ("link_prm_gpu5", 0x0500_0001),
            ("link_prm_switch0", 0x0000_0003),
            ("link_prm_switch0_port600", 0x0002_5803),
        ] {
            inject(self, id, DCGM_FE_LINK, link, prm, b'i', false);
        }
        let (rc, v) = self.read_gpu0(temp);
        let v = &v;
        // SAFETY: reading the integer member of a value the library typed as an integer.
        let injected = v.status == DCGM_ST_OK && v.ts == now && unsafe { v.value.i64_ } == 77;
        self.rec(
            "testapi/read_injected",
            rc,
            format!("injected_value_and_ts={injected}"),
        );

        for (id, bad, field) in [
            ("bad_version", true, temp),
            ("watched", false, temp),
            ("unwatched", false, DCGM_FI_DEV_ECC_SBE_VOL_TOTAL),
        ] {
            let mut ci = dcgmCacheManagerFieldInfo_v4_t::boxed_versioned();
            if bad {
                ci.version = bad_version(ci.version);
            }
            ci.entityGroupId = DCGM_FE_GPU;
            ci.entityId = 0;
            ci.fieldId = field;
            let rc = call!(self, dcgmGetCacheManagerFieldInfo(self.h, &mut *ci));
            self.rec(
                format!("testapi/cache_info/{id}"),
                rc,
                format!("samples>0={}", ci.numSamples > 0),
            );
        }
        for (id, bad, gpu) in [
            ("bad_version", true, 0u32),
            ("gpu0_link0", false, 0),
            ("unknown_gpu", false, 9999),
        ] {
            let mut ls = dcgmSetNvLinkLinkState_v1::new_versioned();
            if bad {
                ls.version = bad_version(ls.version);
            }
            ls.entityGroupId = DCGM_FE_GPU;
            ls.entityId = gpu;
            ls.linkState = DcgmNvLinkLinkStateDown;
            let rc = call!(self, dcgmSetEntityNvLinkLinkState(self.h, &mut ls));
            self.rec(format!("testapi/link_state/{id}"), rc, "");
        }
        let rc = call!(self, dcgmPauseTelemetryForDiag(self.h));
        self.rec("testapi/pause_telemetry", rc, "");
        let rc = call!(self, dcgmResumeTelemetryForDiag(self.h));
        self.rec("testapi/resume_telemetry", rc, "");
        for (id, bad) in [("bad_version", true), ("ok", false)] {
            let mut m = dcgmModulesReloadable_v1::new_versioned();
            if bad {
                m.version = bad_version(m.version);
            }
            let rc = call!(self, dcgmMarkModulesReloadable(self.h, &mut m));
            self.rec(format!("testapi/modules_reloadable/{id}"), rc, "");
        }
        let rc = call!(self, dcgmEmptyCache(self.h));
        self.rec("testapi/empty_cache", rc, "");
        let (rc, v) = self.read_gpu0(temp);
        self.rec(
            "testapi/read_after_empty_cache",
            rc,
            format!("status={}", v.status),
        );
    }

    /// Calls on a handle after the engine stopped, and after `dcgmShutdown`.
    pub fn after_shutdown(&mut self) {
        let rc = call!(self, dcgmStopEmbedded(self.h));
        self.rec("shutdown/stop_embedded", rc, "");
        let rc = call!(self, dcgmStopEmbedded(self.h));
        self.rec("shutdown/stop_embedded_twice", rc, "");
        let mut ids = [0u32; DCGM_MAX_NUM_DEVICES];
        let mut n: c_int = 0;
        let rc = call!(self, dcgmGetAllDevices(self.h, ids.as_mut_ptr(), &mut n));
        self.rec("shutdown/all_devices_after_stop", rc, "");
        let rc = call!(self, dcgmShutdown());
        self.rec("shutdown/shutdown", rc, "");
        let rc = call!(self, dcgmGetAllDevices(self.h, ids.as_mut_ptr(), &mut n));
        self.rec("shutdown/all_devices_after_shutdown", rc, "");
        let mut h: dcgmHandle_t = 0;
        let rc = call!(self, dcgmStartEmbedded(DCGM_OPERATION_MODE_AUTO, &mut h));
        self.rec("shutdown/start_embedded_without_init", rc, "");
        let rc = call!(self, dcgmShutdown());
        self.rec("shutdown/shutdown_twice", rc, "");
    }
}
