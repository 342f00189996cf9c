//! Where a host engine is: DCGM connection strings, and the real host engines behind them.
//!
//! Something that accepts a connection is not yet a host engine. The simulator decides as
//! libdcgm 4.6.0 does, by DCGM's handshake: a host engine says nothing until the client speaks
//! (measured with the real nv-hostengine: a connection that sends nothing hears nothing), and
//! answers the client's first request, the host-engine version that libdcgm asks for before
//! anything else, within a millisecond. So the simulator sends that same request and waits for
//! an answer that starts with DCGM's message header ([`Link::handshake`]). Only a peer that
//! answers is a host engine.
//!
//! For the addresses it can check locally (TCP on a loopback address, unix sockets) it
//! connects, keeps that connection open for as long as the client's handle lives, and reads it
//! without blocking on each call: end of stream means the host-engine process is gone (killed
//! or terminated), and the handle is no longer valid. The listening socket's inode (from
//! `/proc/net`) tells one incarnation of a host engine from the next at the same address, and
//! the process that holds it is the host engine whose environment
//! `dcgmHostengineEnvironmentVariableInfo` reports.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use dcgm_sys::{DCGM_HE_PORT_NUMBER, dcgmVersionInfo_v2, dcgmVersionInfo_version2};

/// `sizeof(sockaddr_un::sun_path)` on Linux: the longest unix socket path DCGM accepts.
const SUN_PATH_MAX: usize = 108;

/// A parsed DCGM connection string (`tcp://host[:port]`, `unix:///path`, `vsock://cid:port`;
/// no scheme means TCP).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A TCP host (name or address, IPv6 without brackets) and port.
    Tcp {
        /// Host name or address.
        host: String,
        /// Port (5555 when the string names none).
        port: u16,
    },
    /// A unix domain socket path.
    Unix(PathBuf),
    /// A vsock context id and port.
    Vsock {
        /// Context id (`-1`: any).
        cid: u32,
        /// Port.
        port: u32,
    },
}

fn strip_scheme<'a>(s: &'a str, scheme: &str) -> Option<&'a str> {
    s.get(..scheme.len())
        .filter(|p| p.eq_ignore_ascii_case(scheme))
        .map(|_| &s[scheme.len()..])
}

/// Parses a connection string with the rules of libdcgm 4.6.0; `None` where it answers
/// `DCGM_ST_BADPARAM` (an empty rest, an unknown scheme, a bad port, `host:name:port`, a path
/// longer than a socket address holds).
pub fn parse_endpoint(uri: &str) -> Option<Endpoint> {
    let (scheme, rest) = match uri.find("://") {
        Some(i) => (&uri[..i], &uri[i + 3..]),
        None => ("tcp", uri),
    };
    if rest.is_empty() {
        return None;
    }
    if strip_scheme(scheme, "unix").is_some() {
        return (rest.len() <= SUN_PATH_MAX).then(|| Endpoint::Unix(PathBuf::from(rest)));
    }
    if strip_scheme(scheme, "vsock").is_some() {
        let (cid, port) = rest.split_once(':')?;
        if cid.is_empty() || port.is_empty() {
            return None;
        }
        let cid = if cid == "-1" {
            u32::MAX
        } else {
            cid.parse().ok()?
        };
        let port: u16 = port.parse().ok()?;
        return (port != 0).then_some(Endpoint::Vsock {
            cid,
            port: u32::from(port),
        });
    }
    strip_scheme(scheme, "tcp")?;
    let (host, port) = match rest.rfind(':') {
        Some(i) if i == rest.len() - 1 => return None,
        None => (rest, None),
        Some(_) if rest.starts_with('[') && rest.ends_with(']') => (rest, None),
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
    };
    let host = if host.starts_with('[') && host.ends_with(']') {
        if host.len() < 4 {
            return None;
        }
        &host[1..host.len() - 1]
    } else if host.contains(':') {
        return None;
    } else {
        host
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        None => DCGM_HE_PORT_NUMBER,
        Some(p) => p.parse::<u16>().ok().filter(|&p| p != 0)?,
    };
    Some(Endpoint::Tcp {
        host: host.to_string(),
        port,
    })
}

