//! Diagnostics: the tests a run level includes, per-GPU results driven by the scripted events,
//! and the response in the current (v12) and the two same-sized older layouts (v11, v10).
//!
//! A GPU with an uncorrectable ECC (`dbe`) event fails the memory tests; XIDs fail the test
//! closest to their cause (79 → pcie, memory XIDs → memory, others → diagnostic and
//! targeted_stress); PCIe replays and power events give warnings. GPUs in MIG mode skip every
//! test but the software one. Runs take a few milliseconds (at most 50 ms at level 4).

use std::ffi::c_char;
use std::time::Duration;

use dcgm_sys::*;

use super::modules::module_ok;
use super::{guard, guard_symbol, read_str, version_word, write_str};
use crate::engine::{Engine, now_us};
use crate::failure_reasons::recorded_class;
use crate::personality::{self, Struct};
use crate::sim::with_engine;

/// Tests in run order, with their category.
const TESTS: [(&str, &str); 9] = [
    ("software", "Deployment"),
    ("pcie", "Integration"),
    ("memory", "Hardware"),
    ("diagnostic", "Hardware"),
    ("targeted_stress", "Stress"),
    ("targeted_power", "Stress"),
    ("memory_bandwidth", "Stress"),
    ("memtest", "Hardware"),
    ("pulse_test", "Hardware"),
];

/// The tests of a run level (1 = short … 4 = extra long).
fn level_tests(level: u32) -> Result<Vec<&'static str>, dcgmReturn_t> {
    let n = match level {
        1 => 1,
        2 => 3,
        3 => 7,
        4 => 9,
        _ => return Err(DCGM_ST_BADPARAM),
    };
    Ok(TESTS[..n].iter().map(|t| t.0).collect())
}

fn category_of(test: &str) -> &'static str {
    TESTS
        .iter()
        .find(|t| t.0 == test)
        .map_or("Hardware", |t| t.1)
}

/// The outcome of one test on one GPU.
#[derive(Debug, Clone)]
struct EntityOutcome {
    gpu: u32,
    result: dcgmDiagResult_t,
    error: Option<(dcgmError_t, String)>,
    info: Option<String>,
}

#[derive(Debug, Clone)]
struct TestOutcome {
    name: &'static str,
    results: Vec<EntityOutcome>,
}

impl TestOutcome {
    fn result(&self) -> dcgmDiagResult_t {
        let has = |r| self.results.iter().any(|o| o.result == r);
        if has(DCGM_DIAG_RESULT_FAIL) {
            DCGM_DIAG_RESULT_FAIL
        } else if has(DCGM_DIAG_RESULT_WARN) {
            DCGM_DIAG_RESULT_WARN
        } else if has(DCGM_DIAG_RESULT_PASS) {
            DCGM_DIAG_RESULT_PASS
        } else if self.results.is_empty() {
            DCGM_DIAG_RESULT_NOT_RUN
        } else {
            DCGM_DIAG_RESULT_SKIP
        }
    }
}

/// Everything a response needs.
#[derive(Debug, Clone)]
struct Plan {
    tests: Vec<TestOutcome>,
    /// (GPU id, serial number).
    gpus: Vec<(u32, String)>,
    driver: String,
}

const MEMORY_XIDS: [i64; 6] = [48, 63, 64, 92, 94, 95];

