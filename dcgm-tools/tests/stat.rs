//! `stat` as a drop-in for gpustat: each flag's output laid out as gpustat 1.1.1 lays it out on
//! a real H200 (`../shared/fixtures/h200-cli/gpustat-nvsmi-reference.txt`, values and names
//! masked), and `--json` in gpustat's schema. The fixture lives beside the checkout; where it is
//! absent the comparisons say so and pass.

mod support;

use std::collections::BTreeSet;
use std::process::{Command, Output};

use support::tool;

/// The fixture's sections: (the flags after `gpustat`, the lines it printed).
fn fixture() -> Option<Vec<(String, Vec<String>)>> {
    let path = dcgm::testing::shared_path("fixtures/h200-cli/gpustat-nvsmi-reference.txt")?;
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(head) = line.strip_prefix("== ") {
            sections.push((head.to_string(), Vec::new()));
        } else if let Some((_, lines)) = sections.last_mut() {
            lines.push(line.to_string());
        }
    }
    Some(
        sections
            .into_iter()
            .filter_map(|(head, lines)| {
                let flags = head.strip_prefix("gpustat")?.trim().to_string();
                Some((flags, lines))
            })
            .collect(),
    )
}

fn run(args: &[&str]) -> Output {
    support::tool_command("stat")
        .arg("--simulate")
        .args(args)
        .env_remove("CLICOLOR_FORCE")
        .output()
        .unwrap()
}

fn stdout(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "stat {args:?}: {o:?}");
    String::from_utf8(o.stdout).unwrap()
}

/// Digits (with their decimals and the padding in front of them) as `N`, so that two lines
/// laid out alike compare equal whatever their numbers.
fn mask_numbers(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while out.ends_with(' ') {
                out.pop();
            }
            while chars
                .peek()
                .is_some_and(|d| d.is_ascii_digit() || *d == '.')
            {
                chars.next();
            }
            out.push('N');
        } else {
            out.push(c);
        }
    }
    out
}

/// A process as its layout: words as `W`, numbers as `N` (`root:python3/581(1002M)` is
/// `W:W/N(NM)`).
fn mask_process(p: &str) -> String {
    let mut out = String::new();
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            out.push('N');
            if chars.peek() == Some(&'M') {
                chars.next();
                out.push('M');
            }
        } else if c.is_alphabetic() || c == '_' {
            while chars
                .peek()
                .is_some_and(|d| d.is_alphanumeric() || "_.-".contains(*d))
            {
                chars.next();
            }
            out.push('W');
        } else {
            out.push(c);
        }
    }
    out
}

