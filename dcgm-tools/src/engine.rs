//! Which DCGM engine a tool talks to when the command line does not say: the local
//! nv-hostengine when one answers, as `dcgmi` does, else DCGM's embedded engine in the process.
//!
//! On a DCGM node an nv-hostengine usually runs (`nvidia-dcgm.service`). Using it is cheaper
//! than starting an engine of our own (on an H200, `query` takes 15 ms through it and 56 ms
//! embedded) and avoids two engines managing the same GPUs.

use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use dcgm::{Handle, HandleBuilder};

/// Names the addresses the automatic choice tries, in order, instead of DCGM's defaults: a
/// comma-separated list of `host`, `host:port` or `unix:///path`; empty, none is tried.
pub const ADDRESS_ENV: &str = "DCGM_HOSTENGINE_ADDRESS";

/// How long the automatic choice waits for a local engine, all addresses together (TCP
/// connects and DCGM's handshake; loading the library is not counted). A refused port or a
/// missing socket answers at once; this bounds what a listener that never answers costs.
pub const PROBE_DEADLINE: Duration = Duration::from_millis(300);

/// Where an nv-hostengine listens when started without options, as `dcgmi` looks for it: its
/// TCP port (`DCGM_HE_PORT_NUMBER`) on loopback, its default bind address; then DCGM's default
/// unix socket (`DCGM_DEFAULT_SOCKET_PATH`), for an engine started with `-d` and no TCP port.
pub fn default_addresses() -> Vec<String> {
    vec![
        format!("127.0.0.1:{}", dcgm::raw::sys::DCGM_HE_PORT_NUMBER),
        format!(
            "{}{}",
            dcgm::raw::sys::DCGM_UNIX_SOCKET_PREFIX,
            dcgm::raw::sys::DCGM_DEFAULT_SOCKET_PATH
        ),
    ]
}

/// The addresses to try: those of [`ADDRESS_ENV`] when it is set, else [`default_addresses`].
pub fn addresses() -> Vec<String> {
    match std::env::var(ADDRESS_ENV) {
        Ok(list) => list
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
            .collect(),
        Err(_) => default_addresses(),
    }
}

/// What the automatic choice found.
pub enum Found {
    /// A host engine answered: its address and the handle connected to it.
    Engine(String, Handle),
    /// None answered: why not, one `address: reason` per address tried.
    Nothing(Vec<String>),
}

/// Tries each of `addresses` in turn, all within one [`PROBE_DEADLINE`], and connects to the
/// first nv-hostengine that answers. Nothing is loaded or initialised unless something
/// listens: a missing socket or a refused port costs a system call. The socket is checked
/// first because libdcgm's own connect retries a refused port until its timeout (5 s at
/// `--connect-timeout`'s default, measured with libdcgm 4.6.0).
pub fn find(builder: &HandleBuilder, addresses: &[String]) -> Found {
    let mut deadline = Instant::now() + PROBE_DEADLINE;
    let mut why = Vec::new();
    for address in addresses {
        let found = listens(address, deadline).and_then(|()| {
            // The library is loaded outside the deadline: the tool needs it either way.
            let t0 = Instant::now();
            builder.check_library().map_err(|e| e.to_string())?;
            deadline += t0.elapsed();
            handshake(builder, address, deadline)
        });
        match found {
            Ok(handle) => return Found::Engine(address.clone(), handle),
            Err(reason) => why.push(format!("{address}: {reason}")),
        }
    }
    Found::Nothing(why)
}

/// The sentence for a probe whose time ran out.
fn too_late(what: &str) -> String {
    format!(
        "{what} within the probe's {} ms",
        PROBE_DEADLINE.as_millis()
    )
}

/// Whether something accepts connections at `address` before `deadline`. Addresses that
/// cannot be checked at the socket level (`vsock://`) are left to the handshake.
fn listens(address: &str, deadline: Instant) -> Result<(), String> {
    if let Some(path) = address.strip_prefix(dcgm::raw::sys::DCGM_UNIX_SOCKET_PREFIX) {
        return UnixStream::connect(path)
            .map(drop)
            .map_err(|e| e.to_string());
    }
    if address.starts_with(dcgm::raw::sys::DCGM_VSOCK_SOCKET_PREFIX) {
        return Ok(());
    }
    let hostport = address
        .strip_prefix(dcgm::raw::sys::DCGM_TCP_SOCKET_PREFIX)
        .unwrap_or(address);
    let has_port = hostport
        .rsplit_once(':')
        .is_some_and(|(h, p)| !h.is_empty() && !h.ends_with(':') && p.parse::<u16>().is_ok());
    let with_port = if has_port {
        hostport.to_string()
    } else {
        format!("{hostport}:{}", dcgm::raw::sys::DCGM_HE_PORT_NUMBER)
    };
    let mut last = String::from("the name resolves to no address");
    for a in with_port.to_socket_addrs().map_err(|e| e.to_string())? {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(too_late("no TCP answer"));
        }
        match TcpStream::connect_timeout(&a, left) {
            Ok(_) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

/// DCGM's connection to `address`, on a thread of its own and waited for until `deadline`
/// (something that accepts TCP connections and never answers would keep libdcgm's handshake
/// waiting).
fn handshake(builder: &HandleBuilder, address: &str, deadline: Instant) -> Result<Handle, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(too_late("not tried"));
    }
    let builder = builder.clone().timeout(left);
    let owned = address.to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("probe".into())
        .spawn(move || {
            // The receiver is gone only once the deadline has passed: the handle, if one
            // comes, is dropped (disconnected) here.
            let _ = tx.send(builder.connect(&owned));
        })
        .map_err(|e| format!("cannot start the probe thread: {e}"))?;
    match rx.recv_timeout(left) {
        Ok(connected) => connected.map_err(|e| match e {
            // The reason is said after the address already.
            dcgm::Error::ConnectFailed { reason, .. } => reason
                .strip_prefix(&format!("{address}: "))
                .map_or(reason.clone(), str::to_owned),
            other => other.to_string(),
        }),
        Err(_) => Err(too_late("accepts connections but no DCGM answer came")),
    }
}