fn run_test(e: &Engine, test: &'static str, gpus: &[u32], now: i64) -> TestOutcome {
    let d = &e.dynamics;
    let mut results = Vec::new();
    for &g in gpus {
        let evs: Vec<_> = d
            .events
            .iter()
            .filter(|ev| ev.gpu == g && ev.ts <= now)
            .collect();
        let of = |kind: &'static str| evs.iter().filter(move |ev| ev.kind == kind);
        let mut o = EntityOutcome {
            gpu: g,
            result: DCGM_DIAG_RESULT_PASS,
            error: None,
            info: None,
        };
        let mut fail = |code, msg: String| {
            if o.result != DCGM_DIAG_RESULT_FAIL {
                o.result = DCGM_DIAG_RESULT_FAIL;
                o.error = Some((code, msg));
            }
        };
        if test != "software" && e.machine.mig.enabled(g) {
            o.result = DCGM_DIAG_RESULT_SKIP;
            o.info = Some(format!("{test} skipped on GPU {g}: MIG mode is enabled"));
            results.push(o);
            continue;
        }
        let dbe = d.event_total(g, "dbe", now, false);
        match test {
            "memory" => {
                if dbe > 0 {
                    fail(
                        DCGM_FR_VOLATILE_DBE_DETECTED,
                        format!(
                            "GPU {g} has {dbe} uncorrectable ECC error(s); the memory test cannot trust its memory"
                        ),
                    );
                }
                if let Some(x) = of("xid").find(|x| MEMORY_XIDS.contains(&x.value)) {
                    fail(
                        DCGM_FR_XID_ERROR,
                        format!("GPU {g} reported XID {} during the memory test", x.value),
                    );
                }
            }
            "memtest" if dbe > 0 => {
                fail(
                    DCGM_FR_FAULTY_MEMORY,
                    format!(
                        "memtest found faulty memory on GPU {g} ({dbe} uncorrectable error(s))"
                    ),
                );
            }
            "pcie" => {
                if of("xid").any(|x| x.value == 79) {
                    fail(
                        DCGM_FR_FALLEN_OFF_BUS,
                        format!("GPU {g} fell off the PCIe bus (XID 79)"),
                    );
                }
                let replays = d.event_total(g, "pcie_replay", now, false);
                if replays > 0 && o.result == DCGM_DIAG_RESULT_PASS {
                    o.result = DCGM_DIAG_RESULT_WARN;
                    o.info = Some(format!(
                        "GPU {g} logged {replays} PCIe replay(s); check the link"
                    ));
                }
            }
            "diagnostic" | "targeted_stress" => {
                if let Some(x) =
                    of("xid").find(|x| x.value != 79 && !MEMORY_XIDS.contains(&x.value))
                {
                    fail(
                        DCGM_FR_XID_ERROR,
                        format!(
                            "GPU {g} reported XID {} while under load in {test}",
                            x.value
                        ),
                    );
                }
            }
            "targeted_power" => {
                if let Some(p) = of("power").next_back() {
                    o.result = DCGM_DIAG_RESULT_WARN;
                    o.info = Some(format!(
                        "GPU {g} hit its power limit at {} W and lowered its clocks",
                        p.value
                    ));
                }
            }
            _ => {}
        }
        results.push(o);
    }
    TestOutcome {
        name: test,
        results,
    }
}

/// What a run covers.
enum Target {
    Group(dcgmGpuGrp_t),
    Gpus(Vec<u32>),
}

/// Parses an `entityIds` string: `*`, `gpu:*`, `N` or `gpu:N`, comma-separated.
fn parse_entity_ids(s: &str, count: u32) -> Result<Vec<u32>, dcgmReturn_t> {
    let mut v = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let id = item.strip_prefix("gpu:").unwrap_or(item);
        if id == "*" {
            v.extend(0..count);
            continue;
        }
        let g: u32 = id.parse().map_err(|_| DCGM_ST_BADPARAM)?;
        if g >= count {
            return Err(DCGM_ST_BADPARAM);
        }
        v.push(g);
    }
    v.dedup();
    Ok(v)
}

/// Runs the tests on the target, after checking that no other run is going on.
fn execute(
    handle: dcgmHandle_t,
    target: Target,
    tests: Vec<&'static str>,
) -> Result<Plan, dcgmReturn_t> {
    with_engine(handle, |e| {
        module_ok(e, DcgmModuleIdDiag)?;
        if e.diag_running {
            return Err(DCGM_ST_DIAG_ALREADY_RUNNING);
        }
        let gpus = match &target {
            Target::Group(g) => e.group_gpus(*g)?,
            Target::Gpus(v) => v.clone(),
        };
        if gpus.is_empty() {
            return Err(DCGM_ST_GROUP_IS_EMPTY);
        }
        e.diag_running = true;
        e.diag_stop = false;
        Ok(())
    })?;
    // The longer levels take a moment, like a (very fast) real run.
    let ms = match tests.len() {
        0..=1 => 0,
        2..=3 => 5,
        4..=7 => 20,
        _ => 50,
    };
    if ms > 0 {
        std::thread::sleep(Duration::from_millis(ms));
    }
    with_engine(handle, |e| {
        e.diag_running = false;
        if std::mem::take(&mut e.diag_stop) {
            return Err(DCGM_ST_DIAG_STOPPED);
        }
        let gpus = match &target {
            Target::Group(g) => e.group_gpus(*g)?,
            Target::Gpus(v) => v.clone(),
        };
        let now = now_us();
        Ok(Plan {
            tests: tests.iter().map(|t| run_test(e, t, &gpus, now)).collect(),
            gpus: gpus
                .iter()
                .map(|&g| {
                    let serial = e
                        .machine
                        .cfg
                        .gpus
                        .get(g as usize)
                        .map_or_else(String::new, |c| c.serial.clone());
                    (g, serial)
                })
                .collect(),
            driver: e.machine.cfg.driver_version.clone(),
        })
    })
}