/// A GPU line as its layout: `[N] NAME |N°C, N % |N /N MB | W(NM)`.
fn mask_gpu_line(l: &str) -> String {
    let (index, rest) = l.split_once("] ").unwrap_or_else(|| panic!("{l}"));
    let (_name, rest) = rest.split_once(" |").unwrap_or_else(|| panic!("{l}"));
    let mut parts: Vec<String> = rest.split(" |").map(str::to_string).collect();
    // The readings and memory, then (when shown) the processes.
    let mut masked = vec![format!("{}] NAME", mask_numbers(index))];
    let processes = (parts.len() == 3).then(|| parts.pop().unwrap());
    masked.extend(parts.iter().map(|p| mask_numbers(p)));
    if let Some(ps) = processes {
        masked.push(
            ps.split(' ')
                .map(mask_process)
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    masked.join(" |")
}

/// A `-f` line as its layout: ` └─N (N%,N): CMD` (a value that is not known, `--`, as `N`).
fn mask_full_line(l: &str) -> String {
    let (head, _command) = l.split_once("): ").unwrap_or_else(|| panic!("{l}"));
    let head = mask_numbers(&head.replace("--", "0"));
    let head = ["KB", "MB", "GB", "TB", "PB", "B"]
        .iter()
        .fold(head, |h, unit| h.replace(&format!("N{unit}"), "N"));
    format!("{head}): CMD")
}

/// The header's layout: the host padded to the GPU lines' `[N] name` width plus two, the time
/// as C's `%c`, the driver version.
fn assert_header(header: &str, name_width: usize, what: &str) {
    let words: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(words.len(), 7, "{what}: {header}");
    let host = words[0];
    assert!(
        ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].contains(&words[1]),
        "{what}: {header}"
    );
    assert!(
        words[2].len() == 3 && words[3].parse::<u32>().is_ok(),
        "{what}: {header}"
    );
    assert_eq!(mask_numbers(words[4]), "N:N:N", "{what}: {header}");
    assert_eq!(mask_numbers(words[5]), "N", "{what}: {header}");
    assert_eq!(
        mask_numbers(words[6]),
        "N",
        "{what}: the driver version: {header}"
    );
    let day_at = host.len().max(name_width + 3) + 2;
    assert_eq!(header.find(words[1]), Some(day_at), "{what}: {header}");
    // `%e`: the day of the month padded to two.
    let time_at = header.find(words[4]).unwrap();
    assert_eq!(
        &header[day_at + 8..time_at],
        format!("{:>2} ", words[3]),
        "{what}: {header}"
    );
}

/// The width of the GPU names in lines `[N] name |...`.
fn name_width(gpu_lines: &[&str]) -> usize {
    gpu_lines
        .iter()
        .map(|l| {
            let rest = l.split_once("] ").unwrap().1;
            rest.split_once(" |").unwrap().0.chars().count()
        })
        .max()
        .unwrap()
}

#[test]
fn every_gpustat_flag_lays_out_its_lines_as_gpustat_does() {
    let Some(sections) = fixture() else { return };
    let flags: Vec<&(String, Vec<String>)> =
        sections.iter().filter(|(f, _)| f != "--json").collect();
    assert_eq!(flags.len(), 13, "the fixture's gpustat runs: {sections:?}");
    for (flag, theirs) in flags {
        let args: Vec<&str> = flag.split_whitespace().collect();
        let ours = stdout(&args);
        let ours: Vec<&str> = ours.lines().collect();
        let what = format!("stat {flag}");
        // Theirs: the header, one GPU (with one process), and -f's command line, which runs
        // over several lines.
        let their_gpu = theirs[1].as_str();
        assert_header(
            &theirs[0],
            name_width(&[their_gpu]),
            &format!("gpustat {flag}"),
        );
        let our_gpus: Vec<&str> = ours
            .iter()
            .copied()
            .filter(|l| l.starts_with('['))
            .collect();
        let expected = if flag == "--id 0" { 1 } else { 8 };
        assert_eq!(our_gpus.len(), expected, "{what}:\n{}", ours.join("\n"));
        assert_header(ours[0], name_width(&our_gpus), &what);
        for l in &our_gpus {
            assert_eq!(
                mask_gpu_line(l),
                mask_gpu_line(their_gpu),
                "{what}:\n{l}\n{their_gpu}"
            );
        }
        if args.contains(&"-f") {
            let theirs_full = mask_full_line(&theirs[2]);
            let full: Vec<&str> = ours
                .iter()
                .copied()
                .filter(|l| l.starts_with(' '))
                .collect();
            assert_eq!(
                full.len(),
                8,
                "a process under each GPU: {}",
                ours.join("\n")
            );
            for l in full {
                assert_eq!(
                    mask_full_line(l),
                    theirs_full,
                    "{what}:\n{l}\n{}",
                    theirs[2]
                );
            }
        } else {
            assert_eq!(ours.len(), 1 + expected, "{what}:\n{}", ours.join("\n"));
        }
    }
}

/// Each object's keys, level by level: the document's, a GPU's, a process's.
fn key_sets(v: &serde_json::Value) -> [BTreeSet<String>; 3] {
    let keys = |o: &serde_json::Value| -> BTreeSet<String> {
        o.as_object()
            .unwrap_or_else(|| panic!("an object: {o}"))
            .keys()
            .cloned()
            .collect()
    };
    let gpu = &v["gpus"][0];
    let process = &gpu["processes"][0];
    [keys(v), keys(gpu), keys(process)]
}

/// The keys in the order the text names them first.
fn key_order(text: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let parts: Vec<&str> = text.split("\": ").collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        let key = part.rsplit('"').next().unwrap().to_string();
        if !seen.contains(&key) {
            seen.push(key);
        }
    }
    seen
}

