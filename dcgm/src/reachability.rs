//! Why a host engine could not be reached: libdcgm answers every failed connect with the same
//! `DCGM_ST_CONNECTION_NOT_VALID`, so the address is probed once more to say what went wrong.

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// nv-hostengine's default TCP port.
const DEFAULT_PORT: u16 = 5555;
/// How long the probe waits for a TCP answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// One sentence saying why `address` (as given to `dcgmConnect_v2`/`_v3`) cannot be reached,
/// or that it answers but did not accept the DCGM connection.
pub(crate) fn why_unreachable(address: &str) -> String {
    let lower = address.to_ascii_lowercase();
    if let Some(path) = address
        .strip_prefix("unix://")
        .or_else(|| address.starts_with('/').then_some(address))
    {
        return match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => "the socket answers but the host engine did not accept the connection".into(),
            Err(e) => format!("unix socket {path}: {e}"),
        };
    }
    if lower.starts_with("vsock://") {
        return "the vsock host engine did not accept the connection".into();
    }
    let hostport = address.strip_prefix("tcp://").unwrap_or(address);
    let with_port = if hostport
        .rsplit_once(':')
        .is_some_and(|(h, p)| !h.is_empty() && !h.ends_with(':') && p.parse::<u16>().is_ok())
    {
        hostport.to_string()
    } else {
        format!("{hostport}:{DEFAULT_PORT}")
    };
    let addrs: Vec<_> = match with_port.to_socket_addrs() {
        Ok(a) => a.collect(),
        Err(e) => return format!("the name does not resolve ({e})"),
    };
    let Some(first) = addrs.first() else {
        return "the name resolves to no address".into();
    };
    match TcpStream::connect_timeout(first, PROBE_TIMEOUT) {
        Ok(_) => format!("{first} answers but the host engine did not accept the connection"),
        Err(e) => format!("{first}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unresolvable_name_is_reported_as_such() {
        let why = why_unreachable("no-such-host.invalid");
        assert!(why.contains("does not resolve"), "{why}");
    }

    #[test]
    fn a_closed_port_names_the_address_and_the_refusal() {
        let why = why_unreachable("127.0.0.1:1");
        assert!(
            why.starts_with("127.0.0.1:1: ") && why.contains("refused"),
            "{why}"
        );
    }

    #[test]
    fn a_missing_unix_socket_names_the_path() {
        let why = why_unreachable("unix:///nonexistent/dcgm.sock");
        assert!(why.contains("/nonexistent/dcgm.sock"), "{why}");
    }
}
