//! The exporter's HTTP server in-process on loopback: slow clients, overload, request framing,
//! basic auth and gzip. Each test pins a defect of the hand-written server it replaced.

use dcgm_exporter::server;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use server::{Limits, Published, WebConfig};

const EXPOSITION: &str = "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\nDCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 42\n";

fn start(web: WebConfig, limits: Limits) -> (SocketAddr, Arc<WebConfig>) {
    let listener = server::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let published = Arc::new(Mutex::new(Published {
        text: EXPOSITION.repeat(200),
        error: None,
        ready: true,
        version: 1,
        ..Published::default()
    }));
    let web = Arc::new(web);
    let w = web.clone();
    std::thread::spawn(move || server::serve_with(listener, w, published, limits));
    (addr, web)
}

fn connect(addr: SocketAddr) -> BufReader<TcpStream> {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    BufReader::new(s)
}

struct Reply {
    status: u16,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

/// Sends `req` and reads one response (its body by Content-Length).
fn exchange(c: &mut BufReader<TcpStream>, req: &str) -> std::io::Result<Reply> {
    c.get_mut().write_all(req.as_bytes())?;
    read_reply(c)
}

fn read_reply(c: &mut BufReader<TcpStream>) -> std::io::Result<Reply> {
    let mut line = String::new();
    if c.read_line(&mut line)? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("status line {line:?}"));
    let mut headers = BTreeMap::new();
    loop {
        line.clear();
        c.read_line(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').unwrap();
        headers.insert(k.to_ascii_lowercase(), v.trim().to_string());
    }
    let n: usize = headers
        .get("content-length")
        .map_or(0, |v| v.parse().unwrap());
    let mut body = vec![0; n];
    c.read_exact(&mut body)?;
    Ok(Reply {
        status,
        headers,
        body,
    })
}

fn get(path: &str, extra: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: test\r\n{extra}\r\n")
}

fn scrape(addr: SocketAddr, extra: &str) -> Reply {
    exchange(&mut connect(addr), &get("/metrics", extra)).unwrap()
}

fn temp_file(tag: &str, text: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!(
        "dcgm-rs-exporter-http-{tag}-{}.yml",
        std::process::id()
    ));
    std::fs::write(&p, text).unwrap();
    p
}

fn basic(user_pass: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(user_pass)
}

#[test]
fn sixty_four_clients_trickling_a_byte_per_second_do_not_starve_a_scrape() {
    let (addr, _) = start(WebConfig::none(), Limits::default());
    let mut slow: Vec<TcpStream> = (0..64).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let head = b"GET /metrics HTTP/1.1\r\nHost: slow\r\n";
    let started = Instant::now();
    for i in 0..3 {
        for s in &mut slow {
            let _ = s.write_all(&head[i..=i]);
        }
        let t = Instant::now();
        let r = scrape(addr, "");
        assert_eq!(r.status, 200, "scrape {i} beside 64 slow clients");
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "scrape {i} took {:?}",
            t.elapsed()
        );
        std::thread::sleep(Duration::from_secs(1).saturating_sub(t.elapsed()));
    }
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn the_request_head_timeout_covers_the_whole_head_not_each_read() {
    let limits = Limits {
        header_timeout: Duration::from_secs(1),
        ..Limits::default()
    };
    let (addr, _) = start(WebConfig::none(), limits);
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let head = b"GET /metrics HTTP/1.1\r\nHost: slow\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
    let started = Instant::now();
    // A byte every 100 ms: each read is quick, the head as a whole is not.
    for b in head {
        if s.write_all(&[*b]).is_err() {
            break;
        }
        let mut buf = [0u8; 512];
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => break,
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(4),
        "the server kept a trickling client for {took:?}"
    );
}

