//! The library a contract run is pointed at: dcgm-sim, or the real libdcgm 4.6.0 beside the
//! checkout (staged by `scripts/real-dcgm.sh`), and host engines to talk to.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dcgm::{Handle, HandleBuilder};

/// Which library a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sim,
    Real,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sim => "sim",
            Kind::Real => "real",
        }
    }
}

/// The library under test and where its pieces are.
#[derive(Debug, Clone)]
pub struct Target {
    pub kind: Kind,
    /// An older DCGM release the run speaks (`DCGM_CONTRACT_RELEASE`): the real library of that
    /// release, or dcgm-sim in its personality. `None`: DCGM 4.6.0.
    pub release: Option<String>,
    pub lib: PathBuf,
    /// `nv-hostengine` (real only).
    pub hostengine: Option<PathBuf>,
    /// Scratch directory for logs and sockets of this run.
    pub scratch: PathBuf,
}

/// The repository root (this test belongs to the umbrella crate at the root).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The H200 NVML capture beside the checkout.
pub fn h200_capture() -> PathBuf {
    dcgm::testing::shared_dir().join("fixtures/nvml-capture-h200.yaml")
}

/// Stages the real library (4.6.0); `Err` says why it is absent.
pub fn stage_real() -> Result<PathBuf, String> {
    stage_release("4.6.0")
}

/// Stages the real library of `release`; `Err` says why it is absent.
pub fn stage_release(release: &str) -> Result<PathBuf, String> {
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/real-dcgm.sh"))
        .args(["dir", release])
        .output()
        .map_err(|e| format!("cannot run scripts/real-dcgm.sh: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

impl Target {
    /// The target this process was started for (`DCGM_CONTRACT_TARGET`, set by the driver).
    pub fn from_env() -> Target {
        let kind = match std::env::var("DCGM_CONTRACT_TARGET").as_deref() {
            Ok("real") => Kind::Real,
            _ => Kind::Sim,
        };
        let release = std::env::var("DCGM_CONTRACT_RELEASE").ok();
        let scratch = std::env::temp_dir().join(format!(
            "dcgm-contract-{}-{}-{}",
            kind.name(),
            release.as_deref().unwrap_or("4.6.0"),
            std::process::id()
        ));
        std::fs::create_dir_all(&scratch).unwrap();
        match kind {
            Kind::Sim => Target {
                kind,
                release,
                lib: dcgm::testing::simulator_path(),
                hostengine: None,
                scratch,
            },
            Kind::Real => {
                let dir = PathBuf::from(std::env::var("DCGM_CONTRACT_REAL_DIR").unwrap());
                let major = release.as_deref().map_or("4", |r| &r[..1]).to_string();
                Target {
                    kind,
                    release,
                    lib: dir.join(format!("lib/libdcgm.so.{major}")),
                    hostengine: Some(dir.join("bin/nv-hostengine")),
                    scratch,
                }
            }
        }
    }

    pub fn is_real(&self) -> bool {
        self.kind == Kind::Real
    }

    /// The release the run speaks: the older one it was given, else 4.6.0.
    pub fn version(&self) -> dcgm::DcgmVersion {
        dcgm::DcgmVersion::parse(self.release.as_deref().unwrap_or("4.6.0"))
            .expect("a release number")
    }

    /// Whether the run speaks a release older than `release`.
    pub fn older_than(&self, release: &str) -> bool {
        self.version() < dcgm::DcgmVersion::parse(release).expect("a release number")
    }

    /// The run's name in its lines: `sim`, `real`, or with an older release, `real@4.5.3`.
    pub fn label(&self) -> String {
        match &self.release {
            None => self.kind.name().to_string(),
            Some(r) => format!("{}@{r}", self.kind.name()),
        }
    }

    pub fn builder(&self) -> HandleBuilder {
        Handle::builder().library_path(&self.lib)
    }

    pub fn embedded(&self) -> Handle {
        self.builder().embedded().expect("embedded handle")
    }

    /// Starts a host engine listening on `listen`. On the simulator nothing is started: it
    /// answers in-process at `localhost` and `unix:///tmp/nv-hostengine`.
    pub fn start_hostengine(&self, listen: Listen) -> HostEngine {
        let Some(bin) = &self.hostengine else {
            let address = match listen {
                Listen::Tcp => "localhost".to_string(),
                Listen::Unix => "unix:///tmp/nv-hostengine".to_string(),
            };
            return HostEngine {
                child: None,
                address,
                port: None,
                socket: None,
                bin: None,
                log: PathBuf::new(),
            };
        };
        let log = self.scratch.join(format!("nv-hostengine-{}.log", unique()));
        let (port, socket) = match listen {
            Listen::Tcp => (Some(free_port()), None),
            Listen::Unix => (
                None,
                Some(self.scratch.join(format!("he-{}.sock", unique()))),
            ),
        };
        let mut he = HostEngine {
            child: None,
            address: match (&port, &socket) {
                (Some(p), _) => format!("127.0.0.1:{p}"),
                (_, Some(s)) => format!("unix://{}", s.display()),
                _ => unreachable!(),
            },
            port,
            socket,
            bin: Some(bin.clone()),
            log,
        };
        he.spawn();
        he
    }
}

/// How a started host engine listens.
#[derive(Debug, Clone, Copy)]
pub enum Listen {
    Tcp,
    Unix,
}

/// A host engine started by a test (by pid), killed when dropped.
#[derive(Debug)]
pub struct HostEngine {
    child: Option<Child>,
    pub address: String,
    port: Option<u16>,
    socket: Option<PathBuf>,
    bin: Option<PathBuf>,
    log: PathBuf,
}

impl HostEngine {
    fn spawn(&mut self) {
        let bin = self.bin.as_ref().expect("a real host engine");
        let mut cmd = Command::new(bin);
        cmd.arg("-n").arg("-f").arg(&self.log);
        if let Some(p) = self.port {
            cmd.args(["-b", "127.0.0.1", "-p", &p.to_string()]);
        }
        if let Some(s) = &self.socket {
            let _ = std::fs::remove_file(s);
            cmd.arg("-d").arg(s);
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nv-hostengine");
        self.child = Some(child);
        self.wait_listening();
    }

    fn wait_listening(&self) {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(20) {
            let up = match (self.port, &self.socket) {
                (Some(p), _) => std::net::TcpStream::connect(("127.0.0.1", p)).is_ok(),
                (_, Some(s)) => std::os::unix::net::UnixStream::connect(s).is_ok(),
                _ => true,
            };
            if up {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "nv-hostengine did not listen at {} within 20 s (log: {})",
            self.address,
            self.log.display()
        );
    }

    /// The started process's pid (real host engines only).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the process and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the same host engine again, at the same address.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    pub fn log(&self) -> &Path {
        &self.log
    }
}

impl Drop for HostEngine {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}
