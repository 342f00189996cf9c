//! Connections as libdcgm 4.6.0 makes them: a host engine exists where something listens (a
//! loopback TCP port, a unix socket) and answers DCGM's handshake, or at a configured address;
//! a handle whose host-engine process went away is no longer valid; `timeoutMs` bounds the
//! wait for one that is not there; a connection's groups go with it unless it asked to
//! persist; the host engine's environment is the listening process's. (A listener that is no
//! host engine: tests/silent_listener.rs.)

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::ffi::{CString, c_int};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Manner, Peer, Session, field_group, lib};
use dcgm_sim::testing::hostengine_running;
use dcgm_sys::*;

fn init() {
    // SAFETY: no arguments.
    assert_eq!(unsafe { lib().dcgmInit().unwrap()() }, DCGM_ST_OK);
}

fn connect_v3(s: &str, timeout_ms: u32, persist: bool) -> Result<dcgmHandle_t, dcgmReturn_t> {
    let c = CString::new(s).unwrap();
    let mut p = dcgmConnectV3Params_v1::new_versioned();
    p.timeoutMs = timeout_ms;
    p.persistAfterDisconnect = u32::from(persist);
    let mut h = 0;
    // SAFETY: valid pointers.
    let rc = unsafe { lib().dcgmConnect_v3().unwrap()(c.as_ptr(), &mut p, &mut h) };
    if rc == DCGM_ST_OK { Ok(h) } else { Err(rc) }
}

fn connect_unix_v2(path: &Path) -> Result<dcgmHandle_t, dcgmReturn_t> {
    let c = CString::new(path.to_str().unwrap()).unwrap();
    let mut p = dcgmConnectV2Params_v2::new_versioned();
    p.addressIsUnixSocket = 1;
    p.timeoutMs = 2000;
    let mut h = 0;
    // SAFETY: valid pointers.
    let rc = unsafe { lib().dcgmConnect_v2().unwrap()(c.as_ptr(), &mut p, &mut h) };
    if rc == DCGM_ST_OK { Ok(h) } else { Err(rc) }
}

fn devices(h: dcgmHandle_t) -> dcgmReturn_t {
    let mut ids = [0u32; DCGM_MAX_NUM_DEVICES];
    let mut n: c_int = 0;
    // SAFETY: a buffer of the documented size.
    unsafe { lib().dcgmGetAllDevices().unwrap()(h, ids.as_mut_ptr(), &mut n) }
}

fn disconnect(h: dcgmHandle_t) {
    // SAFETY: plain argument.
    assert_eq!(unsafe { lib().dcgmDisconnect().unwrap()(h) }, DCGM_ST_OK);
}

fn env_var(h: dcgmHandle_t, name: &str) -> (dcgmReturn_t, dcgmReturn_t, String) {
    let mut info = dcgmEnvVarInfo_v1::new_versioned();
    for (d, s) in info.envVarName.iter_mut().zip(name.bytes()) {
        *d = s as _;
    }
    // SAFETY: a versioned struct.
    let rc = unsafe { lib().dcgmHostengineEnvironmentVariableInfo().unwrap()(h, &mut info) };
    let value: Vec<u8> = info
        .envVarValue
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    (rc, info.ret, String::from_utf8(value).unwrap())
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dcgm-sim-conn-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Another process listening on a unix socket and answering DCGM's handshake (standing in for
/// nv-hostengine: each request is answered with its own header, status 0, and its body), with
/// `CUDA_VISIBLE_DEVICES` in its environment; killed when dropped.
struct Listener(Child);

impl Listener {
    fn start(path: &Path) -> Option<Listener> {
        let script = "import socket,struct,sys,threading\n\
                      def serve(c):\n\
                      \x20   got=b''\n\
                      \x20   while True:\n\
                      \x20       d=c.recv(4096)\n\
                      \x20       if not d: return\n\
                      \x20       got+=d\n\
                      \x20       while len(got)>=20 and len(got)>=20+struct.unpack('<i',got[8:12])[0]:\n\
                      \x20           n=20+struct.unpack('<i',got[8:12])[0]\n\
                      \x20           c.sendall(got[:16]+bytes(4)+got[20:n]); got=got[n:]\n\
                      s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(16)\n\
                      while True: threading.Thread(target=serve,args=(s.accept()[0],),daemon=True).start()\n";
        let child = Command::new("python3")
            .args(["-c", script])
            .arg(path)
            .env("CUDA_VISIBLE_DEVICES", "0,1,2")
            .stdin(Stdio::null())
            .spawn()
            .ok()?;
        let t0 = Instant::now();
        while !path.exists() && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100));
        Some(Listener(child))
    }

    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.kill();
    }
}

