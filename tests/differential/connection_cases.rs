//! Connections without a host engine: a NULL or unknown handle, connection strings libdcgm
//! refuses, addresses nothing listens at (short timeouts), `dcgmDisconnect` of the embedded
//! handle, and what the embedded engine answers about its environment.

use std::ffi::{CString, c_int};

use dcgm_sys::*;

use crate::battery::Battery;

/// Calls a library function if the library has it (as the battery's own `call!`).
macro_rules! call {
    ($b:expr, $name:ident ( $($arg:expr),* $(,)? )) => {
        match $b.lib.$name() {
            // SAFETY: every argument is a valid pointer to a live, correctly versioned value
            // of the C type, or a plain value (wrong values on purpose, never dangling).
            Ok(f) => Some(unsafe { f($($arg),*) }),
            Err(_) => None,
        }
    };
}

impl Battery<'_> {
    fn devices_on(&mut self, id: &str, h: dcgmHandle_t) {
        let mut ids = [0u32; DCGM_MAX_NUM_DEVICES];
        let mut n: c_int = 0;
        let rc = call!(self, dcgmGetAllDevices(h, ids.as_mut_ptr(), &mut n));
        let shape = if rc == Some(DCGM_ST_OK) {
            format!("n={n}")
        } else {
            String::new()
        };
        self.rec(format!("connection/{id}"), rc, shape);
    }

    fn connect_v2(&mut self, id: &str, addr: &str, unix: bool, timeout_ms: u32) {
        let a = CString::new(addr).unwrap();
        let mut p = dcgmConnectV2Params_v2::new_versioned();
        p.addressIsUnixSocket = u32::from(unix);
        p.timeoutMs = timeout_ms;
        let mut h: dcgmHandle_t = 0;
        let rc = call!(self, dcgmConnect_v2(a.as_ptr(), &mut p, &mut h));
        self.rec(format!("connection/{id}"), rc, "");
    }

    fn connect_v3(&mut self, id: &str, addr: &str, timeout_ms: u32) {
        let a = CString::new(addr).unwrap();
        let mut p = dcgmConnectV3Params_v1::new_versioned();
        p.timeoutMs = timeout_ms;
        let mut h: dcgmHandle_t = 0;
        let rc = call!(self, dcgmConnect_v3(a.as_ptr(), &mut p, &mut h));
        self.rec(format!("connection/{id}"), rc, "");
    }

    fn env_var(&mut self, id: &str, name: &str, version: u32) {
        let mut info = dcgmEnvVarInfo_v1::new_versioned();
        info.version = version;
        for (d, s) in info.envVarName.iter_mut().zip(name.bytes()) {
            *d = s as _;
        }
        let rc = call!(
            self,
            dcgmHostengineEnvironmentVariableInfo(self.h, &mut info)
        );
        self.rec(
            format!("connection/env_var/{id}"),
            rc,
            format!("ret={}", info.ret),
        );
    }

    /// The connection cases (the embedded handle stays usable after them).
    pub fn connection_cases(&mut self) {
        self.devices_on("null_handle", 0);
        self.devices_on("unknown_handle", 12_345);
        let mut info = dcgmGroupInfo_v3::boxed_versioned();
        let rc = call!(
            self,
            dcgmGroupGetInfo(0, DCGM_GROUP_ALL_GPUS as dcgmGpuGrp_t, &mut *info)
        );
        self.rec("connection/null_handle_group_info", rc, "");

        self.connect_v2("v2_empty_address", "", false, 100);
        self.connect_v2(
            "v2_unix_scheme_as_tcp",
            "unix:///tmp/nv-hostengine",
            false,
            100,
        );
        self.connect_v2("v2_host_name_port", "a:b:1", false, 100);
        self.connect_v2("v2_port_zero", "127.0.0.1:0", false, 100);
        self.connect_v2("v2_port_too_big", "127.0.0.1:70000", false, 100);
        self.connect_v2("v2_nothing_at_loopback", "127.0.0.1:1", false, 100);
        self.connect_v2("v2_no_such_socket", "/nonexistent-dir/he.sock", true, 100);
        self.connect_v3("v3_unknown_scheme", "http://127.0.0.1", 100);
        self.connect_v3("v3_tcp_without_host", "tcp://", 100);
        self.connect_v3("v3_empty_ipv6", "[]:5555", 100);
        self.connect_v3("v3_nothing_at_ipv4_loopback", "tcp://127.0.0.1:1", 100);
        self.connect_v3("v3_no_such_socket", "unix:///nonexistent-dir/he.sock", 100);

        self.env_var("not_given_out", "PATH", dcgmEnvVarInfo_version1);
        self.env_var("empty_name", "", dcgmEnvVarInfo_version1);
        self.env_var("bad_version", "CUDA_VISIBLE_DEVICES", 999);

        let h = self.h;
        let rc = call!(self, dcgmDisconnect(h));
        self.rec("connection/disconnect_embedded", rc, "");
        self.devices_on("embedded_after_disconnect", h);
        let rc = call!(self, dcgmDisconnect(12_345));
        self.rec("connection/disconnect_unknown", rc, "");
    }
}
