//! The exporter as a process: its binary (with the simulator built beside it), a clean
//! environment, a running server with its log, and temporary directories.

#![allow(dead_code)] // each test binary uses a part

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The profile directory of this test binary (`target/debug`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// Builds the simulator (a no-op when `cargo test` already built it) and returns the
/// exporter binary's path.
pub fn exporter_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let release = profile_dir().file_name().is_some_and(|n| n == "release");
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "-q", "-p", "dcgm-sim"])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if release {
            cmd.arg("--release");
        }
        assert!(cmd.status().expect("run cargo").success());
        PathBuf::from(env!("CARGO_BIN_EXE_dcgm-exporter"))
    })
}

/// The exporter with `args`, reading dcgm-sim's default node, its host name label `node`, and
/// none of the environment variables that would change what the test asked for.
pub fn exporter(node: &str, args: &[&str]) -> Command {
    let mut c = Command::new(exporter_path());
    c.args(args)
        .env("DCGM_SIM_LIB", profile_dir().join("libdcgm_sim.so"))
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS")
        .env_remove("DCGM_LIB_PATH")
        .env("NODE_NAME", node);
    for (k, _) in std::env::vars() {
        if k.starts_with("DCGM_EXPORTER_")
            || k.starts_with("DCGM_HPC")
            || k == "DCGM_REMOTE_HOSTENGINE_INFO"
            || k == "DCGM_POD_RESOURCES_KUBELET_SOCKET"
        {
            c.env_remove(k);
        }
    }
    c
}

/// Runs to the end, killed (and the test failed) if it takes more than `limit`: the defects
/// pinned here blocked forever or allocated without end.
pub fn run_bounded(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the exporter");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{:?} did not exit within {limit:?}: {}",
                cmd.get_args().collect::<Vec<_>>(),
                String::from_utf8_lossy(&t_err.join().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

/// A running exporter, killed when dropped, with its log.
pub struct Server {
    /// The process.
    pub child: Child,
    /// Where it listens (`127.0.0.1:PORT`).
    pub addr: String,
    /// Its log lines so far.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    pub fn start(mut cmd: Command) -> Server {
        let mut child = cmd
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let log = Arc::new(Mutex::new(Vec::new()));
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
        Server { child, addr, log }
    }

    /// `GET path`: status and body.
    pub fn get(&self, path: &str) -> (u16, String) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let raw = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, body.to_string())
    }

    /// Polls `path` every 100 ms until `done` holds, for at most `limit`; the last answer.
    pub fn poll(
        &self,
        path: &str,
        limit: Duration,
        done: impl Fn(u16, &str) -> bool,
    ) -> (u16, String) {
        let t0 = Instant::now();
        loop {
            let (st, body) = self.get(path);
            if done(st, &body) || t0.elapsed() > limit {
                return (st, body);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The log lines containing every one of `words`.
    pub fn lines_with(&self, words: &[&str]) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| words.iter().all(|w| l.contains(w)))
            .cloned()
            .collect()
    }

    pub fn log_text(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Waits (at most `limit`) for a log line with every one of `words`.
    pub fn wait_log(&self, words: &[&str], limit: Duration) {
        let t0 = Instant::now();
        while self.lines_with(words).is_empty() {
            assert!(
                t0.elapsed() < limit,
                "no log line with {words:?}:\n{}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn signal(&self, sig: &str) {
        signal(self.child.id(), sig);
    }
}

/// Sends `sig` (`-STOP`, `-HUP`, ...) to `pid` with kill(1); the test fails if it cannot.
pub fn signal(pid: u32, sig: &str) {
    let st = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success(), "kill {sig} {pid}");
}

/// Label sets, by name.
pub type Labels = std::collections::BTreeMap<String, String>;

/// The label sets of one metric's series in an exposition.
pub fn series(text: &str, metric: &str) -> Vec<Labels> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")))
        .map(|l| {
            let inner = &l[metric.len() + 1..l.rfind('}').unwrap()];
            inner
                .split("\",")
                .map(|kv| {
                    let (k, v) = kv.split_once("=\"").unwrap();
                    (k.to_string(), v.trim_end_matches('"').to_string())
                })
                .collect()
        })
        .collect()
}

/// A temporary directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh temporary directory `dcgm-rs-<tag>-<pid>`.
pub fn tempdir(tag: &str) -> TempDir {
    let d = std::env::temp_dir().join(format!("dcgm-rs-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TempDir(d)
}