#[test]
fn a_dcgm_speaking_listener_at_a_loopback_port_is_a_host_engine_until_it_goes_away() {
    let _s = Session::new(None);
    init();
    let l = Peer::open(Manner::Dcgm);
    let port = l.port;
    let h = connect_v3(&format!("tcp://127.0.0.1:{port}"), 1000, false).unwrap();
    // `localhost` is the same address: the same engine.
    let h2 = connect_v3(&format!("localhost:{port}"), 1000, false).unwrap();
    assert_eq!(devices(h), DCGM_ST_OK);
    assert_eq!(devices(h2), DCGM_ST_OK);
    drop(l);
    assert_eq!(devices(h), DCGM_ST_CONNECTION_NOT_VALID);
    assert_eq!(devices(h), DCGM_ST_CONNECTION_NOT_VALID);
    assert_eq!(devices(h2), DCGM_ST_CONNECTION_NOT_VALID);
    disconnect(h);
    disconnect(h2);
}

#[test]
fn nothing_listening_and_no_host_engine_starting_is_answered_at_once() {
    let _s = Session::new(None);
    init();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // libdcgm would retry until the timeout; with no nv-hostengine process on the machine
    // (none starting up) the simulator answers at once.
    // (Other programs may run a real nv-hostengine here meanwhile: then it is waited for.)
    let before = hostengine_running();
    let t0 = Instant::now();
    assert_eq!(
        connect_v3(&format!("127.0.0.1:{port}"), 3000, false),
        Err(DCGM_ST_CONNECTION_NOT_VALID)
    );
    let waited = t0.elapsed();
    if !before && !hostengine_running() {
        assert!(waited < Duration::from_secs(1), "{waited:?}");
    }
    // A remote address is never probed: only configured ones answer.
    assert_eq!(
        connect_v3("10.1.2.3", 300, false),
        Err(DCGM_ST_CONNECTION_NOT_VALID)
    );
    // Strings libdcgm cannot parse.
    for bad in ["ftp://x", "h:0", "a:b:1", "tcp://"] {
        assert_eq!(connect_v3(bad, 100, false), Err(DCGM_ST_BADPARAM), "{bad}");
    }
    // Configured addresses answer at once with nothing listening.
    let t0 = Instant::now();
    let h = connect_v3("unix:///tmp/nv-hostengine", 0, false).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(1));
    assert_eq!(devices(h), DCGM_ST_OK);
    // NULL handle; the embedded handle survives dcgmDisconnect.
    assert_eq!(devices(0), DCGM_ST_BADPARAM);
    let mut e = 0;
    // SAFETY: writable handle.
    let rc = unsafe { lib().dcgmStartEmbedded().unwrap()(DCGM_OPERATION_MODE_AUTO, &mut e) };
    assert_eq!(rc, DCGM_ST_OK);
    disconnect(e);
    assert_eq!(devices(e), DCGM_ST_OK);
}

