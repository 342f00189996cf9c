//! Attacks on the exporter's HTTP server, each run beside a legitimate scraper that measures
//! how it is served. Every attack runs from 127.0.0.2 (loopback, its own address) and the
//! scraper from 127.0.0.1, both bounded in count and time. `scripts/hostile.sh` prints the
//! rows of every run as one table.

#![allow(dead_code)] // each test binary uses a part

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Where the attackers come from.
pub const ATTACKER: &str = "127.0.0.2";

/// How long the legitimate scraper waits for an answer. A lock-out shows as a 503 or as a
/// wait for the attackers' own 10 s request deadline, so half of that tells the two apart
/// without making the test a timing target on a loaded 2-core machine; the latencies
/// themselves are measured and printed (`scripts/hostile.sh`), not asserted.
pub const SCRAPE_LIMIT: Duration = Duration::from_secs(5);

/// What the legitimate scraper saw during one attack.
#[derive(Debug)]
pub struct Outcome {
    /// Scrapes answered 200 within [`SCRAPE_LIMIT`].
    pub answered: usize,
    /// Scrapes tried.
    pub scrapes: usize,
    /// The slowest scrape (a failed one counts as its time to failure).
    pub worst: Duration,
    /// Connections the attackers opened.
    pub attack_connections: usize,
}

/// A TCP connection from `source` to `addr`.
pub fn connect_from(source: &str, addr: SocketAddr) -> std::io::Result<TcpStream> {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    let src: SocketAddr = format!("{source}:0").parse().expect("a source address");
    s.bind(&src.into())?;
    s.connect_timeout(&addr.into(), Duration::from_secs(2))?;
    Ok(s.into())
}

/// One request and its response's status, within `limit`; the body is read by Content-Length.
pub fn request(addr: SocketAddr, req: &str, limit: Duration) -> std::io::Result<u16> {
    let s = TcpStream::connect_timeout(&addr, limit)?;
    s.set_read_timeout(Some(limit))?;
    s.set_write_timeout(Some(limit))?;
    let mut c = BufReader::new(s);
    c.get_mut().write_all(req.as_bytes())?;
    read_response(&mut c)
}

/// One response from `c`: its status, with the body read (by Content-Length) and dropped.
pub fn read_response(c: &mut impl BufRead) -> std::io::Result<u16> {
    let mut line = String::new();
    c.read_line(&mut line)?;
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::new(ErrorKind::InvalidData, line.clone()))?;
    let mut len = 0usize;
    loop {
        line.clear();
        if c.read_line(&mut line)? == 0 {
            return Err(ErrorKind::UnexpectedEof.into());
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; len];
    c.read_exact(&mut body)?;
    Ok(status)
}

/// How an attacking connection behaves once open, called every tick (~20 ms); `Err` means the
/// server closed it, and the attacker opens a new one.
pub type Behaviour = dyn Fn(&mut TcpStream, u32) -> std::io::Result<()> + Send + Sync;

/// Keeps `n` attacking connections open from [`ATTACKER`], reopening each one the server
/// closes, until `stop`; returns how many it opened.
pub fn hold(
    addr: SocketAddr,
    n: usize,
    open: &Behaviour,
    tick: &Behaviour,
    stop: &AtomicBool,
) -> usize {
    let mut conns: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    let mut opened = 0;
    let mut round = 0u32;
    let until = Instant::now() + Duration::from_secs(30);
    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
        for slot in &mut conns {
            if slot.is_none()
                && let Ok(mut s) = connect_from(ATTACKER, addr)
            {
                opened += 1;
                let _ = s.set_nonblocking(true);
                if open(&mut s, round).is_ok() {
                    *slot = Some(s);
                }
            }
            if let Some(s) = slot
                && tick(s, round).is_err()
            {
                *slot = None;
            }
        }
        round += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    opened
}

/// Whether the peer closed `s` (a read of 0 bytes or an error; data is consumed).
pub fn closed(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    match s.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != ErrorKind::WouldBlock,
    }
}

/// Writes what fits; `Err` if the peer is gone.
pub fn send(s: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    match s.write(bytes) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(()),
        Err(e) => Err(e),
    }
}

/// Runs `attack` (given the stop flag, returning its connection count), waits `settle` for it
/// to take hold, then scrapes `/metrics` `scrapes` times 150 ms apart with `header` and
/// measures; prints a `HOSTILE|` row for `scripts/hostile.sh`.
pub fn under_attack(
    name: &str,
    cases: usize,
    addr: SocketAddr,
    header: &str,
    settle: Duration,
    scrapes: usize,
    attack: impl FnOnce(&AtomicBool) -> usize + Send + 'static,
) -> Outcome {
    let req = format!("GET /metrics HTTP/1.1\r\nHost: legit\r\n{header}\r\n");
    let scrape = move || request(addr, &req, SCRAPE_LIMIT);
    under_attack_with(name, cases, &scrape, settle, scrapes, attack)
}

/// [`under_attack`] with the legitimate scrape given (answering the HTTP status).
pub fn under_attack_with(
    name: &str,
    cases: usize,
    scrape: &dyn Fn() -> std::io::Result<u16>,
    settle: Duration,
    scrapes: usize,
    attack: impl FnOnce(&AtomicBool) -> usize + Send + 'static,
) -> Outcome {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let attacker = std::thread::spawn(move || attack(&s));
    std::thread::sleep(settle);
    let answered = AtomicUsize::new(0);
    let mut worst = Duration::ZERO;
    for _ in 0..scrapes {
        let t = Instant::now();
        let ok = matches!(scrape(), Ok(200));
        let took = t.elapsed();
        worst = worst.max(took);
        if ok && took <= SCRAPE_LIMIT {
            answered.fetch_add(1, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(150));
    }
    stop.store(true, Ordering::Relaxed);
    let attack_connections = attacker.join().expect("the attacker thread");
    let out = Outcome {
        answered: answered.into_inner(),
        scrapes,
        worst,
        attack_connections,
    };
    println!(
        "HOSTILE|{name}|{cases}|{}/{}|{:.1} ms|{}",
        out.answered,
        out.scrapes,
        out.worst.as_secs_f64() * 1e3,
        out.attack_connections
    );
    out
}