#[test]
fn json_has_gpustats_keys_at_every_level_in_its_order_and_types() {
    let Some(sections) = fixture() else { return };
    let theirs = sections
        .iter()
        .find(|(f, _)| f == "--json")
        .map(|(_, l)| l.join("\n"))
        .expect("the fixture has gpustat --json");
    let ours = stdout(&["--json"]);
    let their_v: serde_json::Value = serde_json::from_str(&theirs).unwrap();
    let our_v: serde_json::Value = serde_json::from_str(&ours).unwrap();
    let their_keys = key_sets(&their_v);
    for gpu in our_v["gpus"].as_array().unwrap() {
        let keys: BTreeSet<String> = gpu.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, their_keys[1], "{gpu}");
        for p in gpu["processes"].as_array().unwrap() {
            let keys: BTreeSet<String> = p.as_object().unwrap().keys().cloned().collect();
            assert_eq!(keys, their_keys[2], "{p}");
        }
    }
    assert_eq!(key_sets(&our_v), their_keys);
    assert_eq!(key_order(&ours), key_order(&theirs), "{ours}");
    // gpustat's layout: json.dump with indent=4.
    let their_lines: Vec<&str> = theirs.lines().take(5).collect();
    let our_lines: Vec<&str> = ours.lines().take(5).collect();
    let indents =
        |ls: &[&str]| -> Vec<usize> { ls.iter().map(|l| l.len() - l.trim_start().len()).collect() };
    assert_eq!(indents(&our_lines), indents(&their_lines), "{ours}");
    // Where both have a value it is of the same JSON type.
    let same_type = |a: &serde_json::Value, b: &serde_json::Value, what: &str| {
        for (k, x) in a.as_object().unwrap() {
            let y = &b[k];
            if x.is_null() || y.is_null() {
                continue;
            }
            let kind = |v: &serde_json::Value| match v {
                serde_json::Value::Number(n) if n.is_f64() => "float",
                serde_json::Value::Number(_) => "int",
                serde_json::Value::String(_) => "string",
                serde_json::Value::Array(_) => "list",
                serde_json::Value::Object(_) => "object",
                _ => "other",
            };
            assert_eq!(kind(x), kind(y), "{what}.{k}: {x} against {y}");
        }
    };
    same_type(&our_v, &their_v, "document");
    same_type(&our_v["gpus"][0], &their_v["gpus"][0], "gpu");
    same_type(
        &our_v["gpus"][0]["processes"][0],
        &their_v["gpus"][0]["processes"][0],
        "process",
    );
}

