//! Samples at one time (issue 33): libdcgm's time series keep one sample per microsecond, and
//! a sample whose time is already taken is stored one microsecond later (retried until the
//! time is free). The cases inject, through the test API with explicit times, several samples
//! at one time into an INT64, a DOUBLE and a STRING field of GPU 0, then one at a time an
//! earlier move already took, and two older than the newest (the second at a taken time too).
//! They read them back every way a client can (`dcgmGetMultipleValuesForField` in both orders
//! and in a window, `dcgmGetValuesSince_v2`, the latest value through three calls), first with
//! the fields unwatched, then watched. Each shape gives the times relative to the first
//! injected time (`ts=+0,+1,+2`), the values and their number, so it is the same on every run.
//!
//! The fields are ones no other case reads or watches, and the times are the case's start, so
//! no sample the library took earlier falls within the windows read. The public inject API
//! carries INT64, DOUBLE and STRING values only: a blob injection is recorded as refused.

use std::ffi::{CString, c_int, c_void};

use dcgm_sys::*;

use crate::battery::Battery;

/// Calls a library function if the library has it (as the battery's own `call!`).
macro_rules! call {
    ($b:expr, $name:ident ( $($arg:expr),* $(,)? )) => {
        match $b.lib.$name() {
            // SAFETY: every argument is a valid pointer to a live, correctly versioned value
            // of the C type, or a plain value.
            Ok(f) => Some(unsafe { f($($arg),*) }),
            Err(_) => None,
        }
    };
}

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// The value of a sample as text (`st<N>` for a status without a value).
fn value_text(fv: &dcgmFieldValue_v1) -> String {
    if fv.status != DCGM_ST_OK {
        return format!("st{}", fv.status);
    }
    // SAFETY: the union member read is the one the field type names.
    unsafe {
        match fv.fieldType as u8 {
            b'i' => fv.value.i64_.to_string(),
            b'd' => format!("{:.1}", fv.value.dbl),
            b's' => {
                let bytes: Vec<u8> = fv
                    .value
                    .str_
                    .iter()
                    .take_while(|c| **c != 0)
                    .map(|c| *c as u8)
                    .collect();
                String::from_utf8_lossy(&bytes).into_owned()
            }
            t => format!("type{t}"),
        }
    }
}

/// Samples as `n=N ts=+a,+b v=x,y`, times relative to `base` (`later`: a sample the engine
/// took itself, after the injected window).
fn samples_shape(base: i64, samples: &[(i64, String)]) -> String {
    let ts: Vec<String> = samples
        .iter()
        .map(|(t, _)| match t - base {
            d if d > WINDOW => "later".to_string(),
            d if d < -WINDOW => "earlier".to_string(),
            d => format!("{d:+}"),
        })
        .collect();
    let v: Vec<&str> = samples.iter().map(|(_, v)| v.as_str()).collect();
    format!("n={} ts={} v={}", samples.len(), ts.join(","), v.join(","))
}

struct Sink(Vec<(i64, String)>);

unsafe extern "C" fn collect(
    _group: dcgm_field_entity_group_t,
    _id: dcgm_field_eid_t,
    values: *mut dcgmFieldValue_v1,
    n: c_int,
    user: *mut c_void,
) -> c_int {
    // SAFETY: `user` is the `Sink` of the running call; the library passes `n` records.
    let sink = unsafe { &mut *user.cast::<Sink>() };
    if !values.is_null() && n > 0 {
        // SAFETY: as above.
        for v in unsafe { std::slice::from_raw_parts(values, n as usize) } {
            sink.0.push((v.ts, value_text(v)));
        }
    }
    0
}

/// One field of the cases: its name in the ids, id, type, and whether it is injected through
/// `dcgmInjectEntityFieldValue` (else `dcgmInjectFieldValue`).
struct Field {
    name: &'static str,
    id: u16,
    ty: u8,
    entity_api: bool,
}

