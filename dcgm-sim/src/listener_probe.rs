//! Where a host engine is: DCGM connection strings, and the real listeners behind them.
//!
//! The simulator decides that a host engine exists at an address the way libdcgm 4.6.0 does:
//! something accepts a connection there. For the addresses it can check locally (TCP on a
//! loopback address, unix sockets) it connects, keeps that connection open for as long as the
//! client's handle lives, and reads it without blocking on each call: end of stream means the
//! host-engine process is gone (killed or terminated), and the handle is no longer valid. The
//! listening socket's inode (from `/proc/net`) tells one incarnation of a host engine from the
//! next at the same address, and the process that holds it is the host engine whose environment
//! `dcgmHostengineEnvironmentVariableInfo` reports.

use std::io::{ErrorKind, Read};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use dcgm_sys::DCGM_HE_PORT_NUMBER;

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

#[derive(Debug)]
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

/// An open connection to a real listener: the host engine a simulated handle stands for.
#[derive(Debug)]
pub struct Link {
    stream: Stream,
    /// Inode of the listening socket (one incarnation of the host engine), where `/proc/net`
    /// shows it.
    pub listener: Option<u64>,
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