#[test]
fn overload_is_answered_with_a_real_503_and_no_slot_leaks() {
    let limits = Limits {
        max_connections: 2,
        max_overload: 4,
        header_timeout: Duration::from_secs(1),
    };
    let (addr, _) = start(WebConfig::none(), limits);
    // Connections that end early (closed at once, garbage, head timeout) give their slots back.
    for _ in 0..10 {
        drop(TcpStream::connect(addr).unwrap());
        let mut c = connect(addr);
        let _ = exchange(&mut c, "NONSENSE\r\n\r\n");
    }
    let _timed_out: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(1500));
    let mut holders: Vec<_> = (0..2).map(|_| connect(addr)).collect();
    for h in &mut holders {
        let r = exchange(h, &get("/metrics", "")).expect("a slot after early endings");
        assert_eq!(r.status, 200);
    }
    // Both slots held by keep-alive connections: the third is told so, with a full response.
    let mut c = connect(addr);
    c.get_mut()
        .write_all(get("/metrics", "").as_bytes())
        .unwrap();
    // Time for a server that closes without reading the request to have the kernel reset the
    // connection (the old server did: its 503 was followed by ECONNRESET).
    std::thread::sleep(Duration::from_millis(200));
    let r = read_reply(&mut c).expect("a 503 response, not a reset");
    assert_eq!(r.status, 503);
    let mut rest = Vec::new();
    c.read_to_end(&mut rest)
        .expect("a clean close, not a reset");
    assert_eq!(r.body, b"too many connections\n");
    drop(holders);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if scrape(addr, "").status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "slots did not come back");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ambiguous_framing_and_a_missing_host_are_refused_with_400() {
    let (addr, _) = start(WebConfig::none(), Limits::default());
    let cases = [
        (
            "two Content-Length values",
            "POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde",
        ),
        (
            "space before the colon",
            "POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length : 3\r\n\r\nabc",
        ),
        (
            "signed Content-Length",
            "POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: +3\r\n\r\nabc",
        ),
        ("no Host in HTTP/1.1", "GET /metrics HTTP/1.1\r\n\r\n"),
        (
            "two Host headers",
            "GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        ),
    ];
    for (what, req) in cases {
        let r = exchange(&mut connect(addr), req).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(r.status, 400, "{what}");
    }
    // HTTP/1.0 needs no Host.
    let r = exchange(&mut connect(addr), "GET /health HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(r.status, 200);
}

#[test]
fn an_unknown_user_costs_a_bcrypt_verification_at_the_highest_cost() {
    // alice (cost 4) sorts first: the old server checked unknown users against her cheap hash.
    let alice = bcrypt::hash("a-pass", 4).unwrap();
    let zed = bcrypt::hash("z-pass", 10).unwrap();
    let p = temp_file(
        "users",
        &format!("basic_auth_users:\n  alice: {alice}\n  zed: {zed}\n"),
    );
    let web = WebConfig::load(&p).unwrap();
    let _ = std::fs::remove_file(&p);
    let (addr, web) = start(web, Limits::default());
    let timed = |cred: &str| {
        let t = Instant::now();
        let r = scrape(addr, &format!("Authorization: Basic {}\r\n", basic(cred)));
        (r.status, t.elapsed())
    };
    let before = web.bcrypt_verifications();
    let (status, unknown) = timed("mallory:z-pass");
    assert_eq!(status, 401);
    assert_eq!(web.bcrypt_verifications(), before + 1);
    let (status, known) = timed("zed:wrong");
    assert_eq!(status, 401);
    // Cost 10 is 64 times cost 4: a generous bound still tells them apart.
    assert!(
        unknown * 4 >= known,
        "unknown user {unknown:?} vs zed {known:?}"
    );
    assert_eq!(timed("zed:z-pass").0, 200);
    assert_eq!(timed("alice:a-pass").0, 200);
}

#[test]
fn a_malformed_bcrypt_hash_is_an_error_naming_the_user() {
    let cases = [
        "$2b$10$tooshort",
        "$2b$99$ty9yXBhc8JVKdLZmGaePtOYHJyaPjCU4xCqNirtQh1LQEn2PYv6M2",
        "$2b$10$ty9yXBhc8JVKdLZmGaePtOYHJyaPjCU4xCqNirtQh1LQEn2PYv6M!",
        "$2q$10$ty9yXBhc8JVKdLZmGaePtOYHJyaPjCU4xCqNirtQh1LQEn2PYv6M2",
    ];
    for (i, hash) in cases.into_iter().enumerate() {
        let p = temp_file(
            &format!("bad{i}"),
            &format!("basic_auth_users:\n  carol: {hash}\n"),
        );
        let err = WebConfig::load(&p).expect_err(hash);
        let _ = std::fs::remove_file(&p);
        assert!(err.contains("\"carol\""), "{err}");
    }
}

#[test]
fn the_basic_scheme_is_case_insensitive() {
    let hash = bcrypt::hash("pw", 4).unwrap();
    let p = temp_file("scheme", &format!("basic_auth_users:\n  prom: {hash}\n"));
    let web = WebConfig::load(&p).unwrap();
    let _ = std::fs::remove_file(&p);
    let (addr, _) = start(web, Limits::default());
    for scheme in ["Basic", "BASIC", "basic", "bAsIc"] {
        let r = scrape(
            addr,
            &format!("Authorization: {scheme} {}\r\n", basic("prom:pw")),
        );
        assert_eq!(r.status, 200, "{scheme}");
    }
    let r = scrape(
        addr,
        &format!("Authorization: Bearer {}\r\n", basic("prom:pw")),
    );
    assert_eq!(r.status, 401);
}

#[test]
fn metrics_are_gzipped_when_the_scraper_accepts_gzip() {
    let (addr, _) = start(WebConfig::none(), Limits::default());
    let plain = scrape(addr, "");
    assert_eq!(plain.body, EXPOSITION.repeat(200).as_bytes());
    assert!(!plain.headers.contains_key("content-encoding"));
    for accept in ["gzip", "deflate, gzip;q=0.5", "*", "GZIP"] {
        let r = scrape(addr, &format!("Accept-Encoding: {accept}\r\n"));
        assert_eq!(r.status, 200);
        assert_eq!(r.headers["content-encoding"], "gzip", "{accept}");
        assert!(r.body.len() < plain.body.len() / 4);
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(&r.body[..])
            .read_to_end(&mut text)
            .unwrap();
        assert_eq!(text, plain.body, "{accept}");
    }
    for accept in ["gzip;q=0", "identity", "deflate"] {
        let r = scrape(addr, &format!("Accept-Encoding: {accept}\r\n"));
        assert!(!r.headers.contains_key("content-encoding"), "{accept}");
        assert_eq!(r.body, plain.body);
    }
}