/// SKU device id of the simulated GPUs (H100 SXM).
const SKU_DEVICE_ID: &str = "2330";

fn gpu_pair(g: u32) -> dcgmGroupEntityPair_t {
    dcgmGroupEntityPair_t {
        entityGroupId: DCGM_FE_GPU,
        entityId: g,
    }
}

/// Fills the v12 or v11 layout (they differ only in the info capacity of a test).
macro_rules! fill_current {
    ($name:ident, $resp:ty) => {
        fn $name(r: &mut $resp, p: &Plan) {
            let mut categories: Vec<&str> = Vec::new();
            let (mut ri, mut ei, mut ii) = (0usize, 0usize, 0usize);
            let nt = p.tests.len().min(r.tests.len());
            for (ti, t) in p.tests.iter().take(nt).enumerate() {
                let run = &mut r.tests[ti];
                write_str(&mut run.name, t.name);
                write_str(&mut run.pluginName, t.name);
                run.result = t.result();
                let cat = category_of(t.name);
                let ci = match categories.iter().position(|c| *c == cat) {
                    Some(i) => i,
                    None => {
                        categories.push(cat);
                        categories.len() - 1
                    }
                };
                run.categoryIndex = ci as u8;
                run.auxData.version = dcgmDiagTestAuxData_version1;
                write_str(&mut run.auxData.data, "");
                let (mut nr, mut ne, mut ni) = (0usize, 0usize, 0usize);
                for o in &t.results {
                    if ri < r.results.len() && nr < run.resultIndices.len() {
                        r.results[ri] = dcgmDiagEntityResult_v1 {
                            entity: gpu_pair(o.gpu),
                            result: o.result,
                            testId: ti as u32,
                        };
                        run.resultIndices[nr] = ri as u16;
                        ri += 1;
                        nr += 1;
                    }
                    if let Some((code, msg)) = &o.error {
                        if ei < r.errors.len() && ne < run.errorIndices.len() {
                            let (severity, category) = recorded_class(*code);
                            let err = &mut r.errors[ei];
                            err.entity = gpu_pair(o.gpu);
                            err.code = *code;
                            err.category = category;
                            err.severity = severity;
                            write_str(&mut err.msg, msg);
                            err.testId = ti as u32;
                            run.errorIndices[ne] = ei as u8;
                            ei += 1;
                            ne += 1;
                        }
                    }
                    if let Some(msg) = &o.info {
                        if ii < r.info.len() && ni < run.infoIndices.len() {
                            let inf = &mut r.info[ii];
                            inf.entity = gpu_pair(o.gpu);
                            write_str(&mut inf.msg, msg);
                            inf.testId = ti as u32;
                            run.infoIndices[ni] = ii as u8;
                            ii += 1;
                            ni += 1;
                        }
                    }
                }
                run.numResults = nr as u16;
                run.numErrors = ne as u8;
                run.numInfo = ni as u8;
            }
            r.numTests = nt as u8;
            let nent = p.gpus.len().min(r.entities.len());
            for (dst, (g, serial)) in r.entities.iter_mut().zip(&p.gpus) {
                dst.entity = gpu_pair(*g);
                write_str(&mut dst.serialNum, serial);
                write_str(&mut dst.skuDeviceId, SKU_DEVICE_ID);
            }
            r.numEntities = nent as u16;
            r.numResults = ri as u16;
            r.numErrors = ei as u8;
            r.numInfo = ii as u8;
            let nc = categories.len().min(r.categories.len());
            for (dst, c) in r.categories.iter_mut().zip(&categories) {
                write_str(dst, c);
            }
            r.numCategories = nc as u8;
            write_str(&mut r.dcgmVersion, &personality::current().to_string());
            write_str(&mut r.driverVersion, &p.driver);
        }
    };
}

fill_current!(fill_v12, dcgmDiagResponse_v12);
fill_current!(fill_v11, dcgmDiagResponse_v11);

