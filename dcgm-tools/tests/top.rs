//! `top` in a real terminal: tmux runs it, the test sends keys and reads the screen as a person
//! would see it. Needs tmux (Debian's package; `.ci/run` installs it).

mod support;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A tmux server of its own (its own socket), killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(width: u16, height: u16, cmd: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            dcgm::testing::skip("tmux is not installed (apt-get install tmux)");
            return None;
        }
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let t = Tmux {
            socket: format!("dcgm-top-test-{}-{n}", std::process::id()),
        };
        let o = t.tmux(&[
            "new-session",
            "-d",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "-s",
            "top",
            cmd,
        ]);
        assert!(o.status.success(), "{o:?}");
        Some(t)
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .env_remove("TMUX")
            .output()
            .unwrap()
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "top"]).stdout)
            .into_owned()
    }

    /// The screen once `ok` holds for it, or a panic showing the last screen after 10 s.
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let t0 = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "waited 10 s for {what}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "top"];
        args.extend_from_slice(keys);
        assert!(self.tmux(&args).status.success());
    }

    fn running(&self) -> bool {
        self.tmux(&["has-session", "-t", "top"]).status.success()
    }

    /// tmux's format variable `name` for the pane (`alternate_on`, `pane_pid`, ...).
    fn pane(&self, name: &str) -> String {
        let o = self.tmux(&[
            "display-message",
            "-p",
            "-t",
            "top",
            &format!("#{{{name}}}"),
        ]);
        assert!(o.status.success(), "{o:?}");
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    /// The pid of the `top` the pane's shell runs, read from /proc.
    fn top_pid(&self) -> u32 {
        let shell = self.pane("pane_pid");
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // "pid (comm) state ppid ...": the name may hold spaces, the fields after it not.
            let Some((head, tail)) = stat.rsplit_once(')') else {
                continue;
            };
            let ppid = tail.split_whitespace().nth(1);
            if head.ends_with("(dcgm-top") && ppid == Some(shell.as_str()) {
                return entry.file_name().to_str().unwrap().parse().unwrap();
            }
        }
        panic!("no top process under the pane's shell {shell}");
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

fn top() -> PathBuf {
    support::tool("top")
}

/// The line of the selected row (marked `>`).
fn selected(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.starts_with("> "))
        .unwrap_or("")
        .to_string()
}