impl Endpoint {
    /// The simulator's name for the host engine here: `127.0.0.1:5555` (`localhost` is
    /// 127.0.0.1), `[::1]:5545`, `unix:///path`, `vsock://cid:port`.
    pub fn key(&self) -> String {
        match self {
            Endpoint::Tcp { host, port } => {
                let host = if host.eq_ignore_ascii_case("localhost") {
                    "127.0.0.1"
                } else {
                    host
                };
                if host.contains(':') {
                    format!("[{host}]:{port}")
                } else {
                    format!("{host}:{port}")
                }
            }
            Endpoint::Unix(p) => format!("unix://{}", p.display()),
            Endpoint::Vsock { cid, port } => format!("vsock://{cid}:{port}"),
        }
    }

    /// Whether a listener here can be checked from this machine: a unix socket, or TCP on
    /// `localhost` or a loopback address. (A connect to a remote address may be answered by
    /// something that is no host engine, such as a proxy, so those are never probed.)
    pub fn is_local(&self) -> bool {
        match self {
            Endpoint::Unix(_) => true,
            Endpoint::Tcp { host, .. } => {
                host.eq_ignore_ascii_case("localhost")
                    || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
            }
            Endpoint::Vsock { .. } => false,
        }
    }
}

/// DCGM's wire protocol, as much of it as telling a host engine from any other listener takes
/// (DCGM 4.6.0's `DcgmProtocol.h`, `dcgm_module_structs.h` and `dcgm_core_structs.h`; checked
/// against the bytes the real libdcgm sends and the real nv-hostengine answers).
pub mod wire {
    use super::{dcgmVersionInfo_v2, dcgmVersionInfo_version2};

    /// `DCGM_PROTO_MAGIC`: the first word of every message, either way.
    pub const MAGIC: u32 = 0xadbc_bcad;
    /// `sizeof(dcgm_message_header_t)`: magic, request id, body length, type, status (packed
    /// 32-bit words, little-endian on the machines DCGM runs on).
    pub const HEADER_LEN: usize = 20;
    /// `DCGM_MSG_MODULE_COMMAND`.
    pub const MSG_MODULE_COMMAND: u32 = 0x0300;
    /// `DCGM_CORE_SR_HOSTENGINE_VERSION`: the core module's version request.
    const CORE_SR_HOSTENGINE_VERSION: u32 = 10;
    /// `DcgmModuleIdCore`.
    const MODULE_CORE: u32 = 0;
    /// `sizeof(dcgm_module_command_header_t)`.
    const MODULE_HEADER_LEN: usize = 24;
    /// The request id the simulator's handshake uses (libdcgm's first request has id 1 too).
    pub const REQUEST_ID: u32 = 1;

    /// The host-engine version request libdcgm 4.6.0 sends first on a new connection
    /// (`dcgm_core_msg_hostengine_version_v1`: a module command header, then a versioned
    /// `dcgmVersionInfo_v2` for the answer), with its message header: 560 bytes.
    pub fn version_request() -> Vec<u8> {
        let body_len = MODULE_HEADER_LEN + std::mem::size_of::<dcgmVersionInfo_v2>();
        let body = body_len as u32;
        let mut m = Vec::with_capacity(HEADER_LEN + body_len);
        for w in [MAGIC, REQUEST_ID, body, MSG_MODULE_COMMAND, 0] {
            m.extend_from_slice(&w.to_le_bytes());
        }
        // length, module, sub-command, connection id, request id, version of the message.
        for w in [
            body,
            MODULE_CORE,
            CORE_SR_HOSTENGINE_VERSION,
            0,
            0,
            body | (1 << 24),
        ] {
            m.extend_from_slice(&w.to_le_bytes());
        }
        m.extend_from_slice(&dcgmVersionInfo_version2.to_le_bytes());
        m.resize(HEADER_LEN + body_len, 0);
        m
    }