/// Position of a test in the legacy per-GPU arrays.
fn legacy_index(test: &str) -> Option<usize> {
    Some(match test {
        "memory" => DCGM_MEMORY_INDEX,
        "diagnostic" => DCGM_DIAGNOSTIC_INDEX,
        "pcie" => DCGM_PCI_INDEX,
        "targeted_stress" => DCGM_TARGETED_STRESS_INDEX,
        "targeted_power" => DCGM_TARGETED_POWER_INDEX,
        "memory_bandwidth" => DCGM_MEMORY_BANDWIDTH_INDEX,
        "memtest" => DCGM_MEMTEST_INDEX,
        "pulse_test" => DCGM_PULSE_TEST_INDEX,
        _ => return None,
    } as usize)
}

fn fill_legacy_result(dst: &mut dcgmDiagTestResult_v3, gpu: u32, o: &EntityOutcome) {
    dst.status = o.result;
    if let Some((code, msg)) = &o.error {
        let (severity, category) = recorded_class(*code);
        let err = &mut dst.error[0];
        write_str(&mut err.msg, msg);
        err.gpuId = gpu as i32;
        err.code = *code;
        err.category = category;
        err.severity = severity;
    }
    write_str(&mut dst.info, o.info.as_deref().unwrap_or(""));
}

/// Fills the legacy v10 layout: software sub-tests at level one, the rest per GPU.
fn fill_v10(r: &mut dcgmDiagResponse_v10, p: &Plan) {
    let software = p.tests.iter().any(|t| t.name == "software");
    r.levelOneTestCount = DCGM_SWTEST_COUNT as u32;
    for res in r.levelOneResults.iter_mut() {
        res.status = DCGM_DIAG_RESULT_NOT_RUN;
        res.error[0].code = DCGM_FR_OK;
        write_str(&mut res.error[0].msg, "");
        write_str(&mut res.info, "");
    }
    if software {
        for res in r.levelOneResults.iter_mut().take(DCGM_SWTEST_COUNT) {
            res.status = DCGM_DIAG_RESULT_PASS;
        }
    }
    for (i, per) in r.perGpuResponses.iter_mut().enumerate() {
        per.gpuId = p.gpus.get(i).map_or(DCGM_MAX_NUM_DEVICES as u32, |g| g.0);
        per.hwDiagnosticReturn = 0;
        for res in per.results.iter_mut() {
            res.status = DCGM_DIAG_RESULT_NOT_RUN;
            res.error[0].code = DCGM_FR_OK;
            write_str(&mut res.error[0].msg, "");
            write_str(&mut res.info, "");
        }
    }
    for t in &p.tests {
        let Some(idx) = legacy_index(t.name) else {
            continue;
        };
        for o in &t.results {
            if let Some(pos) = p.gpus.iter().position(|g| g.0 == o.gpu)
                && pos < r.perGpuResponses.len()
            {
                fill_legacy_result(&mut r.perGpuResponses[pos].results[idx], o.gpu, o);
            }
        }
    }
    r.gpuCount = p.gpus.len().min(r.perGpuResponses.len()) as u32;
    for (i, _) in p.gpus.iter().enumerate().take(DCGM_MAX_NUM_DEVICES) {
        write_str(&mut r.devIds[i], SKU_DEVICE_ID);
    }
    write_serials(
        &mut r.devSerials,
        &p.gpus,
        personality::blanks_unused_diag_serials(),
    );
    r.systemError.code = DCGM_FR_OK;
    write_str(&mut r.systemError.msg, "");
    write_str(&mut r.dcgmVersion, &personality::current().to_string());
    write_str(&mut r.driverVersion, &p.driver);
    for aux in r.auxDataPerTest.iter_mut() {
        aux.version = dcgmDiagTestAuxData_version1;
        write_str(&mut aux.data, "");
    }
}

/// Writes a v10 response's serials: each GPU's at its GPU id (every release's diag module;
/// the SKU ids go in run order). With `blank_from_count` (3.3.9) the slots from the GPU count
/// on are first marked blank (`<<<NULL>>>`), the others left empty.
fn write_serials(
    serials: &mut [[c_char; DCGM_MAX_STR_LENGTH]; DCGM_MAX_NUM_DEVICES],
    gpus: &[(u32, String)],
    blank_from_count: bool,
) {
    for (i, slot) in serials.iter_mut().enumerate() {
        let blank = blank_from_count && i >= gpus.len();
        write_str(slot, if blank { DCGM_STR_BLANK } else { "" });
    }
    for (gpu, serial) in gpus {
        if let Some(slot) = serials.get_mut(*gpu as usize) {
            write_str(slot, serial);
        }
    }
}

