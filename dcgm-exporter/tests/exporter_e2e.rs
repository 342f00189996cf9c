//! End to end: the `dcgm-exporter` binary as a process against dcgm-sim — its `--once` output,
//! exit codes and errors, and its HTTP server (`/metrics`, `/health`, basic auth,
//! keep-alive). TLS and a real Prometheus server are covered by scripts/prometheus_e2e.sh.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

mod support;
use support::process::{self, Server, TempDir};

fn exporter(args: &[&str]) -> Command {
    process::exporter("e2e-node", args)
}

fn run(args: &[&str]) -> Output {
    exporter(args).output().expect("run the exporter")
}

type Labels = BTreeMap<String, String>;

/// Checks the text format strictly and returns metric name -> [(labels, value)].
fn parse_exposition(text: &str) -> BTreeMap<String, Vec<(Labels, f64)>> {
    let mut out: BTreeMap<String, Vec<(Labels, f64)>> = BTreeMap::new();
    let mut helped = BTreeSet::new();
    let mut typed = BTreeSet::new();
    let mut current: Option<String> = None;
    assert!(
        text.ends_with('\n'),
        "the exposition must end with a newline"
    );
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap().to_string();
            assert!(helped.insert(name.clone()), "second HELP for {name}");
            assert!(!out.contains_key(&name), "HELP after the series of {name}");
            current = Some(name);
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut p = rest.split(' ');
            let name = p.next().unwrap().to_string();
            let ty = p.next().unwrap();
            assert!(["gauge", "counter", "untyped"].contains(&ty), "{line}");
            assert!(typed.insert(name.clone()), "second TYPE for {name}");
            assert_eq!(
                current.as_deref(),
                Some(name.as_str()),
                "TYPE not after its HELP"
            );
            continue;
        }
        assert!(!line.starts_with('#'), "unexpected comment {line}");
        let (name, labels, value) = match line.find('{') {
            Some(i) => {
                let end = line.rfind('}').unwrap();
                (
                    &line[..i],
                    parse_labels(&line[i + 1..end]),
                    line[end + 1..].trim(),
                )
            }
            None => {
                let (n, v) = line.split_once(' ').unwrap();
                (n, Labels::new(), v)
            }
        };
        assert_eq!(
            current.as_deref(),
            Some(name),
            "series of {name} outside its family"
        );
        let v: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("bad value in {line}")),
        };
        out.entry(name.to_string()).or_default().push((labels, v));
    }
    for name in out.keys() {
        assert!(
            helped.contains(name) && typed.contains(name),
            "{name} lacks HELP/TYPE"
        );
    }
    out
}

fn parse_labels(s: &str) -> Labels {
    let mut out = Labels::new();
    let mut chars = s.chars().peekable();
    while chars.peek().is_some() {
        let name: String = chars.by_ref().take_while(|c| *c != '=').collect();
        assert_eq!(chars.next(), Some('"'));
        let mut v = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next().unwrap() {
                    'n' => v.push('\n'),
                    c => v.push(c),
                },
                '"' => break,
                c => v.push(c),
            }
        }
        assert!(out.insert(name.clone(), v).is_none(), "label {name} twice");
        if chars.peek() == Some(&',') {
            chars.next();
        }
    }
    out
}

const IDENTITY_LABELS: [&str; 6] = [
    "gpu",
    "UUID",
    "pci_bus_id",
    "device",
    "modelName",
    "hostname",
];