    /// Whether `header` (a whole message header's bytes) is DCGM's answer to the handshake: its
    /// magic and the request's id.
    pub fn is_answer(header: &[u8]) -> bool {
        let word = |i: usize| {
            header
                .get(4 * i..4 * i + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        header.len() >= HEADER_LEN && word(0) == Some(MAGIC) && word(1) == Some(REQUEST_ID)
    }
}

/// What a peer made of the handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// It answered with DCGM's message header: a host engine.
    Dcgm,
    /// Nothing yet (it may still answer).
    NotYet,
    /// It closed the connection, reset it, or sent something that is not DCGM's answer (the
    /// real library drops a connection whose first bytes are not DCGM's header).
    NotDcgm,
}

#[derive(Debug)]
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

/// An open connection to a real listener: the host engine a simulated handle stands for, once
/// it has answered the handshake.
#[derive(Debug)]
pub struct Link {
    stream: Stream,
    /// Inode of the listening socket (one incarnation of the host engine), where `/proc/net`
    /// shows it.
    pub listener: Option<u64>,
    /// The answer's header as far as it has come (read no further: the rest of the answer is
    /// dropped by [`Link::alive`]).
    heard: Mutex<Vec<u8>>,
}

impl Link {
    /// Connects to a local endpoint within `timeout`; an error when nothing accepts there.
    pub fn connect(ep: &Endpoint, timeout: Duration) -> std::io::Result<Link> {
        let timeout = timeout.max(Duration::from_millis(1));
        match ep {
            Endpoint::Unix(path) => {
                let s = UnixStream::connect(path)?;
                s.set_nonblocking(true)?;
                Ok(Link {
                    listener: unix_listener_inode(path),
                    stream: Stream::Unix(s),
                    heard: Mutex::default(),
                })
            }
            Endpoint::Tcp { host, port } => {
                let mut last = std::io::Error::new(ErrorKind::NotFound, "no address");
                for addr in (host.as_str(), *port).to_socket_addrs()? {
                    match TcpStream::connect_timeout(&addr, timeout) {
                        Ok(s) => {
                            s.set_nonblocking(true)?;
                            let peer = s.peer_addr().unwrap_or(addr);
                            return Ok(Link {
                                listener: tcp_listener_inode(peer),
                                stream: Stream::Tcp(s),
                                heard: Mutex::default(),
                            });
                        }
                        Err(e) => last = e,
                    }
                }
                Err(last)
            }
            Endpoint::Vsock { .. } => Err(std::io::Error::new(
                ErrorKind::Unsupported,
                "vsock endpoints are not probed",
            )),
        }
    }

    /// DCGM's handshake: sends the version request libdcgm sends first ([`wire::version_request`])
    /// and waits at most `wait` for the answer's header ([`Link::answer`]).
    pub fn handshake(&self, wait: Duration) -> Answer {
        match self.send(&wire::version_request()) {
            Ok(()) => self.answer(wait),
            Err(_) => Answer::NotDcgm,
        }
    }

    /// Whether the peer has answered the handshake, waiting at most `wait` for the rest of the
    /// answer's header (`Duration::ZERO`: only what has already come).
    pub fn answer(&self, wait: Duration) -> Answer {
        let deadline = Instant::now() + wait;
        let mut heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        let mut buf = [0u8; wire::HEADER_LEN];
        while heard.len() < wire::HEADER_LEN {
            let want = wire::HEADER_LEN - heard.len();
            let left = deadline.saturating_duration_since(Instant::now());
            match self.read_within(&mut buf[..want], left) {
                Ok(0) => return Answer::NotDcgm,
                Ok(n) => heard.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Answer::NotYet;
                }
                Err(_) => return Answer::NotDcgm,
            }
        }
        if wire::is_answer(&heard) {
            Answer::Dcgm
        } else {
            Answer::NotDcgm
        }
    }

    /// One read, within `left` (zero: without blocking). The stream is left non-blocking.
    fn read_within(&self, buf: &mut [u8], left: Duration) -> std::io::Result<usize> {
        let blocking = !left.is_zero();
        match &self.stream {
            Stream::Tcp(s) => {
                if blocking {
                    s.set_nonblocking(false)?;
                    s.set_read_timeout(Some(left))?;
                }
                let r = (&*s).read(buf);
                s.set_nonblocking(true)?;
                r
            }
            Stream::Unix(s) => {
                if blocking {
                    s.set_nonblocking(false)?;
                    s.set_read_timeout(Some(left))?;
                }
                let r = (&*s).read(buf);
                s.set_nonblocking(true)?;
                r
            }
        }
    }