#[test]
fn a_host_engine_process_reports_its_environment_and_its_death() {
    let dir = scratch("env");
    let sock = dir.join("he.sock");
    let Some(mut he) = Listener::start(&sock) else {
        // Reported as a skip to scripts/test.sh (the line dcgm::testing::skip writes).
        use std::io::Write;
        let _ = writeln!(
            std::io::stdout().lock(),
            "SKIPPED[test] a_host_engine_process_reports_its_environment_and_its_death: python3 is not available"
        );
        return;
    };
    let _s = Session::new(None);
    init();
    let h = connect_unix_v2(&sock).unwrap();
    assert_eq!(
        env_var(h, "CUDA_VISIBLE_DEVICES"),
        (DCGM_ST_OK, DCGM_ST_OK, "0,1,2".to_string())
    );
    assert_eq!(env_var(h, "DCGM_DIAG_REMOVED").1, DCGM_ST_NOT_CONFIGURED);
    assert_eq!(
        env_var(h, "PATH"),
        (DCGM_ST_OK, DCGM_ST_BADPARAM, String::new())
    );
    assert_eq!(env_var(h, "").1, DCGM_ST_BADPARAM);
    he.kill();
    assert_eq!(devices(h), DCGM_ST_CONNECTION_NOT_VALID);
    assert_eq!(
        env_var(h, "CUDA_VISIBLE_DEVICES").0,
        DCGM_ST_CONNECTION_NOT_VALID
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn group(h: dcgmHandle_t, name: &str) -> dcgmGpuGrp_t {
    let n = CString::new(name).unwrap();
    let mut g = 0;
    // SAFETY: valid pointers.
    let rc = unsafe { lib().dcgmGroupCreate().unwrap()(h, DCGM_GROUP_EMPTY, n.as_ptr(), &mut g) };
    assert_eq!(rc, DCGM_ST_OK);
    g
}

fn group_info(h: dcgmHandle_t, g: dcgmGpuGrp_t) -> dcgmReturn_t {
    let mut info = dcgmGroupInfo_v3::boxed_versioned();
    // SAFETY: a versioned struct.
    unsafe { lib().dcgmGroupGetInfo().unwrap()(h, g, &mut *info) }
}

fn field_group_info(h: dcgmHandle_t, fg: dcgmFieldGrp_t) -> dcgmReturn_t {
    let mut info = dcgmFieldGroupInfo_v1::new_versioned();
    info.fieldGroupId = fg;
    // SAFETY: a versioned struct.
    unsafe { lib().dcgmFieldGroupGetInfo().unwrap()(h, &mut info) }
}

#[test]
fn a_connection_takes_its_groups_with_it_unless_it_persists() {
    let _s = Session::new(None);
    init();
    let keeper = connect_v3("localhost", 0, false).unwrap();
    let leaver = connect_v3("127.0.0.1", 0, false).unwrap();
    let stayer = connect_v3("127.0.0.1:5555", 0, true).unwrap();
    let g = group(leaver, "leaving");
    let fg = field_group(leaver, "leaving", &[DCGM_FI_DEV_GPU_TEMP_CELSIUS]).unwrap();
    let kept = group(stayer, "staying");
    let kept_fg = field_group(stayer, "staying", &[DCGM_FI_DEV_GPU_TEMP_CELSIUS]).unwrap();
    let mine = group(keeper, "mine");
    assert_eq!(group_info(keeper, g), DCGM_ST_OK);
    disconnect(leaver);
    disconnect(stayer);
    assert_eq!(group_info(keeper, g), DCGM_ST_NOT_CONFIGURED);
    assert_eq!(field_group_info(keeper, fg), DCGM_ST_NO_DATA);
    assert_eq!(group_info(keeper, kept), DCGM_ST_OK);
    assert_eq!(field_group_info(keeper, kept_fg), DCGM_ST_OK);
    assert_eq!(group_info(keeper, mine), DCGM_ST_OK);
    assert_eq!(devices(leaver), DCGM_ST_CONNECTION_NOT_VALID);
}
