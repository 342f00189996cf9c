//! Shared helpers of the raw-API tests: load the built simulator through `dcgm-sys` exactly as
//! a C client would, one test at a time (the simulator, like libdcgm, is process-global).

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]
#![allow(dead_code)]

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use dcgm_sys::*;

/// The cdylib cargo built next to the test binary's directory.
pub fn sim_path() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let mut dir = exe.parent().expect("exe dir").to_path_buf();
    for _ in 0..3 {
        let cand = dir.join("libdcgm_sim.so");
        if cand.exists() {
            return cand;
        }
        if !dir.pop() {
            break;
        }
    }
    panic!(
        "libdcgm_sim.so not found next to {}: build it with `cargo build -p dcgm-sim`",
        exe.display()
    );
}

pub fn lib() -> &'static DcgmLibrary {
    static LIB: OnceLock<DcgmLibrary> = OnceLock::new();
    LIB.get_or_init(|| DcgmLibrary::open_path(sim_path()).expect("load dcgm-sim"))
}

static SERIAL: Mutex<()> = Mutex::new(());

/// A test's exclusive use of the simulator, configured with `json` (None: the default node).
/// Shuts DCGM down when dropped.
pub struct Session {
    _guard: MutexGuard<'static, ()>,
}

type ConfigureFn = unsafe extern "C" fn(*const std::ffi::c_char) -> dcgmReturn_t;

pub fn configure(json: Option<&str>) -> dcgmReturn_t {
    let lib = libloading::Library::from(
        // SAFETY: the simulator has no initialisers with preconditions; loading it again just
        // bumps its reference count.
        unsafe { libloading::os::unix::Library::new(sim_path()) }.expect("reopen sim"),
    );
    // SAFETY: dcgmSimConfigure has this signature in dcgm-sim.
    let f: libloading::Symbol<ConfigureFn> = unsafe { lib.get(b"dcgmSimConfigure\0") }.unwrap();
    let c = json.map(|j| CString::new(j).unwrap());
    // SAFETY: NULL or a NUL-terminated string.
    unsafe { f(c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())) }
}

impl Session {
    pub fn new(json: Option<&str>) -> Self {
        let g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: no arguments.
        unsafe { lib().dcgmShutdown().unwrap()() };
        assert_eq!(configure(json), DCGM_ST_OK);
        Session { _guard: g }
    }

    /// dcgmInit + dcgmStartEmbedded(mode).
    pub fn embedded(json: Option<&str>, mode: dcgmOperationMode_t) -> (Self, dcgmHandle_t) {
        let s = Self::new(json);
        // SAFETY: no arguments.
        assert_eq!(unsafe { lib().dcgmInit().unwrap()() }, DCGM_ST_OK);
        let mut h = 0;
        // SAFETY: `h` is writable.
        let rc = unsafe { lib().dcgmStartEmbedded().unwrap()(mode, &mut h) };
        assert_eq!(rc, DCGM_ST_OK);
        (s, h)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: no arguments.
        unsafe { lib().dcgmShutdown().unwrap()() };
        configure(None);
    }
}

/// Creates a field group of `fields` named `name`.
pub fn field_group(
    h: dcgmHandle_t,
    name: &str,
    fields: &[u16],
) -> Result<dcgmFieldGrp_t, dcgmReturn_t> {
    let n = CString::new(name).unwrap();
    let mut fg = 0;
    // SAFETY: valid pointers for the call.
    let rc = unsafe {
        lib().dcgmFieldGroupCreate().unwrap()(
            h,
            fields.len() as c_int,
            fields.as_ptr(),
            n.as_ptr(),
            &mut fg,
        )
    };
    if rc == DCGM_ST_OK { Ok(fg) } else { Err(rc) }
}

/// One value delivered to a callback, copied out.
#[derive(Debug, Clone)]
pub struct Got {
    pub group: u32,
    pub id: u32,
    pub field: u16,
    pub field_type: u8,
    pub status: i32,
    pub ts: i64,
    pub i64_: i64,
    pub dbl: f64,
    pub text: String,
}