    /// Writes `bytes` whole (within a second), without raising `SIGPIPE` where the peer has
    /// closed: the simulator runs in its client's process, which may not ignore that signal.
    /// std's `TcpStream` sends with `MSG_NOSIGNAL`; a unix stream's own `write` does not, so
    /// it is written through a `TcpStream` over a duplicate of its descriptor (`send(2)` takes
    /// any stream socket; the duplicate is closed after).
    fn send(&self, bytes: &[u8]) -> std::io::Result<()> {
        let fd: OwnedFd = match &self.stream {
            Stream::Tcp(s) => s.try_clone()?.into(),
            Stream::Unix(s) => s.try_clone()?.into(),
        };
        let mut s = TcpStream::from(fd);
        // The descriptors share their file status: blocking while writing, as before after.
        s.set_nonblocking(false)?;
        s.set_write_timeout(Some(Duration::from_secs(1)))?;
        let r = s.write_all(bytes);
        s.set_nonblocking(true)?;
        r
    }

    /// Whether the host engine still holds its end: reads (and drops) whatever it sent without
    /// blocking; end of stream or a reset means the process closed it or is gone.
    pub fn alive(&self) -> bool {
        let mut buf = [0u8; 512];
        loop {
            let r = match &self.stream {
                Stream::Tcp(s) => (&*s).read(&mut buf),
                Stream::Unix(s) => (&*s).read(&mut buf),
            };
            match r {
                Ok(0) => return false,
                Ok(_) => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
    }
}

/// The listening TCP socket that accepted a connection to `peer` (its port, and its address
/// or a wildcard one).
fn tcp_listener_inode(peer: SocketAddr) -> Option<u64> {
    let mut entries = procfs::net::tcp().unwrap_or_default();
    entries.extend(procfs::net::tcp6().unwrap_or_default());
    let matches = |local: SocketAddr| {
        local.port() == peer.port()
            && (local.ip() == peer.ip()
                || local.ip().is_unspecified()
                || ipv4_mapped(local.ip()) == Some(peer.ip()))
    };
    entries
        .iter()
        .filter(|e| e.state == procfs::net::TcpState::Listen && matches(e.local_address))
        .map(|e| e.inode)
        .find(|&i| i != 0)
}

fn ipv4_mapped(ip: IpAddr) -> Option<IpAddr> {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4),
        IpAddr::V4(_) => None,
    }
}

/// The listening unix socket bound at `path` (the unconnected stream socket with that path;
/// the accepted ones carry the path too, connected).
fn unix_listener_inode(path: &Path) -> Option<u64> {
    procfs::net::unix()
        .ok()?
        .into_iter()
        .find(|e| {
            e.path.as_deref() == Some(path)
                && e.state == procfs::net::UnixState::UNCONNECTED
                && e.inode != 0
        })
        .map(|e| e.inode)
}

/// The process holding the socket with this inode (where this process may read its fds).
pub fn socket_owner(inode: u64) -> Option<i32> {
    procfs::process::all_processes()
        .ok()?
        .flatten()
        .find(|p| {
            p.fd().is_ok_and(|fds| {
                fds.flatten().any(
                    |fd| matches!(fd.target, procfs::process::FDTarget::Socket(i) if i == inode),
                )
            })
        })
        .map(|p| p.pid)
}

/// Whether a process named `nv-hostengine` runs in this network namespace (one elsewhere
/// cannot listen at this machine's loopback addresses).
pub fn hostengine_running() -> bool {
    let here = std::fs::read_link("/proc/self/ns/net").ok();
    procfs::process::all_processes().is_ok_and(|ps| {
        ps.flatten().any(|p| {
            p.stat().is_ok_and(|st| st.comm == "nv-hostengine")
                && std::fs::read_link(format!("/proc/{}/ns/net", p.pid)).ok() == here
        })
    })
}

