//! `query` as a drop-in for `nvidia-smi --query-gpu`: every property of nvidia-smi's list,
//! its header text, its `[N/A]` conventions, and the values the real libdcgm gives for an H200
//! against what nvidia-smi printed on that H200 (`../shared/fixtures/h200-cli/`).

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::{real_libdcgm, tool};

fn query(args: &[&str]) -> Output {
    support::tool_command("query").args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A file of nvidia-smi's reference outputs, or `None` (with the reason printed) where the
/// shared fixtures are absent, which fails the test under `DCGM_REQUIRE_REAL=1` (CI).
fn fixture(name: &str) -> Option<String> {
    let p = dcgm::testing::shared_path(&format!("fixtures/h200-cli/{name}"))?;
    Some(std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

/// nvidia-smi's `--query-gpu=<all> --format=csv` capture: the header line, the values with
/// units, the values under `noheader,nounits`.
fn nvsmi_all() -> Option<(String, String, String)> {
    let text = fixture("nvsmi-query-all.txt")?;
    let lines: Vec<&str> = text.lines().collect();
    let at = |marker: &str| lines.iter().position(|l| *l == marker).unwrap();
    let all = at("== nvidia-smi all query fields");
    let nounits = at("== nounits");
    Some((
        lines[all + 1].to_string(),
        lines[all + 2].to_string(),
        lines[nounits + 1].to_string(),
    ))
}

/// The property names of a header line (`memory.used [MiB]` is `memory.used`).
fn names_of(header: &str) -> Vec<String> {
    header
        .split(", ")
        .map(|c| c.split(" [").next().unwrap().to_string())
        .collect()
}

#[test]
fn the_header_of_all_198_properties_is_nvidia_smis_byte_for_byte() {
    let Some((header, _, _)) = nvsmi_all() else {
        return;
    };
    let names = names_of(&header);
    assert_eq!(names.len(), 198);
    let o = query(&[
        "--simulate",
        &format!("--query-gpu={}", names.join(",")),
        "--format=csv",
        "-i",
        "0",
    ]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let mut lines = out.lines();
    assert_eq!(lines.next().unwrap(), header);
    let row = lines.next().unwrap();
    assert_eq!(row.split(", ").count(), 198, "{row}");
}

#[test]
fn every_name_and_alias_of_nvidia_smis_help_is_accepted() {
    let Some(help) = fixture("nvsmi-help-query-gpu.txt") else {
        return;
    };
    // `"name" or "gpu_name"` lines; the compute mode lines (`"0: Default"`) are values.
    let mut names = Vec::new();
    for line in help.lines().filter(|l| l.starts_with('"')) {
        for part in line.split(" or ") {
            let n = part.trim().trim_matches('"');
            if !n.contains(": ") && !names.contains(&n.to_string()) {
                names.push(n.to_string());
            }
        }
    }
    assert!(names.len() > 214, "{} names", names.len());
    let o = query(&[
        "--simulate",
        &format!("--query-gpu={}", names.join(",")),
        "--format=csv,noheader",
        "-i",
        "0",
    ]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout(&o).trim_end().split(", ").count(), names.len());
}

#[test]
fn an_alias_prints_nvidia_smis_own_name_in_the_header() {
    let o = query(&[
        "--simulate",
        "--query-gpu=gpu_name,clocks.sm,gpu.power.current_limit,clocks_throttle_reasons.active",
        "--format=csv",
        "-i",
        "0",
    ]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        stdout(&o).lines().next().unwrap(),
        "name, clocks.current.sm [MHz], enforced.power.limit [W], clocks_event_reasons.active"
    );
}

#[test]
fn help_query_gpu_says_what_each_property_is_and_where_dcgm_has_it() {
    let o = query(&["--help-query-gpu"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let after = |name: &str| {
        let i = lines.iter().position(|l| l.starts_with(name)).unwrap();
        lines[i + 1]
    };
    assert!(lines.contains(&"\"name\" or \"gpu_name\""), "{out}");
    assert!(
        after("\"pstate\"").contains("DCGM_FI_DEV_GPU_PSTATE"),
        "{out}"
    );
    assert!(after("\"memory.used\" [MiB]").contains("DCGM_FI_DEV_FB_USED"));
    assert!(after("\"hostname\"").contains("no DCGM equivalent"));
    // Our words, not nvidia-smi's.
    if let Some(help) = fixture("nvsmi-help-query-gpu.txt") {
        let theirs: Vec<&str> = help
            .lines()
            .filter(|l| l.len() > 30 && !l.starts_with('"'))
            .collect();
        for l in &lines {
            assert!(!theirs.iter().any(|t| l.contains(t)), "copied: {l}");
        }
    }
}

#[test]
fn pci_domain_no_longer_stops_a_query_and_pstate_is_p_shaped() {
    let o = query(&[
        "--simulate",
        "--query-gpu=index,pci.domain,pci.bus,pci.device,pstate,pci.bus_id",
        "--format=csv,noheader",
    ]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    for line in out.lines() {
        let c: Vec<&str> = line.split(", ").collect();
        let bus_id = c[5];
        assert_eq!(
            format!("{}:{}:{}", &c[1][2..], &c[2][2..], &c[3][2..]).to_lowercase(),
            bus_id[4..bus_id.len() - 2].to_lowercase(),
            "{line}"
        );
        let p = c[4].strip_prefix('P').expect(line);
        assert!(p.parse::<u8>().is_ok_and(|n| n <= 15), "{line}");
    }
}

#[test]
fn id_selects_gpus_by_index_uuid_and_pci_bus_id() {
    let o = query(&[
        "--simulate",
        "--query-gpu=index,uuid,pci.bus_id",
        "--format=csv,noheader",
    ]);
    let out = stdout(&o);
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split(", ").collect()).collect();
    assert!(rows.len() >= 3, "{out}");
    let (uuid, bus) = (rows[2][1], rows[1][2]);
    let short_bus = &bus[9..]; // `00000000:07:00.0` is also `07:00.0`
    let o = query(&[
        "--simulate",
        "--query-gpu=index",
        "--format=csv,noheader",
        "-i",
        &format!("{uuid},{short_bus},0"),
    ]);
    assert!(o.status.success(), "{o:?}");
    // In index order, as nvidia-smi lists them, whatever the order of `-i`.
    assert_eq!(stdout(&o), "0\n1\n2\n");
    let o = query(&["--simulate", "--query-gpu=index", "--id", "GPU-nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("\"GPU-nope\""));
}

#[test]
fn f_writes_the_output_to_the_file() {
    let dir = std::env::temp_dir().join(format!("query-f-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("out.csv");
    let o = query(&[
        "--simulate",
        "--query-gpu=index,memory.used",
        "--format=csv,nounits",
        "-i",
        "0",
        "-f",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout(&o), "");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines = text.lines();
    // nvidia-smi keeps the unit in the header under nounits: only the values lose it.
    assert_eq!(lines.next().unwrap(), "index, memory.used [MiB]");
    let row = lines.next().unwrap();
    assert!(
        row.starts_with("0, ") && row[3..].parse::<u64>().is_ok(),
        "{row}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lms_repeats_with_one_header() {
    let mut child = Command::new(tool("query"))
        .args([
            "--simulate",
            "--query-gpu=index,timestamp",
            "--format=csv",
            "-i",
            "0",
            "-lms",
            "100",
        ])
        .env_remove("DCGM_LIB_PATH")
        .env_remove("DCGM_SIM_CONFIG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    assert_eq!(lines.next().unwrap().unwrap(), "index, timestamp");
    for _ in 0..3 {
        let l = lines.next().unwrap().unwrap();
        // `0, 2026/12/01 07:57:24.724`
        assert!(
            l.starts_with("0, ") && l.len() == 26 && &l[7..8] == "/",
            "{l}"
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn an_unknown_property_is_an_error_that_names_it() {
    let o = query(&["--simulate", "--query-gpu=index,pci.nope", "--format=csv"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Field \"pci.nope\" is not a valid field to query"),
        "{err}"
    );
    let o = query(&["--simulate", "--query-compute-apps=pid,nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Field \"nope\""));
}

#[test]
fn compute_apps_take_every_nvidia_smi_property_with_its_header() {
    let Some(text) = fixture("nvsmi-query-all.txt") else {
        return;
    };
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| *l == "== compute apps").unwrap();
    let header = lines[at + 1];
    let o = query(&[
        "--simulate",
        &format!("--query-compute-apps={}", names_of(header).join(",")),
        "--format=csv",
    ]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let mut l = out.lines();
    assert_eq!(l.next().unwrap(), header);
    let row = l.next().unwrap();
    assert!(
        row.ends_with(" MiB") && row.split(", ").count() == 8,
        "{row}"
    );
    // The aliases nvidia-smi takes.
    let o = query(&[
        "--simulate",
        "--query-compute-apps=name,used_memory",
        "--format=csv",
    ]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        stdout(&o).lines().next().unwrap(),
        "process_name, used_gpu_memory [MiB]"
    );
}

/// The static properties that DCGM supplies on the H200 capture and nvidia-smi printed on that
/// H200: the same text under `noheader,nounits`.
const STATIC_SAME: &[&str] = &[
    "driver_version",
    "count",
    "name",
    "pci.bus_id",
    "pci.domain",
    "pci.bus",
    "pci.device",
    "pci.device_id",
    "pci.sub_device_id",
    "pcie.link.gen.max",
    "pcie.link.gen.gpumax",
    "pcie.link.width.max",
    "index",
    "persistence_mode",
    "vbios_version",
    "inforom.img",
    "inforom.oem",
    "inforom.ecc",
    "pstate",
    "memory.total",
    "compute_mode",
    "compute_cap",
    "ecc.mode.current",
    "ecc.mode.pending",
    "power.limit",
    "enforced.power.limit",
    "power.default_limit",
    "power.min_limit",
    "power.max_limit",
    "clocks.max.graphics",
    "clocks.max.sm",
    "clocks.max.memory",
    "mig.mode.current",
];

/// The capture behind the real library's fake NVML is of another H200 board than the one
/// nvidia-smi ran on: its `serial` and `uuid` differ (the UUID is checked for its shape).
///
/// Static properties nvidia-smi has a value for and DCGM cannot supply, with the reason.
const DCGM_CANNOT: &[(&str, &str)] = &[
    ("display_attached", "no DCGM field"),
    ("display_active", "no DCGM field"),
    ("addressing_mode", "no DCGM field"),
    (
        "accounting.mode",
        "no DCGM field (DCGM turns accounting on itself when it watches processes)",
    ),
    ("accounting.buffer_size", "no DCGM field"),
    (
        "clocks_event_reasons.supported",
        "DCGM reports only the active reasons",
    ),
    ("clocks.default_applications.graphics", "no DCGM field"),
    ("clocks.default_applications.memory", "no DCGM field"),
    ("mig.mode.pending", "DCGM reports only the current MIG mode"),
    ("gsp.mode.current", "no DCGM field"),
    ("gsp.mode.default", "no DCGM field"),
    (
        "c2c.mode",
        "no DCGM field (DCGM counts C2C links, not the mode)",
    ),
    ("power.management", "no DCGM field"),
    (
        "protected_memory.total",
        "no DCGM field (confidential computing memory)",
    ),
    ("platform.gpu_fabric_guid", "no DCGM field"),
];

/// `dcgm-query` on the real library, replaying the H200 capture through its injection NVML.
fn real_query_command(lib: &Path) -> Command {
    let mut c = Command::new(tool("query"));
    c.args(["--lib", lib.to_str().unwrap()])
        .env_remove("DCGM_LIB_PATH")
        .env("NVML_INJECTION_MODE", "True")
        .env(
            "NVML_YAML_FILE",
            dcgm::testing::shared_dir().join("fixtures/nvml-capture-h200.yaml"),
        );
    c
}

fn real_query(lib: &Path, props: &str, format: &str) -> Output {
    real_query_command(lib)
        .arg(format!("--query-gpu={props}"))
        .arg(format!("--format={format}"))
        .output()
        .unwrap()
}

#[test]
fn on_the_real_library_the_h200s_static_values_are_nvidia_smis() {
    let Some(lib) = real_libdcgm() else {
        return;
    };
    let Some((header, _, nounits)) = nvsmi_all() else {
        return;
    };
    let names = names_of(&header);
    let theirs: Vec<&str> = nounits.split(", ").collect();
    let o = real_query(&lib, &names.join(","), "csv,noheader,nounits");
    assert!(o.status.success(), "{o:?}");
    // The fake NVML says on stdout what the capture lacks (`[./nvml-injection/...] key
    // [PlatformInfo] is not injected`): those lines are not the tool's.
    let out = stdout(&o);
    let row: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("[./nvml-injection/"))
        .collect();
    assert_eq!(row.len(), 1, "{out}");
    let ours: Vec<&str> = row[0].split(", ").collect();
    assert_eq!(ours.len(), 198, "{out}");
    let value = |cells: &[&str], name: &str| {
        cells[names.iter().position(|n| n == name).unwrap()].to_string()
    };
    let mut wrong = Vec::new();
    for name in STATIC_SAME {
        let (a, b) = (value(&ours, name), value(&theirs, name));
        if a != b {
            wrong.push(format!("{name}: ours {a:?}, nvidia-smi {b:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(value(&ours, "serial").len(), value(&theirs, "serial").len());
    let uuid = value(&ours, "uuid");
    assert!(uuid.starts_with("GPU-") && uuid.len() == 40, "{uuid}");
    for (name, why) in DCGM_CANNOT {
        assert_eq!(value(&ours, name), "[N/A]", "{name}: {why}");
    }
}

#[test]
fn every_dcgm_field_named_in_help_query_gpu_is_in_dcgms_registry() {
    let o = query(&["--help-query-gpu"]);
    let out = stdout(&o);
    let named: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split("From: ").nth(1))
        .filter_map(|s| s.split([' ', '.']).next())
        .filter(|s| s.starts_with("DCGM_FI_"))
        .collect();
    assert!(named.len() > 130, "{} fields named:\n{out}", named.len());
    for name in named {
        assert!(dcgm::FieldId::by_name(name).is_some(), "{name}");
    }
}

/// DCGM's injection NVML refuses the process list (it answers the size query with
/// INVALID_ARGUMENT), and libdcgm then fails the whole read with BADPARAM: the tool says that
/// the process lists are not available, not a bare return code.
#[test]
fn on_the_real_library_a_refused_process_list_is_named() {
    let Some(lib) = real_libdcgm() else {
        return;
    };
    let o = real_query_command(&lib)
        .args(["--query-compute-apps=pid,used_memory", "--format=csv"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{o:?}");
    assert!(
        err.contains("process lists are not available") && err.contains("BADPARAM"),
        "{err}"
    );
    assert!(!stdout(&o).contains("BADPARAM"), "{o:?}");
}
