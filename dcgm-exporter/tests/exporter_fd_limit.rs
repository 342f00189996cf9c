//! The exporter process under a low file-descriptor limit: accepting fails while connections
//! wait, and the log says so once, not 20 times a second as it used to; the server keeps
//! serving once descriptors come back.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[test]
fn accept_failures_are_logged_once_a_minute_and_serving_resumes() {
    let profile = std::path::Path::new(env!("CARGO_BIN_EXE_dcgm-exporter"))
        .parent()
        .unwrap()
        .to_path_buf();
    // The simulator, built as the other process tests build it (a no-op when it is).
    let mut build = Command::new(env!("CARGO"));
    build
        .args(["build", "-p", "dcgm-sim"])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    assert!(
        build.status().expect("run cargo").success(),
        "cargo build -p dcgm-sim failed"
    );
    let sim = profile.join("libdcgm_sim.so");
    let mut child = Command::new("bash")
        .arg("-c")
        .arg("ulimit -n 48 && exec \"$0\" --simulate -a 127.0.0.1:0 -c 500 -d g")
        .arg(env!("CARGO_BIN_EXE_dcgm-exporter"))
        .env("DCGM_SIM_LIB", &sim)
        .env_remove("DCGM_SIM_CONFIG")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let lines = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(i) = line.find("listening on http://") {
                let rest = &line[i + "listening on http://".len()..];
                let _ = tx.send(rest.split('/').next().unwrap().to_string());
            }
            lines.lock().unwrap().push(line);
        }
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the exporter did not start");
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
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        logged,
        1,
        "accept failures logged {logged} times in 3 s:\n{}",
        log.lock().unwrap().join("\n")
    );
    assert!(served, "no scrape served after the descriptors came back");
}