#[test]
fn top_shows_gpus_bars_and_processes_and_answers_keys() {
    let cmd = format!(
        "env -u DCGM_SIM_CONFIG -u DCGM_SIM_FAULTS {} --simulate -d 200",
        top().display()
    );
    let Some(t) = Tmux::start(120, 40, &cmd) else {
        return;
    };
    let s = t.wait_for("the first refresh", |s| {
        s.contains("MiB /") && s.contains("4242")
    });
    assert!(s.contains("dcgm top  dcgm-sim  interval"), "{s}");
    assert!(s.contains("GPU 0 NVIDIA H100"), "{s}");
    for label in [
        "Util",
        "Mem",
        "Power",
        "health OK",
        "SM ",
        "PCIe tx",
        "NVLink tx",
    ] {
        assert!(s.contains(label), "{label} missing:\n{s}");
    }
    assert!(s.contains("/ 700 W"), "power against its limit:\n{s}");
    assert!(
        s.contains("62000 MiB"),
        "the training process's memory:\n{s}"
    );
    assert!(selected(&s).contains("GPU 0"), "{s}");

    // Down selects the next GPU.
    t.keys(&["Down"]);
    let s = t.wait_for("GPU 1 selected", |s| selected(s).contains("GPU 1"));
    assert!(!selected(&s).contains("GPU 0"));

    // p pauses: the header says so and the values stop changing.
    t.keys(&["p"]);
    let paused = t.wait_for("PAUSED", |s| s.contains("PAUSED"));
    std::thread::sleep(Duration::from_millis(700));
    let later = t.screen();
    let row = |s: &str| {
        s.lines()
            .find(|l| l.contains("GPU 3 NVIDIA"))
            .map(str::to_string)
    };
    assert_eq!(row(&paused), row(&later), "values changed while paused");
    t.keys(&["p"]);
    t.wait_for("unpaused", |s| !s.contains("PAUSED"));

    // s moves the sort mark from MEM to PID; r reverses it.
    t.keys(&["s"]);
    let s = t.wait_for("sorted by PID", |s| s.contains("PID▼"));
    let pids: Vec<&str> = s
        .lines()
        .filter(|l| l.starts_with("4242") || l.starts_with("5151"))
        .map(|l| &l[..4])
        .collect();
    assert_eq!(pids.first(), Some(&"4242"), "{s}");
    t.keys(&["r"]);
    let s = t.wait_for("reversed", |s| s.contains("PID▲"));
    let first = s
        .lines()
        .find(|l| l.starts_with("4242") || l.starts_with("5151"))
        .unwrap();
    assert!(first.starts_with("5151"), "{s}");

    // + doubles the interval.
    t.keys(&["+"]);
    t.wait_for("interval 400 ms", |s| s.contains("interval 400 ms"));

    // A smaller terminal: the view follows it.
    assert!(
        t.tmux(&["resize-window", "-t", "top", "-x", "70", "-y", "20"])
            .status
            .success()
    );
    // (Waited for whole: a capture taken while the view redraws can lack the process pane.)
    t.wait_for("a 70-column view with its process pane", |s| {
        s.lines().all(|l| l.chars().count() <= 70) && s.contains("GPU ") && s.contains("Processes")
    });

    // q quits and leaves the terminal.
    t.keys(&["q"]);
    let t0 = Instant::now();
    while t.running() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "top did not quit on q"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn top_refuses_a_bad_interval_before_touching_the_terminal() {
    let o = Command::new(top())
        .args(["--simulate", "-d", "5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("between 100 and 10000 ms"));
}

#[test]
fn top_on_the_real_library_shows_the_h200_and_na_for_blanks() {
    let Some(lib) = support::real_libdcgm() else {
        return;
    };
    let cmd = format!(
        "env NVML_INJECTION_MODE=True NVML_YAML_FILE={} {} --lib {} -d 200",
        dcgm::testing::shared_dir()
            .join("fixtures/nvml-capture-h200.yaml")
            .display(),
        top().display(),
        lib.display()
    );
    let Some(t) = Tmux::start(120, 30, &cmd) else {
        return;
    };
    let s = t.wait_for("the H200", |s| {
        s.contains("GPU 0 NVIDIA H200") && s.contains("MiB /")
    });
    assert!(s.contains("embedded"), "{s}");
    // Profiling throughput is blank on this build (no profiling module).
    assert!(s.contains("PCIe tx N/A"), "{s}");
    dcgm::testing::assert_no_sentinel(&s);
    t.keys(&["q"]);
}

#[test]
fn top_shows_na_for_a_blank_temperature() {
    let cmd = format!(
        "env -u DCGM_SIM_CONFIG DCGM_SIM_FAULTS=blank=150 {} --simulate -d 200",
        top().display()
    );
    let Some(t) = Tmux::start(120, 30, &cmd) else {
        return;
    };
    let s = t.wait_for("the first refresh", |s| s.contains("MiB /"));
    let gpu0 = s.lines().find(|l| l.contains("GPU 0 NVIDIA")).unwrap();
    assert!(gpu0.contains("health OK  N/A  SM"), "{gpu0}");
    dcgm::testing::assert_no_sentinel(&s);
}

/// Runs `top` from a shell in tmux that says afterwards whether the terminal settings are the
/// ones it had before (raw mode off) and how top exited, then stays for the test to read.
fn top_in_a_shell() -> Option<Tmux> {
    let cmd = format!(
        "before=$(stty -g); env -u DCGM_SIM_CONFIG -u DCGM_SIM_FAULTS {} --simulate -d 200; \
         rc=$?; [ \"$(stty -g)\" = \"$before\" ] && echo 'terminal settings restored'; \
         echo \"top exited $rc\"; exec sleep 60",
        top().display()
    );
    let t = Tmux::start(120, 30, &cmd)?;
    t.wait_for("the first refresh", |s| s.contains("MiB /"));
    assert_eq!(
        t.pane("alternate_on"),
        "1",
        "top draws on the alternate screen"
    );
    Some(t)
}

/// After top has gone: the shell's lines on the normal screen, raw mode off, exit status.
fn assert_terminal_given_back(t: &Tmux, status: i32) {
    let s = t.wait_for("top to exit", |s| s.contains("top exited"));
    assert!(s.contains(&format!("top exited {status}")), "{s}");
    assert!(s.contains("terminal settings restored"), "{s}");
    assert_eq!(
        t.pane("alternate_on"),
        "0",
        "the alternate screen is left:\n{s}"
    );
}

#[test]
fn top_quits_on_ctrl_c_and_gives_the_terminal_back() {
    let Some(t) = top_in_a_shell() else {
        return;
    };
    t.keys(&["C-c"]);
    assert_terminal_given_back(&t, 0);
    // Printed before the alternate screen, so it stays on the terminal.
    let s = t.screen();
    assert_eq!(s.matches(SIMULATED_LINE).count(), 1, "{s}");
}

/// What every tool says on stderr, once, when its data comes from the simulator.
const SIMULATED_LINE: &str = "# SIMULATED DATA: reading from dcgm-sim, not from real GPUs";

#[test]
fn top_gives_the_terminal_back_on_sigint_and_sigterm() {
    for (signal, status) in [("INT", 130), ("TERM", 143)] {
        let Some(t) = top_in_a_shell() else {
            return;
        };
        let pid = t.top_pid().to_string();
        let o = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .output()
            .unwrap();
        assert!(o.status.success(), "kill -{signal} {pid}: {o:?}");
        assert_terminal_given_back(&t, status);
    }
}

#[test]
fn top_without_a_terminal_says_it_needs_one() {
    let o = Command::new(top())
        .arg("--simulate")
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("top needs a terminal"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // Nothing was drawn, no escape sequence either.
    assert!(
        o.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn top_shows_the_process_columns_the_history_chart_and_the_mig_instances() {
    let cmd = format!(
        "env -u DCGM_SIM_CONFIG -u DCGM_SIM_FAULTS {} --simulate -d 200",
        top().display()
    );
    let Some(t) = Tmux::start(120, 40, &cmd) else {
        return;
    };
    let s = t.wait_for("the processes with their DCGM statistics", |s| {
        s.lines()
            .any(|l| l.starts_with("4242") && l.contains(" C "))
    });
    for column in [
        "TYPE",
        "SM%",
        "MEM%",
        "CPU%",
        "HOST MEM",
        "CONTAINER",
        "GPU MEM",
    ] {
        assert!(s.contains(column), "{column} missing:\n{s}");
    }
    assert!(
        s.contains("enc 0% dec 0%"),
        "the GPU's encoder/decoder:\n{s}"
    );
    // The simulated pids are not processes of this host: `-` in the /proc columns, never
    // another process's numbers.
    let row = s.lines().find(|l| l.starts_with("5151")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells[..5],
        ["5151", "triton", "tritonserver", "7", "C"],
        "{row}"
    );
    assert_eq!(cells[7..10], ["-", "-", "-"], "{row}");
    // DCGM's per-process SM and memory utilisation: numbers, not N/A, on the simulator.
    assert!(
        cells[5].parse::<u32>().is_ok() && cells[6].parse::<u32>().is_ok(),
        "{row}"
    );

    // The history chart follows the selected GPU.
    assert!(s.contains("GPU 0 history, last"), "{s}");
    t.keys(&["Down"]);
    t.wait_for("the chart of GPU 1", |s| s.contains("GPU 1 history, last"));

    // GPU 7 is in MIG mode: one row per GPU instance, with the processes of its GPU.
    assert!(s.contains("MIG instances"), "{s}");
    let mig: Vec<&str> = s.lines().filter(|l| l.contains("GPU 7 GI ")).collect();
    assert_eq!(mig.len(), 3, "{s}");
    for l in mig {
        // DCGM names only the GPU, and the simulated pid is not here to say more.
        assert!(l.contains("5151 tritonserver?"), "{l}");
    }
    t.keys(&["q"]);
}

/// A simulated node whose process list holds `pid`, a real process of this host named
/// `sleep`, on `gpu` with more GPU memory than the others (the first row by default).
fn node_with(pid: u32, gpu: u32, dir: &std::path::Path) -> PathBuf {
    let mut cfg = dcgm_sim::config::SimConfig::default();
    cfg.processes.push(dcgm_sim::config::ProcessConfig {
        pid,
        name: "sleep".into(),
        user: "tester".into(),
        gpus: vec![gpu],
        memory_mib: 70_000,
        ..Default::default()
    });
    let path = dir.join(format!("top-node-{}-{pid}.json", std::process::id()));
    std::fs::write(&path, serde_json::to_string(&cfg).unwrap()).unwrap();
    path
}

#[test]
fn top_kills_the_selected_process_after_the_signal_menu_and_refuses_simulated_pids() {
    let mut child = Command::new("sleep").arg("300").spawn().unwrap();
    let pid = child.id();
    let config = node_with(pid, 0, &std::env::temp_dir());
    let cmd = format!(
        "env -u DCGM_SIM_FAULTS DCGM_SIM_CONFIG={} {} --simulate -d 200",
        config.display(),
        top().display()
    );
    let Some(t) = Tmux::start(120, 40, &cmd) else {
        let _ = child.kill();
        let _ = child.wait();
        return;
    };
    let me = pid.to_string();
    let s = t.wait_for("the sleep process", |s| {
        s.lines()
            .any(|l| l.starts_with(&me) && l.contains("70000 MiB"))
    });
    // A process of this host: its /proc columns are filled in.
    let row = s.lines().find(|l| l.starts_with(&me)).unwrap();
    assert!(!row.contains(" - "), "{row}");
    assert!(row.contains(" MiB "), "host memory:\n{row}");

    // k before Tab says how to pick a process; Tab k opens the menu on the first row (the
    // sleep process, the most GPU memory), SIGTERM first; Esc cancels.
    t.keys(&["k"]);
    t.wait_for("the hint", |s| s.contains("Tab to the processes first"));
    t.keys(&["Tab", "k"]);
    let s = t.wait_for("the signal menu", |s| {
        s.contains(&format!("Send to {pid} (sleep):"))
    });
    for sig in ["SIGTERM", "SIGKILL", "SIGINT", "SIGHUP"] {
        assert!(s.contains(sig), "{sig}:\n{s}");
    }
    t.keys(&["Escape"]);
    t.wait_for("cancelled", |s| s.contains("kill cancelled"));
    assert!(
        child.try_wait().unwrap().is_none(),
        "Esc killed the process"
    );

    // The next row is the simulated training process: no signal goes to its pid.
    t.keys(&["Down", "k"]);
    t.wait_for("the menu for 4242", |s| s.contains("Send to 4242"));
    t.keys(&["Enter"]);
    t.wait_for("the refusal", |s| {
        s.contains("4242 (python3 train.py) is not a process on this host")
    });

    // Back to the sleep process: Enter sends the default, SIGTERM.
    t.keys(&["Up", "F9"]);
    t.wait_for("the menu again", |s| s.contains(&format!("Send to {pid}")));
    t.keys(&["Enter"]);
    t.wait_for("the report", |s| {
        s.contains(&format!("sent SIGTERM to {pid} (sleep)"))
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "sleep {pid} still runs 5 s after the kill"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(15), "{status:?}");
    t.keys(&["q"]);
    let _ = std::fs::remove_file(config);
}

#[test]
fn top_puts_a_process_under_the_mig_instance_its_cuda_visible_devices_names() {
    // GPU 7's UUID, from the simulated node's discovery.
    let o = Command::new(support::tool("discovery"))
        .args(["--simulate", "--json"])
        .env_remove("DCGM_SIM_CONFIG")
        .output()
        .unwrap();
    let node: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let gpu7 = &node["gpus"][7];
    let uuid = gpu7["uuid"].as_str().unwrap();
    // The second instance: entity 1, NVML instance 2.
    let gi = &gpu7["mig_instances"][1];
    let (entity, nvml_id) = (&gi["entity_id"], &gi["nvml_instance_id"]);
    let mut child = Command::new("sleep")
        .arg("300")
        .env("CUDA_VISIBLE_DEVICES", format!("MIG-{uuid}/{nvml_id}/0"))
        .spawn()
        .unwrap();
    let pid = child.id();
    let config = node_with(pid, 7, &std::env::temp_dir());
    let cmd = format!(
        "env -u DCGM_SIM_FAULTS DCGM_SIM_CONFIG={} {} --simulate -d 200",
        config.display(),
        top().display()
    );
    let t = Tmux::start(120, 40, &cmd);
    let s = t.as_ref().map(|t| {
        t.wait_for("the sleep process on GPU 7", |s| {
            s.lines()
                .any(|l| l.contains("GPU 7 GI ") && l.contains(" sleep"))
        })
    });
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_file(config);
    let Some(s) = s else {
        return;
    };
    for l in s.lines().filter(|l| l.contains("GPU 7 GI ")) {
        let mine = l.contains(&format!("GPU 7 GI {entity} "));
        // Its own instance lists it first; the others do not list it. Every instance lists
        // the simulated server, whose instance is unknown, after it (with a `?`, which a
        // narrow column may cut).
        assert_eq!(
            l.contains(&format!("{pid} sleep, 5151 triton")),
            mine,
            "{l}\n{s}"
        );
        assert!(l.contains("5151 triton"), "{l}");
    }
}