pub fn copy_value(group: u32, id: u32, v: &dcgmFieldValue_v1) -> Got {
    // SAFETY: reading the union as bytes/ints is always defined for plain data.
    let (i, d, s) = unsafe {
        let bytes: Vec<u8> = v
            .value
            .str_
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        (
            v.value.i64_,
            v.value.dbl,
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    };
    Got {
        group,
        id,
        field: v.fieldId,
        field_type: v.fieldType as u8,
        status: v.status,
        ts: v.ts,
        i64_: i,
        dbl: d,
        text: s,
    }
}

unsafe extern "C" fn collect_entity(
    group: u32,
    id: u32,
    values: *mut dcgmFieldValue_v1,
    n: c_int,
    user: *mut c_void,
) -> c_int {
    // SAFETY: `user` is the Vec passed by `latest`/`since`; `values` holds `n` values.
    let out = unsafe { &mut *(user as *mut Vec<Got>) };
    // SAFETY: as above.
    let vals = unsafe { std::slice::from_raw_parts(values, n as usize) };
    out.extend(vals.iter().map(|v| copy_value(group, id, v)));
    0
}

unsafe extern "C" fn collect_gpu(
    gpu: u32,
    values: *mut dcgmFieldValue_v1,
    n: c_int,
    user: *mut c_void,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { collect_entity(DCGM_FE_GPU, gpu, values, n, user) }
}

/// dcgmGetLatestValues_v2 into a Vec.
pub fn latest(
    h: dcgmHandle_t,
    g: dcgmGpuGrp_t,
    fg: dcgmFieldGrp_t,
) -> Result<Vec<Got>, dcgmReturn_t> {
    let mut out: Vec<Got> = Vec::new();
    // SAFETY: the callback matches the type and `out` outlives the call.
    let rc = unsafe {
        lib().dcgmGetLatestValues_v2().unwrap()(
            h,
            g,
            fg,
            Some(collect_entity),
            (&mut out as *mut Vec<Got>).cast(),
        )
    };
    if rc == DCGM_ST_OK { Ok(out) } else { Err(rc) }
}

/// dcgmGetLatestValues (GPU-only) into a Vec.
pub fn latest_gpu(
    h: dcgmHandle_t,
    g: dcgmGpuGrp_t,
    fg: dcgmFieldGrp_t,
) -> Result<Vec<Got>, dcgmReturn_t> {
    let mut out: Vec<Got> = Vec::new();
    // SAFETY: as in `latest`.
    let rc = unsafe {
        lib().dcgmGetLatestValues().unwrap()(
            h,
            g,
            fg,
            Some(collect_gpu),
            (&mut out as *mut Vec<Got>).cast(),
        )
    };
    if rc == DCGM_ST_OK { Ok(out) } else { Err(rc) }
}

/// dcgmGetValuesSince_v2 into a Vec, returning the next cursor.
pub fn since(
    h: dcgmHandle_t,
    g: dcgmGpuGrp_t,
    fg: dcgmFieldGrp_t,
    since: i64,
) -> Result<(Vec<Got>, i64), dcgmReturn_t> {
    let mut out: Vec<Got> = Vec::new();
    let mut next = 0;
    // SAFETY: as in `latest`; `next` is writable.
    let rc = unsafe {
        lib().dcgmGetValuesSince_v2().unwrap()(
            h,
            g,
            fg,
            since,
            &mut next,
            Some(collect_entity),
            (&mut out as *mut Vec<Got>).cast(),
        )
    };
    if rc == DCGM_ST_OK {
        Ok((out, next))
    } else {
        Err(rc)
    }
}

/// dcgmUpdateAllFields(1).
pub fn update(h: dcgmHandle_t) {
    // SAFETY: plain arguments.
    assert_eq!(
        unsafe { lib().dcgmUpdateAllFields().unwrap()(h, 1) },
        DCGM_ST_OK
    );
}

/// dcgmWatchFields.
pub fn watch(
    h: dcgmHandle_t,
    g: dcgmGpuGrp_t,
    fg: dcgmFieldGrp_t,
    freq_us: i64,
    age_s: f64,
    samples: i32,
) -> dcgmReturn_t {
    // SAFETY: plain arguments.
    unsafe { lib().dcgmWatchFields().unwrap()(h, g, fg, freq_us, age_s, samples) }
}

// The operation modes, the all-GPUs group and the helpers of the scripted-event tests (health,
// policy, diag, stats, device_config, prof, introspect, field_cache).

pub const AUTO: dcgmOperationMode_t = DCGM_OPERATION_MODE_AUTO;
pub const MANUAL: dcgmOperationMode_t = DCGM_OPERATION_MODE_MANUAL;
pub const ALL: dcgmGpuGrp_t = DCGM_GROUP_ALL_GPUS;

pub fn gpu_group(h: dcgmHandle_t, name: &str, gpus: &[u32]) -> dcgmGpuGrp_t {
    let n = CString::new(name).unwrap();
    let mut g = 0;
    // SAFETY: valid pointers.
    let rc = unsafe { lib().dcgmGroupCreate().unwrap()(h, DCGM_GROUP_EMPTY, n.as_ptr(), &mut g) };
    assert_eq!(rc, DCGM_ST_OK);
    for &id in gpus {
        // SAFETY: plain arguments.
        let rc = unsafe { lib().dcgmGroupAddDevice().unwrap()(h, g, id) };
        assert_eq!(rc, DCGM_ST_OK);
    }
    g
}

pub fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

pub fn text(s: &[c_char]) -> String {
    // SAFETY: the library NUL-terminates every string it writes.
    unsafe { CStr::from_ptr(s.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// A job id buffer (`char[64]`).
pub fn job(id: &str) -> [c_char; 64] {
    let mut b = [0 as c_char; 64];
    for (d, s) in b.iter_mut().zip(id.bytes()) {
        *d = s as c_char;
    }
    b
}

/// What a [`Peer`] does with the connections it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manner {
    /// Answers every DCGM request as nv-hostengine does as far as a handshake goes: a DCGM
    /// message header with the request's id and status OK, then the request's own body.
    Dcgm,
    /// The same, each answer this many milliseconds late (a host engine slow to answer).
    LateDcgm(u64),
    /// Reads what comes and never writes a byte (the connection stays open).
    Silent,
    /// Closes the connection at once.
    Closes,
    /// Writes an HTTP error (not DCGM) and keeps the connection open.
    Http,
}

/// A loopback TCP port standing in for what may listen where a host engine is looked for.
/// Dropping it closes the port and every connection it holds, as a process that exits does.
pub struct Peer {
    pub port: u16,
    /// The bytes each accepted connection sent, in order of acceptance.
    pub heard: std::sync::Arc<Mutex<Vec<Vec<u8>>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    held: std::sync::Arc<Mutex<Vec<std::net::TcpStream>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Peer {
    pub fn open(manner: Manner) -> Peer {
        Self::open_at(manner, 0)
    }

    /// At a given port (0: any free one).
    pub fn open_at(manner: Manner, port: u16) -> Peer {
        use std::io::{Read, Write};
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let held: Arc<Mutex<Vec<std::net::TcpStream>>> = Arc::default();
        let heard: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let (flag, keep, log) = (stop.clone(), held.clone(), heard.clone());
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                let Ok((mut s, _)) = listener.accept() else {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    continue;
                };
                s.set_nonblocking(false).unwrap();
                if manner == Manner::Closes {
                    continue;
                }
                if manner == Manner::Http {
                    let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
                }
                keep.lock().unwrap().push(s.try_clone().unwrap());
                let n = {
                    let mut log = log.lock().unwrap();
                    log.push(Vec::new());
                    log.len() - 1
                };
                let log = log.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    let mut got = Vec::new();
                    loop {
                        let k = match s.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(k) => k,
                        };
                        got.extend_from_slice(&buf[..k]);
                        log.lock().unwrap()[n].extend_from_slice(&buf[..k]);
                        let late = match manner {
                            Manner::Dcgm => 0,
                            Manner::LateDcgm(ms) => ms,
                            _ => continue,
                        };
                        // Answer each whole request: its header with status 0, then its body.
                        while got.len() >= 20 {
                            let len = i32::from_le_bytes(got[8..12].try_into().unwrap());
                            let whole = 20 + usize::try_from(len).unwrap_or(0);
                            if got.len() < whole {
                                break;
                            }
                            let mut answer: Vec<u8> = got.drain(..whole).collect();
                            answer[16..20].copy_from_slice(&0i32.to_le_bytes());
                            std::thread::sleep(std::time::Duration::from_millis(late));
                            if s.write_all(&answer).is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        Peer {
            port,
            heard,
            stop,
            held,
            thread: Some(thread),
        }
    }

    /// `127.0.0.1:PORT`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        for s in self.held.lock().unwrap().drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}
