//! The exporter process under a low file-descriptor limit: accepting fails while connections
//! wait, and the log says so once, not 20 times a second as it used to; the server keeps
//! serving once descriptors come back.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod support;
use support::process::Server;

#[test]
fn accept_failures_are_logged_once_a_minute_and_serving_resumes() {
    // Through bash, for its `ulimit`; the simulator is built beside the binary first.
    let exe = support::process::exporter_path();
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg("ulimit -n 48 && exec \"$0\" --simulate -a 127.0.0.1:0 -c 500 -d g")
        .arg(exe)
        .env(
            "DCGM_SIM_LIB",
            support::process::profile_dir().join("libdcgm_sim.so"),
        )
        .env_remove("DCGM_SIM_CONFIG");
    let server = Server::start(cmd);
    let (addr, log) = (server.addr.clone(), server.log.clone());
    // More connections than descriptors, held for 3 s.
    let held: Vec<TcpStream> = (0..80)
        .filter_map(|_| TcpStream::connect(&addr).ok())
        .collect();
    std::thread::sleep(Duration::from_secs(3));
    let failures = |log: &Mutex<Vec<String>>| {
        log.lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains("accept failed"))
            .count()
    };
    let logged = failures(&log);
    drop(held);
    // Descriptors are back: a scrape is served (the first collection may still be on its way).
    let deadline = Instant::now() + Duration::from_secs(20);
    let served = loop {
        let answer = TcpStream::connect(&addr).and_then(|mut s| {
            s.set_read_timeout(Some(Duration::from_secs(5)))?;
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")?;
            let mut text = String::new();
            s.read_to_string(&mut text)?;
            Ok(text)
        });
        if answer
            .as_deref()
            .is_ok_and(|t| t.starts_with("HTTP/1.1 200"))
        {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    drop(server);
    assert_eq!(
        logged,
        1,
        "accept failures logged {logged} times in 3 s:\n{}",
        log.lock().unwrap().join("\n")
    );
    assert!(served, "no scrape served after the descriptors came back");
}