/// One variable of a process's environment (`Some(None)`: not set); `None` when the
/// environment cannot be read (the process is gone, or belongs to another user).
pub fn process_env_var(pid: i32, name: &str) -> Option<Option<String>> {
    let env = procfs::process::Process::new(pid)
        .and_then(|p| p.environ())
        .ok()?;
    Some(
        env.get(std::ffi::OsStr::new(name))
            .map(|v| v.to_string_lossy().into_owned()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(host: &str, port: u16) -> Option<Endpoint> {
        Some(Endpoint::Tcp {
            host: host.into(),
            port,
        })
    }

    #[test]
    fn connection_strings_parse_as_libdcgm_parses_them() {
        assert_eq!(parse_endpoint("localhost"), tcp("localhost", 5555));
        assert_eq!(parse_endpoint("tcp://[::1]:5545"), tcp("::1", 5545));
        assert_eq!(parse_endpoint("[::1]"), tcp("::1", 5555));
        assert_eq!(parse_endpoint("TCP://10.0.0.1:7"), tcp("10.0.0.1", 7));
        assert_eq!(
            parse_endpoint("unix:///tmp/nv-hostengine"),
            Some(Endpoint::Unix("/tmp/nv-hostengine".into()))
        );
        assert_eq!(
            parse_endpoint("vsock://-1:5555"),
            Some(Endpoint::Vsock {
                cid: u32::MAX,
                port: 5555
            })
        );
        for bad in [
            "",
            "tcp://",
            "host:",
            "::1:5555",
            "[]",
            "h:0",
            "h:99999",
            "ftp://x",
            "tcp://unix:///tmp/x",
            "vsock://5",
        ] {
            assert_eq!(parse_endpoint(bad), None, "{bad:?}");
        }
        let long = format!("unix:///{}", "a".repeat(SUN_PATH_MAX));
        assert_eq!(parse_endpoint(&long), None);
    }

    #[test]
    fn the_handshake_is_libdcgms_first_request_and_its_answer_is_dcgms_header() {
        let r = wire::version_request();
        assert_eq!(r.len(), 560, "as libdcgm 4.6.0 sends it");
        assert_eq!(&r[..4], &[0xad, 0xbc, 0xbc, 0xad]);
        assert!(wire::is_answer(&r[..wire::HEADER_LEN]));
        assert!(!wire::is_answer(b"HTTP/1.1 400 Bad Request\r\n"));
        assert!(!wire::is_answer(&r[..8]), "a header, whole");
    }

    #[test]
    fn keys_name_one_engine_per_address() {
        let k = |s| parse_endpoint(s).unwrap().key();
        assert_eq!(k("localhost"), k("127.0.0.1:5555"));
        assert_eq!(k("tcp://[::1]:5545"), "[::1]:5545");
        assert_eq!(k("unix:///tmp/x"), "unix:///tmp/x");
        assert!(parse_endpoint("[::1]").unwrap().is_local());
        assert!(!parse_endpoint("10.1.2.3").unwrap().is_local());
    }

    #[test]
    fn a_link_sees_its_listener_go_away() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let ep = tcp("127.0.0.1", port).unwrap();
        let link = Link::connect(&ep, Duration::from_secs(1)).unwrap();
        let (server_side, _) = l.accept().unwrap();
        assert!(link.alive());
        assert!(
            link.listener.is_some(),
            "the listening socket is in /proc/net/tcp"
        );
        assert_eq!(
            link.listener.and_then(socket_owner),
            Some(std::process::id() as i32)
        );
        drop(server_side);
        drop(l);
        assert!(!link.alive());
        assert!(Link::connect(&ep, Duration::from_millis(50)).is_err());
    }

    #[test]
    fn a_unix_link_finds_its_listener() {
        let dir = std::env::temp_dir().join(format!("dcgm-sim-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("he.sock");
        let _ = std::fs::remove_file(&path);
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let link = Link::connect(&Endpoint::Unix(path.clone()), Duration::from_secs(1)).unwrap();
        assert!(link.listener.is_some());
        assert!(link.alive());
        drop(l);
        // The accepted end was never taken from the backlog: closing the listener resets it.
        assert!(!link.alive());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