#[test]
fn once_prints_a_valid_labelled_exposition_of_every_gpu() {
    let out = run(&["--simulate", "--once", "-d", "g"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("SIMULATED"),
        "the startup log must say the data is simulated: {stderr}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let m = parse_exposition(&text);
    let temps = &m["DCGM_FI_DEV_GPU_TEMP"];
    assert_eq!(temps.len(), 8);
    let mut uuids = BTreeSet::new();
    for (i, (labels, v)) in temps.iter().enumerate() {
        for l in IDENTITY_LABELS {
            assert!(
                labels.get(l).is_some_and(|v| !v.is_empty()),
                "{l} missing: {labels:?}"
            );
        }
        assert_eq!(labels["gpu"], i.to_string());
        assert_eq!(labels["device"], format!("nvidia{i}"));
        assert_eq!(labels["hostname"], "e2e-node");
        assert!(labels["UUID"].starts_with("GPU-"));
        assert!(
            labels.contains_key("DCGM_FI_DRIVER_VERSION"),
            "label row missing: {labels:?}"
        );
        assert!((20.0..100.0).contains(v), "implausible temperature {v}");
        uuids.insert(labels["UUID"].clone());
    }
    assert_eq!(uuids.len(), 8);
    for (_, v) in &m["DCGM_FI_DEV_POWER_USAGE"] {
        assert!((0.0..=1000.0).contains(v), "implausible power {v}");
    }
    for (_, v) in &m["DCGM_FI_DEV_GPU_UTIL"] {
        assert!((0.0..=100.0).contains(v), "implausible utilization {v}");
    }
    assert_eq!(m["dcgm_exporter_simulated"][0].1, 1.0);
    // dcgm-exporter's default rows are there.
    for name in [
        "DCGM_FI_DEV_SM_CLOCK",
        "DCGM_FI_DEV_MEM_CLOCK",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_FB_FREE",
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "DCGM_EXP_XID_ERRORS_COUNT",
    ] {
        assert_eq!(m.get(name).map(Vec::len), Some(8), "{name}");
    }
    // No GPU has had an XID yet: DCGM has no XID sample, so no DCGM_FI_DEV_XID_ERRORS series.
    assert_eq!(m.get("DCGM_FI_DEV_XID_ERRORS"), None);
    assert!(text.contains("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"));
}

#[test]
fn once_in_flex_mode_exports_mig_instances_with_their_labels() {
    let out = run(&["--simulate", "--once"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = parse_exposition(&String::from_utf8(out.stdout).unwrap());
    let fb = &m["DCGM_FI_DEV_FB_USED"];
    // 7 whole GPUs, and GPU 7 (in MIG mode) as its 3 GPU instances.
    assert_eq!(fb.len(), 10);
    let mig: Vec<&Labels> = fb
        .iter()
        .map(|(l, _)| l)
        .filter(|l| l.contains_key("GPU_I_PROFILE"))
        .collect();
    assert_eq!(mig.len(), 3);
    for l in &mig {
        assert_eq!(l["gpu"], "7");
        assert!(!l["GPU_I_PROFILE"].is_empty());
        assert!(l["GPU_I_ID"].parse::<u32>().is_ok());
    }
    let ids: BTreeSet<&str> = mig.iter().map(|l| l["GPU_I_ID"].as_str()).collect();
    assert_eq!(ids.len(), 3);
    // The start-up log names the instances as the labels do (it used to print DCGM's entity
    // ids, `GPU_I 0,1,2`, beside labels saying GPU_I_ID 1,2,3).
    let log = String::from_utf8_lossy(&out.stderr);
    let line = log
        .lines()
        .find(|l| l.contains("exporting 10 entities"))
        .unwrap_or_else(|| panic!("no start-up line in {log}"));
    for l in &mig {
        let named = format!("GPU 7 GPU_I_ID {} ({})", l["GPU_I_ID"], l["GPU_I_PROFILE"]);
        assert!(line.contains(&named), "{named:?} not in {line:?}");
    }
    assert!(!line.contains("GPU_I "), "{line}");
}

#[test]
fn counters_file_spelling_is_kept_and_errors_carry_line_numbers() {
    let dir = tempdir("counters");
    let good = dir.join("good.csv");
    std::fs::write(
        &good,
        "# mine\nDCGM_FI_DEV_GPU_TEMP_CELSIUS, gauge, new name\nDCGM_FI_DEV_POWER_USAGE, gauge, old name\n",
    )
    .unwrap();
    let out = run(&[
        "--simulate",
        "--once",
        "-d",
        "g:0-3",
        "-f",
        good.to_str().unwrap(),
        "-n",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = parse_exposition(&String::from_utf8(out.stdout).unwrap());
    let names: Vec<&str> = m.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "DCGM_FI_DEV_GPU_TEMP_CELSIUS",
            "DCGM_FI_DEV_POWER_USAGE",
            "dcgm_exporter_last_collection_success_timestamp_seconds",
            "dcgm_exporter_simulated"
        ]
    );
    assert_eq!(m["DCGM_FI_DEV_POWER_USAGE"].len(), 4);
    // -n: no host name label.
    assert!(!m["DCGM_FI_DEV_POWER_USAGE"][0].0.contains_key("hostname"));

    let bad = dir.join("bad.csv");
    std::fs::write(
        &bad,
        "# mine\nDCGM_FI_DEV_GPU_TEMP, gauge, ok\n\nDCGM_FI_DEV_NOT_A_FIELD, gauge, no\n",
    )
    .unwrap();
    let out = run(&["--simulate", "--once", "-f", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 4") && stderr.contains("DCGM_FI_DEV_NOT_A_FIELD"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());

    std::fs::write(&bad, "DCGM_FI_DEV_GPU_TEMP, gauge\n").unwrap();
    let out = run(&["--simulate", "--once", "-f", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"));

    let out = run(&[
        "--simulate",
        "--once",
        "-f",
        dir.join("missing.csv").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

fn switch_cpu_counters() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("etc/switch-cpu-counters.csv")
        .to_string_lossy()
        .into_owned()
}

fn keys(l: &Labels) -> Vec<&str> {
    l.keys().map(String::as_str).collect()
}

#[test]
fn once_exports_switches_links_and_cpus_with_dcgm_exporters_labels() {
    let file = switch_cpu_counters();
    let out = run(&["--simulate", "--once", "-f", &file]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("4 NvSwitches") && stderr.contains("400 NVLinks"),
        "{stderr}"
    );
    let m = parse_exposition(&String::from_utf8(out.stdout).unwrap());
    const DV: &str = "DCGM_FI_DRIVER_VERSION";

    let sw = &m["DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS"];
    assert_eq!(sw.len(), 4);
    for (i, (l, v)) in sw.iter().enumerate() {
        assert_eq!(keys(l), [DV, "hostname", "nvswitch"]);
        assert_eq!(l["nvswitch"], format!("nvswitch{i}"));
        assert_eq!(l["hostname"], "e2e-node");
        assert!(
            (30.0..90.0).contains(v),
            "implausible switch temperature {v}"
        );
    }
    for name in [
        "DCGM_FI_DEV_NVSWITCH_VOLTAGE_MVOLT",
        "DCGM_FI_DEV_NVSWITCH_POWER_VDD_WATTS",
        "DCGM_FI_DEV_SXID_FATAL_ERROR",
        "DCGM_FI_DEV_SXID_NON_FATAL_ERROR",
    ] {
        assert_eq!(m.get(name).map(Vec::len), Some(4), "{name}");
    }

    // GPU UUIDs as the GPU series give them.
    let uuid_of: BTreeMap<String, String> = m["DCGM_FI_DEV_GPU_TEMP"]
        .iter()
        .map(|(l, _)| (l["gpu"].clone(), l["UUID"].clone()))
        .collect();
    let links = &m["DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX"];
    assert_eq!(links.len(), 8 * 18 + 4 * 64);
    let (gpu_links, switch_links): (Vec<_>, Vec<_>) =
        links.iter().partition(|(l, _)| l.contains_key("gpu"));
    assert_eq!((gpu_links.len(), switch_links.len()), (144, 256));
    for (l, _) in &gpu_links {
        assert_eq!(
            keys(l),
            [
                DV,
                "device",
                "gpu",
                "gpu_uuid",
                "hostname",
                "model_name",
                "nvlink",
                "pci_bus_id"
            ]
        );
        assert_eq!(l["device"], format!("nvidia{}", l["gpu"]));
        assert_eq!(Some(&l["gpu_uuid"]), uuid_of.get(&l["gpu"]));
        assert!(l["nvlink"].parse::<u32>().unwrap() < 18);
    }
    for (l, v) in &switch_links {
        assert_eq!(keys(l), [DV, "hostname", "nvlink", "nvswitch"]);
        assert!(l["nvswitch"].starts_with("nvswitch"));
        assert!(l["nvlink"].parse::<u32>().unwrap() < 64);
        assert!(*v >= 0.0);
    }
    let series_of = |name: &str| -> BTreeSet<String> {
        m[name].iter().map(|(l, _)| format!("{l:?}")).collect()
    };
    assert_eq!(
        series_of("DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_RX").len(),
        400
    );

    let cpus = &m["DCGM_FI_DEV_CPU_TEMP_CELSIUS"];
    assert_eq!(cpus.len(), 2);
    for (i, (l, v)) in cpus.iter().enumerate() {
        assert_eq!(keys(l), [DV, "cpu", "hostname"]);
        assert_eq!(l["cpu"], i.to_string());
        assert!((20.0..110.0).contains(v), "implausible CPU temperature {v}");
    }
    assert_eq!(m["DCGM_FI_DEV_CPU_POWER_WATTS"].len(), 2);
    let cores = &m["DCGM_FI_DEV_CPU_UTIL_TOTAL"];
    assert_eq!(cores.len(), 112);
    for (l, v) in cores {
        assert_eq!(keys(l), [DV, "cpu", "cpucore", "hostname"]);
        let core: u32 = l["cpucore"].parse().unwrap();
        assert_eq!(l["cpu"], if core < 56 { "0" } else { "1" });
        assert!((0.0..=1.0).contains(v));
    }
    assert_eq!(m["DCGM_FI_DEV_CPU_CLOCK_CURRENT"].len(), 112);
    // The GPU rows of the file are there as usual.
    assert_eq!(m["DCGM_FI_DEV_GPU_TEMP"].len(), 10);
}

#[test]
fn switch_and_cpu_device_flags_and_their_environment_variables() {
    let file = switch_cpu_counters();
    let count =
        |m: &BTreeMap<String, Vec<(Labels, f64)>>, name: &str| m.get(name).map_or(0, Vec::len);
    let out = run(&[
        "--simulate",
        "--once",
        "-f",
        &file,
        "-d",
        "g:0",
        "-s",
        "g:1",
        "-p",
        "i:0-3",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = parse_exposition(&String::from_utf8(out.stdout).unwrap());
    let sw = &m["DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS"];
    assert_eq!(sw.len(), 1);
    assert_eq!(sw[0].0["nvswitch"], "nvswitch1");
    // g: NvSwitches, no switch links; the links of GPU 0 (-d g:0).
    let links = &m["DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX"];
    assert_eq!(links.len(), 18);
    assert!(links.iter().all(|(l, _)| l["gpu"] == "0"));
    // i:0-3: cores 0-3, no CPU.
    assert_eq!(count(&m, "DCGM_FI_DEV_CPU_TEMP_CELSIUS"), 0);
    let cores: Vec<&str> = m["DCGM_FI_DEV_CPU_UTIL_TOTAL"]
        .iter()
        .map(|(l, _)| l["cpucore"].as_str())
        .collect();
    assert_eq!(cores, ["0", "1", "2", "3"]);

    // dcgm-exporter's environment variables for -s and -p.
    let out = exporter(&["--simulate", "--once", "-f", &file])
        .env("DCGM_EXPORTER_OTHER_DEVICES_STR", "i:63")
        .env("DCGM_EXPORTER_CPU_DEVICES_STR", "g:0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = parse_exposition(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(count(&m, "DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS"), 0);
    let switch_links: Vec<&Labels> = m["DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX"]
        .iter()
        .map(|(l, _)| l)
        .filter(|l| l.contains_key("nvswitch"))
        .collect();
    assert_eq!(switch_links.len(), 4);
    assert!(switch_links.iter().all(|l| l["nvlink"] == "63"));
    assert_eq!(count(&m, "DCGM_FI_DEV_CPU_TEMP_CELSIUS"), 1);
    assert_eq!(count(&m, "DCGM_FI_DEV_CPU_UTIL_TOTAL"), 0);

    // Bad syntax, or ids that do not exist: exit 2.
    for args in [
        ["-s", "x"],
        ["-s", "s:1"],
        ["-p", "c:0"],
        ["-s", "g:4"],
        ["-p", "i:112"],
    ] {
        let out = run(&["--simulate", "--once", "-f", &file, args[0], args[1]]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Without NvSwitch or CPU rows (the default counters) they are not looked up at all.
    let out = run(&["--simulate", "--once", "-s", "g:4", "-p", "i:112"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("nvswitch=") && !text.contains("cpu="));
}

#[test]
fn once_exports_gpu_health_status_and_p2p_status() {
    let dir = tempdir("health");
    let file = dir.join("health.csv");
    std::fs::write(
        &file,
        "DCGM_FI_DEV_GPU_TEMP, gauge, t\n\
         DCGM_EXP_GPU_HEALTH_STATUS, counter, DCGM reported health status\n\
         DCGM_EXP_P2P_STATUS, counter, P2P NvLink status\n\
         DCGM_FI_DRIVER_VERSION, label, d\n",
    )
    .unwrap();
    let out = run(&[
        "--simulate",
        "--once",
        "-d",
        "g",
        "-f",
        file.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("# TYPE DCGM_EXP_GPU_HEALTH_STATUS counter\n"));
    let m = parse_exposition(&text);
    let health = &m["DCGM_EXP_GPU_HEALTH_STATUS"];
    assert_eq!(health.len(), 8 * 11);
    let mut watches = BTreeSet::new();
    for (l, v) in health {
        for name in IDENTITY_LABELS {
            assert!(l.get(name).is_some_and(|v| !v.is_empty()), "{name}: {l:?}");
        }
        assert!(l.contains_key("DCGM_FI_DRIVER_VERSION"));
        assert_eq!(l["health_error_code"], "DCGM_FR_OK");
        assert_eq!(*v, 0.0, "a healthy simulated node: {l:?}");
        watches.insert(l["health_watch"].clone());
    }
    let expected: BTreeSet<String> = [
        "PCIE", "NVLINK", "PMU", "MCU", "MEM", "SM", "INFOROM", "THERMAL", "POWER", "DRIVER", "ALL",
    ]
    .map(String::from)
    .into();
    assert_eq!(watches, expected);
    let p2p = &m["DCGM_EXP_P2P_STATUS"];
    assert_eq!(p2p.len(), 8 * 7);
    for (l, v) in p2p {
        for name in IDENTITY_LABELS {
            assert!(l.get(name).is_some_and(|v| !v.is_empty()), "{name}: {l:?}");
        }
        assert_ne!(l["peer_gpu"], l["gpu"]);
        assert!(l["peer_gpu"].parse::<u32>().unwrap() < 8);
        assert_eq!((l["link_status"].as_str(), *v), ("OK", 0.0));
    }
}

#[test]
fn bad_arguments_exit_2_and_help_exits_0() {
    for args in [
        &["--simulate", "--once", "-d", "x"][..],
        &["--simulate", "--once", "-d", "g:42"],
        &["--no-such-flag"],
    ] {
        let out = run(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--address",
        "--collect-interval",
        "--collectors",
        "--remote-hostengine-info",
        "--devices",
        "--switch-devices",
        "--cpu-devices",
        "--web-config-file",
        "--simulate",
        "--once",
    ] {
        assert!(help.contains(flag), "{flag} not in --help");
    }
    // No host engine at this address: a DCGM failure, exit 1.
    let out = run(&["--simulate", "--once", "-r", "127.0.0.1:1"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A running exporter, killed when dropped.
fn start(args: &[&str]) -> Server {
    Server::start(exporter(args))
}

/// One HTTP/1.1 exchange on `s`: status, headers (lowercase names) and body.
fn exchange(s: &mut BufReader<TcpStream>, req: &str) -> (u16, BTreeMap<String, String>, String) {
    s.get_mut().write_all(req.as_bytes()).unwrap();
    let mut line = String::new();
    s.read_line(&mut line).unwrap();
    let status: u16 = line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut headers = BTreeMap::new();
    loop {
        line.clear();
        s.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').unwrap();
        headers.insert(k.to_ascii_lowercase(), v.trim().to_string());
    }
    let n: usize = headers["content-length"].parse().unwrap();
    let mut body = vec![0; n];
    s.read_exact(&mut body).unwrap();
    (status, headers, String::from_utf8(body).unwrap())
}

fn connect(addr: &str) -> BufReader<TcpStream> {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    BufReader::new(s)
}

fn get(path: &str, auth: Option<&str>) -> String {
    let auth = auth
        .map(|a| format!("Authorization: Basic {a}\r\n"))
        .unwrap_or_default();
    format!("GET {path} HTTP/1.1\r\nHost: test\r\n{auth}\r\n")
}

#[test]
fn server_serves_metrics_and_health_with_basic_auth_and_keep_alive() {
    use base64::Engine as _;
    let dir = tempdir("web");
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let web = dir.join("web.yml");
    std::fs::write(
        &web,
        format!(
            "basic_auth_users:\n  prom: {hash}\nhttp_server_config:\n  headers:\n    X-Frame-Options: sameorigin\n"
        ),
    )
    .unwrap();
    let srv = start(&[
        "--simulate",
        "-a",
        "127.0.0.1:0",
        "-c",
        "200",
        "-d",
        "g",
        "--web-config-file",
        web.to_str().unwrap(),
    ]);
    let good = base64::engine::general_purpose::STANDARD.encode("prom:s3cret");
    let wrong = base64::engine::general_purpose::STANDARD.encode("prom:nope");
    let stranger = base64::engine::general_purpose::STANDARD.encode("eve:s3cret");
    let mut c = connect(&srv.addr);

    let (status, headers, _) = exchange(&mut c, &get("/metrics", None));
    assert_eq!(status, 401);
    assert_eq!(
        headers.get("www-authenticate").map(String::as_str),
        Some("Basic")
    );
    assert_eq!(exchange(&mut c, &get("/metrics", Some(&wrong))).0, 401);
    assert_eq!(exchange(&mut c, &get("/health", Some(&stranger))).0, 401);

    // Ready within a few collect intervals.
    let deadline = Instant::now() + Duration::from_secs(20);
    let text = loop {
        let (status, headers, body) = exchange(&mut c, &get("/metrics", Some(&good)));
        if status == 200 {
            assert_eq!(
                headers["content-type"],
                "text/plain; version=0.0.4; charset=utf-8"
            );
            assert_eq!(
                headers.get("x-frame-options").map(String::as_str),
                Some("sameorigin")
            );
            break body;
        }
        assert_eq!(status, 503);
        assert!(Instant::now() < deadline, "no metrics");
        std::thread::sleep(Duration::from_millis(100));
    };
    let m = parse_exposition(&text);
    assert_eq!(m["DCGM_FI_DEV_GPU_TEMP"].len(), 8);
    // The same connection, again (keep-alive), and the values move on.
    std::thread::sleep(Duration::from_millis(600));
    let (status, _, text2) = exchange(&mut c, &get("/metrics", Some(&good)));
    assert_eq!(status, 200);
    let m2 = parse_exposition(&text2);
    assert_eq!(m2["DCGM_FI_DEV_GPU_TEMP"].len(), 8);
    assert_ne!(
        m["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"], m2["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"],
        "the collector did not run again"
    );

    let (status, _, body) = exchange(&mut c, &get("/health", Some(&good)));
    assert_eq!((status, body.as_str()), (200, "OK\n"));
    assert_eq!(exchange(&mut c, &get("/nope", Some(&good))).0, 404);
    let post = format!(
        "POST /metrics HTTP/1.1\r\nHost: test\r\nAuthorization: Basic {good}\r\nContent-Length: 3\r\n\r\nabc"
    );
    let (status, _, body) = exchange(&mut c, &post);
    assert_eq!(status, 405, "{body}");
    // HEAD: headers only.
    c.get_mut()
        .write_all(
            format!("HEAD /health HTTP/1.1\r\nHost: test\r\nAuthorization: Basic {good}\r\n\r\n")
                .as_bytes(),
        )
        .unwrap();
    let mut line = String::new();
    c.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    loop {
        line.clear();
        c.read_line(&mut line).unwrap();
        if line.trim_end().is_empty() {
            break;
        }
    }
    // Connection: close is honoured.
    let (status, headers, _) = exchange(
        &mut c,
        &format!(
            "GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\nAuthorization: Basic {good}\r\n\r\n"
        ),
    );
    assert_eq!(status, 200);
    assert_eq!(headers["connection"], "close");
    let mut rest = Vec::new();
    c.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());

    // A malformed request gets a 400, and the server keeps serving.
    let mut c = connect(&srv.addr);
    let (status, _, _) = exchange(&mut c, "NONSENSE\r\n\r\n");
    assert_eq!(status, 400);
    let mut c = connect(&srv.addr);
    assert_eq!(exchange(&mut c, &get("/health", Some(&good))).0, 200);
}

#[test]
fn web_config_errors_exit_2() {
    let dir = tempdir("webbad");
    let cases = [
        (
            "unknown.yml",
            "basic_auth_users:\n  a: $2y$10$abcdefghijklmnopqrstuu5Ccu3Yr7xY2qLX7uWIIk5U4vEKuH1K6\nno_such_key: 1\n",
        ),
        ("plain.yml", "basic_auth_users:\n  a: plaintext\n"),
        // A bcrypt prefix, then nothing a verification could use.
        (
            "badhash.yml",
            "basic_auth_users:\n  carol: $2b$10$tooshort\n",
        ),
        (
            "tls.yml",
            "tls_server_config:\n  cert_file: missing.pem\n  key_file: missing.pem\n",
        ),
    ];
    for (name, text) in cases {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        let out = run(&[
            "--simulate",
            "--once",
            "--web-config-file",
            p.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if name == "badhash.yml" {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("\"carol\""), "{err}");
        }
    }
}

fn tempdir(tag: &str) -> TempDir {
    process::tempdir(&format!("exporter-e2e-{tag}"))
}

/// Polls `path` until `done` holds for the response (status, body), for at most 15 s.
fn poll_until(addr: &str, path: &str, done: impl Fn(u16, &str) -> bool) -> (u16, String) {
    let t0 = Instant::now();
    loop {
        let mut c = connect(addr);
        let (status, _, body) = exchange(&mut c, &get(path, None));
        if done(status, &body) || t0.elapsed() > Duration::from_secs(15) {
            return (status, body);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn empty_counters_files_are_errors() {
    let dir = tempdir("empty-counters");
    for (name, text, why) in [
        ("empty.csv", "", "no counters"),
        ("comments.csv", "# nothing here\n\n", "no counters"),
        (
            "cr-only.csv",
            "# counters\rDCGM_FI_DEV_GPU_TEMP, gauge, temperature\r",
            "CR only",
        ),
    ] {
        let f = dir.0.join(name);
        std::fs::write(&f, text).unwrap();
        let o = run(&["--simulate", "--once", "-f", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(why) && err.contains(name), "{name}: {err}");
    }
}

#[test]
fn the_listener_opens_at_once_and_health_says_503_while_dcgm_is_unreachable() {
    // Port 1 on loopback: nothing listens there, so every connection attempt fails.
    let s = start(&[
        "--simulate",
        "-r",
        "127.0.0.1:1",
        "-c",
        "200",
        "-a",
        "127.0.0.1:0",
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    let mut c = connect(&s.addr);
    let (status, _, body) = exchange(&mut c, &get("/health", None));
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("not reachable"), "{body}");
    let (status, _, _) = exchange(&mut c, &get("/metrics", None));
    assert_eq!(status, 503);
    // Several attempts (one per 200 ms), one log line: the state did not change.
    let log = s.log.lock().unwrap();
    let not_ready = log.iter().filter(|l| l.contains("not ready")).count();
    assert_eq!(not_ready, 1, "{log:#?}");
}

#[test]
fn sighup_reloads_the_counters_file_and_keeps_the_listener() {
    let dir = tempdir("sighup");
    let f = dir.0.join("counters.csv");
    std::fs::write(&f, "DCGM_FI_DEV_GPU_TEMP, gauge, temperature\n").unwrap();
    let s = start(&[
        "--simulate",
        "-f",
        f.to_str().unwrap(),
        "-c",
        "200",
        "-a",
        "127.0.0.1:0",
    ]);
    let (status, body) = poll_until(&s.addr, "/metrics", |st, _| st == 200);
    assert_eq!(status, 200);
    assert!(body.contains("DCGM_FI_DEV_GPU_TEMP{") && !body.contains("DCGM_FI_DEV_POWER_USAGE"));
    let hup = || {
        let st = Command::new("kill")
            .args(["-HUP", &s.child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
    };
    std::fs::write(
        &f,
        "DCGM_FI_DEV_GPU_TEMP, gauge, temperature\nDCGM_FI_DEV_POWER_USAGE, gauge, power\n",
    )
    .unwrap();
    hup();
    let (_, body) = poll_until(&s.addr, "/metrics", |st, b| {
        st == 200 && b.contains("DCGM_FI_DEV_POWER_USAGE{")
    });
    assert!(body.contains("DCGM_FI_DEV_POWER_USAGE{"), "{body}");
    // A broken file on SIGHUP: logged, and the counters in use stay.
    std::fs::write(&f, "").unwrap();
    hup();
    let t0 = Instant::now();
    while !s
        .log
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.contains("SIGHUP") && l.contains("keeping"))
    {
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "{:#?}",
            s.log.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, body) = poll_until(&s.addr, "/metrics", |st, _| st == 200);
    assert_eq!(status, 200);
    assert!(body.contains("DCGM_FI_DEV_POWER_USAGE{"));
}