const FIELDS: [Field; 3] = [
    Field {
        name: "int64",
        id: DCGM_FI_DEV_CPU_AFFINITY_3,
        ty: DCGM_FT_INT64,
        entity_api: false,
    },
    Field {
        name: "double",
        id: DCGM_FI_DEV_BOARD_POWER_LIMIT_DEFAULT_WATTS,
        ty: DCGM_FT_DOUBLE,
        entity_api: true,
    },
    Field {
        name: "string",
        id: DCGM_FI_DEV_INFOROM_POWER_VERSION,
        ty: DCGM_FT_STRING,
        entity_api: false,
    },
];

/// The injections, in order: (time after the base time, value number). The first three share
/// the base time (+0, +1, +2); +1 is then taken, so the fourth lands at +3; the fifth is older
/// than the newest, at a free time; the sixth is older too, at the time the fifth took.
const INJECTIONS: [(i64, i64); 6] = [(0, 1), (0, 2), (0, 3), (1, 4), (-1000, 5), (-1000, 6)];

/// A window around the injected times, wide enough for all of them.
const WINDOW: i64 = 10_000;

impl Battery<'_> {
    fn inject_sample(&mut self, f: &Field, ts: i64, n: i64) -> Option<dcgmReturn_t> {
        let mut v = dcgmInjectFieldValue_v1::new_versioned();
        v.fieldId = f.id;
        v.fieldType = u16::from(f.ty);
        v.ts = ts;
        match f.ty {
            DCGM_FT_DOUBLE => v.value.dbl = n as f64 + 0.5,
            DCGM_FT_STRING => {
                let s = format!("s{n}");
                // SAFETY: writing the string member of the union, NUL-terminated (zeroed).
                let dst = unsafe { &mut v.value.str_ };
                for (d, b) in dst.iter_mut().zip(s.bytes()) {
                    *d = b as _;
                }
            }
            _ => v.value.i64_ = 100 + n,
        }
        if f.entity_api {
            call!(
                self,
                dcgmInjectEntityFieldValue(self.h, DCGM_FE_GPU, 0, &mut v)
            )
        } else {
            call!(self, dcgmInjectFieldValue(self.h, 0, &mut v))
        }
    }

    fn multi(&mut self, id: String, f: &Field, base: i64, range: (i64, i64), order: u32) {
        let mut count: c_int = 16;
        let mut out: Vec<dcgmFieldValue_v1> = (0..16)
            .map(|_| dcgmFieldValue_v1::new_versioned())
            .collect();
        let rc = call!(
            self,
            dcgmGetMultipleValuesForField(
                self.h,
                0,
                f.id,
                &mut count,
                range.0,
                range.1,
                order,
                out.as_mut_ptr()
            )
        );
        let got: Vec<(i64, String)> = out
            .iter()
            .take(count.clamp(0, 16) as usize)
            .map(|v| (v.ts, value_text(v)))
            .collect();
        self.rec(id, rc, samples_shape(base, &got));
    }

    fn since_samples(
        &mut self,
        id: String,
        g: dcgmGpuGrp_t,
        fg: dcgmFieldGrp_t,
        base: i64,
        since: i64,
    ) {
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
        let newest = base + 3;
        let shape = format!(
            "{} next>newest={}",
            samples_shape(base, &sink.0),
            next > newest
        );
        self.rec(id, rc, shape);
    }

    fn latest_samples(
        &mut self,
        prefix: &str,
        f: &Field,
        g: dcgmGpuGrp_t,
        fg: dcgmFieldGrp_t,
        base: i64,
    ) {
        let mut fields = [f.id];
        let mut out = [dcgmFieldValue_v1::new_versioned()];
        let rc = call!(
            self,
            dcgmGetLatestValuesForFields(self.h, 0, fields.as_mut_ptr(), 1, out.as_mut_ptr())
        );
        let got = [(out[0].ts, value_text(&out[0]))];
        self.rec(
            format!("{prefix}/latest_for_fields"),
            rc,
            samples_shape(base, &got),
        );
        let mut e = [dcgmGroupEntityPair_t {
            entityGroupId: DCGM_FE_GPU,
            entityId: 0,
        }];
        let mut out2 = [dcgmFieldValue_v2::new_versioned()];
        let rc = call!(
            self,
            dcgmEntitiesGetLatestValues(
                self.h,
                e.as_mut_ptr(),
                1,
                fields.as_mut_ptr(),
                1,
                0,
                out2.as_mut_ptr()
            )
        );
        let v = &out2[0];
        let as_v1 = dcgmFieldValue_v1 {
            version: 0,
            fieldId: v.fieldId,
            fieldType: v.fieldType,
            status: v.status,
            ts: v.ts,
            value: v.value,
        };
        self.rec(
            format!("{prefix}/latest_entities"),
            rc,
            samples_shape(base, &[(v.ts, value_text(&as_v1))]),
        );
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
        self.rec(
            format!("{prefix}/latest_group"),
            rc,
            samples_shape(base, &sink.0),
        );
    }

    /// Every read of one field's samples, under `prefix`.
    fn read_samples(
        &mut self,
        prefix: &str,
        f: &Field,
        g: dcgmGpuGrp_t,
        fg: dcgmFieldGrp_t,
        base: i64,
    ) {
        let all = (base - WINDOW, base + WINDOW);
        self.multi(
            format!("{prefix}/multi_asc"),
            f,
            base,
            all,
            DCGM_ORDER_ASCENDING,
        );
        self.multi(
            format!("{prefix}/multi_desc"),
            f,
            base,
            all,
            DCGM_ORDER_DESCENDING,
        );
        self.multi(
            format!("{prefix}/multi_window_1_2"),
            f,
            base,
            (base + 1, base + 2),
            DCGM_ORDER_ASCENDING,
        );
        self.since_samples(format!("{prefix}/since_all"), g, fg, base, base - WINDOW);
        self.since_samples(format!("{prefix}/since_plus1"), g, fg, base, base + 1);
        self.latest_samples(prefix, f, g, fg, base);
    }

    pub fn sample_cases(&mut self) {
        let base = now_us() - 1_000_000;
        let name = CString::new("diff-samples").unwrap();
        let mut g: dcgmGpuGrp_t = 0;
        let rc = call!(
            self,
            dcgmGroupCreate(self.h, DCGM_GROUP_EMPTY, name.as_ptr(), &mut g)
        );
        let rc2 = call!(self, dcgmGroupAddDevice(self.h, g, 0));
        self.rec(
            "samples/group",
            rc,
            format!("add_gpu0={}", rc2.map_or(-999, |r| r)),
        );
        for f in &FIELDS {
            let prefix = format!("samples/{}", f.name);
            let rcs: Vec<String> = INJECTIONS
                .iter()
                .map(|&(dt, n)| {
                    self.inject_sample(f, base + dt, n)
                        .map_or("missing".into(), |r| r.to_string())
                })
                .collect();
            self.rec(
                format!("{prefix}/inject"),
                Some(DCGM_ST_OK),
                format!("rcs={}", rcs.join(",")),
            );
            let fname = CString::new(format!("diff-samples-{}", f.name)).unwrap();
            let mut fg: dcgmFieldGrp_t = 0;
            let ids = [f.id];
            let rc = call!(
                self,
                dcgmFieldGroupCreate(self.h, 1, ids.as_ptr(), fname.as_ptr(), &mut fg)
            );
            self.rec(format!("{prefix}/fieldgroup"), rc, "");
            self.read_samples(&format!("{prefix}/unwatched"), f, g, fg, base);
            // A watch whose interval is an hour: the engine takes no sample of its own.
            let rc = call!(
                self,
                dcgmWatchFields(self.h, g, fg, 3_600_000_000, 3600.0, 0)
            );
            self.rec(format!("{prefix}/watch"), rc, "");
            self.read_samples(&format!("{prefix}/watched"), f, g, fg, base);
            call!(self, dcgmUnwatchFields(self.h, g, fg));
            call!(self, dcgmFieldGroupDestroy(self.h, fg));
        }
        // The public inject API has no blob: libdcgm refuses the type.
        let mut v = dcgmInjectFieldValue_v1::new_versioned();
        v.fieldId = DCGM_FI_DEV_CLOCKS_SUPPORTED;
        v.fieldType = u16::from(DCGM_FT_BINARY);
        v.ts = base;
        let rc = call!(self, dcgmInjectFieldValue(self.h, 0, &mut v));
        self.rec("samples/blob/inject", rc, "");
        call!(self, dcgmGroupDestroy(self.h, g));
    }
}