/// Checks a response's version before the run: v10 to v12, as far as the release the
/// simulator speaks has them (v11 from 4.0, v12 from 4.2).
///
/// # Safety
///
/// `resp` must be NULL or point to a diagnostic response of the size of the v10–v12 layouts.
unsafe fn check_response(resp: *mut dcgmDiagResponse_v12) -> Result<u32, dcgmReturn_t> {
    // SAFETY: per this function's contract.
    unsafe { version_word(resp, Struct::DiagResponse) }
}

/// Writes a plan in the layout the response's version names.
///
/// # Safety
///
/// As for [`check_response`], with the version already checked.
unsafe fn write_response(resp: *mut dcgmDiagResponse_v12, version: u32, p: &Plan) {
    // SAFETY: the three layouts have the same size; the version word says which one it is.
    unsafe {
        if version == dcgmDiagResponse_version12 {
            fill_v12(&mut *resp, p);
        } else if version == dcgmDiagResponse_version11 {
            fill_v11(&mut *resp.cast::<dcgmDiagResponse_v11>(), p);
        } else {
            fill_v10(&mut *resp.cast::<dcgmDiagResponse_v10>(), p);
        }
    }
}

/// # Safety
///
/// `diagResponse` must be NULL or a versioned `dcgmDiagResponse_v12` (v11 and v10 accepted).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmRunDiagnostic(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    diagLevel: dcgmDiagnosticLevel_t,
    diagResponse: *mut dcgmDiagResponse_v12,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let version = unsafe { check_response(diagResponse) }?;
        let level = match diagLevel {
            DCGM_DIAG_LVL_SHORT => 1,
            DCGM_DIAG_LVL_MED => 2,
            DCGM_DIAG_LVL_LONG => 3,
            DCGM_DIAG_LVL_XLONG => 4,
            _ => return Err(DCGM_ST_BADPARAM),
        };
        let plan = execute(pDcgmHandle, Target::Group(groupId), level_tests(level)?)?;
        // SAFETY: checked above.
        unsafe { write_response(diagResponse, version, &plan) };
        Ok(())
    })
}

/// # Safety
///
/// `response` must be NULL or a versioned `dcgmDiagResponse_v12` (v11 and v10 accepted).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmActionValidate(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    validate: dcgmPolicyValidation_t,
    response: *mut dcgmDiagResponse_v12,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let version = unsafe { check_response(response) }?;
        let plan = execute(pDcgmHandle, Target::Group(groupId), level_tests(validate)?)?;
        // SAFETY: checked above.
        unsafe { write_response(response, version, &plan) };
        Ok(())
    })
}

/// The tests a run request names: levels (`1`…`4`, `short`, `medium`, `long`, `xlong`) or
/// test names; none means the `validate` level.
fn requested_tests(names: &[String], validate: u32) -> Result<Vec<&'static str>, dcgmReturn_t> {
    let mut tests: Vec<&'static str> = Vec::new();
    for n in names {
        let lower = n.trim().to_ascii_lowercase();
        let level = match lower.as_str() {
            "1" | "short" | "quick" => Some(1),
            "2" | "medium" | "med" => Some(2),
            "3" | "long" => Some(3),
            "4" | "xlong" => Some(4),
            _ => None,
        };
        let add: Vec<&'static str> = match level {
            Some(l) => level_tests(l)?,
            None => vec![
                TESTS
                    .iter()
                    .map(|t| t.0)
                    .find(|t| *t == lower)
                    .ok_or(DCGM_ST_BADPARAM)?,
            ],
        };
        for t in add {
            if !tests.contains(&t) {
                tests.push(t);
            }
        }
    }
    if tests.is_empty() {
        tests = level_tests(validate)?;
    }
    // Run order, whatever the request's order.
    tests.sort_by_key(|t| TESTS.iter().position(|x| x.0 == *t));
    Ok(tests)
}