#[test]
fn json_carries_the_simulated_nodes_values_and_null_where_there_is_no_reading() {
    let v: serde_json::Value = serde_json::from_str(&stdout(&["--json"])).unwrap();
    assert_eq!(v["hostname"], "sim-node-0");
    assert_eq!(v["driver_version"], "570.133.20");
    let t = v["query_time"].as_str().unwrap();
    assert_eq!(mask_numbers(t), "N-N-NTN:N:N", "{t}");
    let gpus = v["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 8);
    for (i, g) in gpus.iter().enumerate() {
        assert_eq!(g["index"], i);
        assert!(g["uuid"].as_str().unwrap().starts_with("GPU-"), "{g}");
        assert_eq!(g["name"], "NVIDIA H100 80GB HBM3");
        assert_eq!(g["memory.total"], 81559);
        assert_eq!(g["enforced.power.limit"], 700);
        assert!(
            g["fan.speed"].is_null(),
            "the simulated H100 has no fan: {g}"
        );
        assert!(
            (20..100).contains(&g["temperature.gpu"].as_i64().unwrap()),
            "{g}"
        );
    }
    let p = &gpus[7]["processes"][0];
    assert_eq!(p["pid"], 5151);
    assert_eq!(p["username"], "triton");
    assert_eq!(p["command"], "tritonserver");
    assert_eq!(p["full_command"], serde_json::json!(["tritonserver"]));
    assert_eq!(p["gpu_memory_usage"], 9000);
    // Not a process of this host: no CPU or host memory reading, and no made-up zero.
    assert!(
        p["cpu_percent"].is_null() && p["cpu_memory_usage"].is_null(),
        "{p}"
    );
    let p = &gpus[0]["processes"][0];
    assert_eq!(p["command"], "python3");
    assert_eq!(
        p["full_command"],
        serde_json::json!(["python3", "train.py"])
    );
}

#[test]
fn cp_shows_command_slash_pid_and_gpu_memory() {
    let out = stdout(&["-cp"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[1].ends_with(" | python3/4242(62000M)"),
        "{}",
        lines[1]
    );
    assert!(
        lines[8].ends_with(" | tritonserver/5151(9000M)"),
        "{}",
        lines[8]
    );
    // gpustat's bundles: -cpuFP is -c -p -u -F -P (with P's value left out: draw and limit).
    let out = stdout(&["-cpuFP"]);
    let l = out.lines().nth(8).unwrap();
    assert!(
        l.contains("°C,  ?? %, "),
        "the fan, which the H100 has not: {l}"
    );
    assert!(l.contains(" / 700 W | "), "{l}");
    assert!(l.ends_with(" | triton:tritonserver/5151(9000M)"), "{l}");
    let out = stdout(&["-P", "draw"]);
    let l = out.lines().nth(1).unwrap();
    assert!(l.contains(" W | ") && !l.contains(" / 700 W"), "{l}");
    let out = stdout(&["-e", "dec"]);
    let l = out.lines().nth(1).unwrap();
    assert!(l.contains(" (D:   0 %) | "), "{l}");
}

#[test]
fn no_processes_shows_none_and_no_header_drops_the_first_line() {
    let out = stdout(&["--no-processes", "--no-header"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 8, "{out}");
    for l in lines {
        assert!(l.starts_with('[') && l.ends_with(" MB"), "{l}");
        assert_eq!(l.matches(" |").count(), 2, "{l}");
    }
}

#[test]
fn id_selects_gpus_and_an_unknown_one_is_an_error() {
    let out = stdout(&["--id", "1,3"]);
    let gpus: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(gpus.len(), 2, "{out}");
    assert!(
        gpus[0].starts_with("[1] ") && gpus[1].starts_with("[3] "),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&["--id", "3", "--json"])).unwrap();
    let gpus = v["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0]["index"], 3);
    let o = run(&["--id", "9"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no GPU 9: the GPUs are 0-7"), "{err}");
}

#[test]
fn blank_readings_print_as_gpustat_prints_missing_values() {
    let o = Command::new(tool("stat"))
        .args(["--simulate", "-P"])
        .env_remove("DCGM_LIB_PATH")
        .env_remove("DCGM_SIM_CONFIG")
        .env("DCGM_SIM_FAULTS", "blank=150;155")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    let first = out.lines().nth(1).unwrap();
    assert!(
        first.contains("| ??°C, ") && first.contains(",   ?? / 700 W |"),
        "{first}"
    );
    dcgm::testing::assert_no_sentinel(&out);
    let o = Command::new(tool("stat"))
        .args(["--simulate", "--json"])
        .env_remove("DCGM_LIB_PATH")
        .env_remove("DCGM_SIM_CONFIG")
        .env("DCGM_SIM_FAULTS", "blank=150;155")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["gpus"][0]["temperature.gpu"].is_null(), "{v}");
    assert!(v["gpus"][0]["power.draw"].is_null(), "{v}");
}

#[test]
fn json_with_an_interval_is_refused_as_gpustat_refuses_it() {
    let o = run(&["--json", "-i", "2"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("--json and --interval/-i"));
}