/// # Safety
///
/// `drd` must be NULL or a versioned run request (v7 to v10); `response` as for
/// [`dcgmRunDiagnostic`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmActionValidate_v2(
    pDcgmHandle: dcgmHandle_t,
    drd: *mut dcgmRunDiag_v10,
    response: *mut dcgmDiagResponse_v12,
) -> dcgmReturn_t {
    guard(|| {
        if drd.is_null() {
            return Err(DCGM_ST_BADPARAM);
        }
        // SAFETY: every run-request layout starts with the version word. v7 to v10, as far
        // as the release has them (v9 from 4.0, v10 from 4.1).
        let rv = unsafe { version_word(drd, Struct::RunDiag) }?;
        // SAFETY: per this function's contract.
        let version = unsafe { check_response(response) }?;
        if !personality::accepts_diag_pair(rv, version) {
            return Err(DCGM_ST_VER_MISMATCH);
        }
        // Only members at the same offset in every layout are read (through raw pointers, as
        // the older layouts are smaller), and the entity list only from v9 and v10.
        // SAFETY: the version says the layout, and these members lie within it.
        let (group, validate, names, entity_ids) = unsafe {
            let group = std::ptr::addr_of!((*drd).groupId).read();
            let validate = std::ptr::addr_of!((*drd).validate).read();
            let names: [[c_char; DCGM_MAX_TEST_NAMES_LEN]; DCGM_MAX_TEST_NAMES] =
                std::ptr::addr_of!((*drd).testNames).read();
            let ids = if rv == dcgmRunDiag_version10 || rv == dcgmRunDiag_version9 {
                read_str(&std::ptr::addr_of!((*drd).entityIds).read())
            } else {
                String::new()
            };
            (group, validate, names, ids)
        };
        let names: Vec<String> = names
            .iter()
            .map(|n| read_str(n))
            .filter(|n| !n.is_empty())
            .collect();
        let tests = requested_tests(&names, validate)?;
        let target = if group == DCGM_GROUP_NULL {
            let count = with_engine(pDcgmHandle, |e| Ok(e.machine.gpu_count()))?;
            Target::Gpus(parse_entity_ids(&entity_ids, count)?)
        } else {
            Target::Group(group)
        };
        let plan = execute(pDcgmHandle, target, tests)?;
        // SAFETY: checked above.
        unsafe { write_response(response, version, &plan) };
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmStopDiagnostic(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard(|| {
        with_engine(pDcgmHandle, |e| {
            if e.diag_running {
                e.diag_stop = true;
            }
            Ok(())
        })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmDiagSendHeartbeat(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard_symbol("dcgmDiagSendHeartbeat", || {
        with_engine(pDcgmHandle, |e| module_ok(e, DcgmModuleIdDiag))
    })
}

/// Multi-node diagnostics need several real hosts: not supported.
///
/// # Safety
///
/// The pointers are not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmRunMnDiagnostic(
    pDcgmHandle: dcgmHandle_t,
    drmnd: *const dcgmRunMnDiag_v1,
    response: *mut dcgmMnDiagResponse_v1,
) -> dcgmReturn_t {
    let _ = (pDcgmHandle, drmnd, response);
    guard_symbol("dcgmRunMnDiagnostic", || Err(DCGM_ST_NOT_SUPPORTED))
}

/// Multi-node diagnostics are not supported.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmStopMnDiagnostic(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    let _ = pDcgmHandle;
    guard_symbol("dcgmStopMnDiagnostic", || Err(DCGM_ST_NOT_SUPPORTED))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_add_tests_in_order() {
        assert_eq!(level_tests(1).unwrap(), ["software"]);
        assert_eq!(level_tests(2).unwrap(), ["software", "pcie", "memory"]);
        assert_eq!(level_tests(3).unwrap().len(), 7);
        assert_eq!(level_tests(4).unwrap().last(), Some(&"pulse_test"));
        assert!(level_tests(5).is_err());
        assert_eq!(
            requested_tests(&["memory".into(), "software".into()], 0).unwrap(),
            ["software", "memory"]
        );
        assert_eq!(parse_entity_ids("gpu:1, 3", 8).unwrap(), [1, 3]);
        assert!(parse_entity_ids("9", 8).is_err());
    }

    #[test]
    fn v10_serials_sit_at_their_gpu_id_and_3_3_9_blanks_from_the_count_on() {
        let mut serials = [[0 as c_char; DCGM_MAX_STR_LENGTH]; DCGM_MAX_NUM_DEVICES];
        let gpus = [(1, "S1".to_string()), (3, "S3".to_string())];
        write_serials(&mut serials, &gpus, true);
        let read: Vec<String> = serials.iter().map(|s| read_str(s)).collect();
        assert_eq!(read[..5], ["", "S1", DCGM_STR_BLANK, "S3", DCGM_STR_BLANK]);
        assert!(read[5..].iter().all(|s| s == DCGM_STR_BLANK));
        write_serials(&mut serials, &gpus, false);
        let read: Vec<String> = serials.iter().map(|s| read_str(s)).collect();
        assert_eq!(read[..4], ["", "S1", "", "S3"]);
        assert!(read[4..].iter().all(String::is_empty));
    }
}
