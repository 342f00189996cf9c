//! The tools' nvidia-smi formats against what nvidia-smi prints on an H200
//! (`../shared/fixtures/h200-cli/gpustat-nvsmi-reference.txt`): `dmon -s` groups' header and
//! units lines, and `query -q`'s sections, labels and indentation.

mod support;

use std::process::Output;

use support::real_libdcgm;

/// The H200's nvidia-smi outputs, or `None` (the test reported skipped) without `../shared`.
fn fixture() -> Option<String> {
    let p = dcgm::testing::shared_path("fixtures/h200-cli/gpustat-nvsmi-reference.txt")?;
    Some(std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

/// The lines the fixture holds under `== {command}`, up to the next `== ` line.
fn captured(fixture: &str, command: &str) -> Vec<String> {
    let mut lines = fixture.lines();
    lines
        .by_ref()
        .find(|l| l.trim_end() == format!("== {command}"))
        .unwrap_or_else(|| panic!("no {command:?} in the fixture"));
    lines
        .take_while(|l| !l.starts_with("== "))
        .map(String::from)
        .collect()
}

fn run(name: &str, args: &[&str], env: &[(&str, String)]) -> Output {
    let mut cmd = support::tool_command(name);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn dmon_s_groups_print_nvidia_smi_dmon_header_and_units_byte_for_byte() {
    let Some(fx) = fixture() else {
        return;
    };
    for group in ["p", "u", "c", "v", "m", "e", "t", "pucvmet"] {
        let want = captured(&fx, &format!("nvidia-smi dmon -s {group} -c 2"));
        let o = run(
            "dmon",
            &["--simulate", "-s", group, "-c", "2", "-d", "50"],
            &[],
        );
        assert!(o.status.success(), "-s {group}: {o:?}");
        let out = stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], want[0], "-s {group} header");
        assert_eq!(lines[1], want[1], "-s {group} units");
        // Every row: the GPU index in five places, then a cell per column, each followed by
        // a space, as nvidia-smi's own rows (the fixture's) are.
        let columns = want[0].split_whitespace().count() - 2;
        let rows = &lines[2..];
        assert!(
            !rows.is_empty() && rows.len().is_multiple_of(2),
            "-s {group}: {out}"
        );
        for row in rows
            .iter()
            .copied()
            .chain(want[2..].iter().map(String::as_str))
        {
            assert_eq!(row.len(), want[0].len(), "-s {group} row width: {row:?}");
            assert_eq!(
                row.split_whitespace().count(),
                1 + columns,
                "-s {group}: {row:?}"
            );
            assert!(row[..5].trim().parse::<u32>().is_ok(), "{row:?}");
        }
        dcgm::testing::assert_no_sentinel(&out);
    }
}

#[test]
fn dmon_s_prints_a_dash_where_dcgm_has_no_value() {
    // jpg and ofa (profiling-only) and ccpm (no DCGM field) are never read.
    let o = run(
        "dmon",
        &["--simulate", "-s", "um", "-i", "0", "-c", "1"],
        &[],
    );
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let header: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    let row: Vec<&str> = out.lines().nth(2).unwrap().split_whitespace().collect();
    for col in ["jpg", "ofa", "ccpm"] {
        let i = header.iter().position(|h| *h == col).unwrap() - 1;
        assert_eq!(row[i], "-", "{col}: {out}");
    }
}

#[test]
fn dmon_s_with_e_adds_the_fields_after_the_groups_columns() {
    let Some(fx) = fixture() else {
        return;
    };
    let want = captured(&fx, "nvidia-smi dmon -s p -c 2");
    let o = run(
        "dmon",
        &["--simulate", "-s", "p", "-e", "fb_used", "-c", "1"],
        &[],
    );
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("{}fb_used ", want[0]));
    assert_eq!(lines[1], format!("{}    MiB ", want[1]));
    assert_eq!(lines[2].split_whitespace().count(), 5, "{out}");
}

#[test]
fn dmon_s_rejects_an_unknown_group_and_non_gpu_entities() {
    let o = run("dmon", &["--simulate", "-s", "px", "-c", "1"], &[]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown -s group 'x'"), "{err}");
    let o = run(
        "dmon",
        &["--simulate", "-s", "p", "-i", "gi:0", "-c", "1"],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("GPUs only"));
}

/// The label part of a report line, the value masked: what is before `: `, or the whole line
/// for a heading (a GPU's heading names its bus id, masked too).
fn label(line: &str) -> String {
    if line.starts_with("GPU ") {
        return "GPU".into();
    }
    match line.find(": ") {
        Some(i) => line[..i].to_string(),
        None => line.trim_end_matches(' ').to_string(),
    }
}

/// The headings of `nvidia-smi -q` that each `-d` section prints.
fn section_blocks(section: &str) -> &'static [&'static str] {
    match section {
        "PCIE" => &["PCI"],
        "PERFORMANCE" => &[
            "Performance State",
            "Clocks Event Reasons",
            "Clocks Event Reasons Counters",
            "Sparse Operation Mode",
        ],
        "CLOCK" => &[
            "Clocks Event Reasons",
            "Clocks Event Reasons Counters",
            "Clocks",
            "Applications Clocks",
            "Default Applications Clocks",
            "Deferred Clocks",
            "Max Clocks",
            "Max Customer Boost Clocks",
            "Clock Policy",
        ],
        "POWER" => &[
            "GPU Power Readings",
            "GPU Memory Power Readings",
            "Module Power Readings",
        ],
        "MEMORY" => &[
            "FB Memory Usage",
            "BAR1 Memory Usage",
            "Conf Compute Protected Memory Usage",
        ],
        "COMPUTE" => &["Compute Mode"],
        "UTILIZATION" => &["Utilization"],
        "ECC" => &["ECC Mode", "ECC Errors"],
        "PAGE_RETIREMENT" => &["Retired Pages"],
        "ROW_REMAPPER" => &["Remapped Rows"],
        "TEMPERATURE" => &["Temperature"],
        other => panic!("no blocks for {other}"),
    }
}

/// nvidia-smi's sample sections, which it prints only for `-d POWER` / `-d CLOCK` (so the
/// fixture's whole `nvidia-smi -q` has none): (the block they follow, their headings). Each
/// has the same five lines, as nvidia-smi prints them (driver 580/595 `-q -d POWER,CLOCK`):
///
/// ```text
///     Power Samples
///         Duration                                       : 2.36 sec
///         Number of Samples                              : 119
///         Max                                            : 16.48 W
///         Min                                            : 10.43 W
///         Avg                                            : 11.93 W
/// ```
const SAMPLE_SECTIONS: &[(&str, &str, &[&str])] = &[
    ("POWER", "GPU Power Readings", &["Power Samples"]),
    (
        "CLOCK",
        "Max Customer Boost Clocks",
        &["SM Clock Samples", "Memory Clock Samples"],
    ),
];

/// The lines of a sample section, `value` on each.
fn sample_section(heading: &str, value: &str) -> Vec<String> {
    let mut out = vec![format!("    {heading}")];
    for label in ["Duration", "Number of Samples", "Max", "Min", "Avg"] {
        out.push(format!("{:<55}: {value}", format!("        {label}")));
    }
    out
}

/// The fixture's `nvidia-smi -q` cut to what `-d sections` prints: its header up to the GPU's
/// heading, then the GPU's blocks (a line at four spaces and what is indented under it) that
/// those sections name, in the report's order; with POWER or CLOCK, nvidia-smi's sample
/// sections where `-d` puts them.
fn expected_report(fx: &str, sections: &[&str]) -> Vec<String> {
    let all = captured(fx, "nvidia-smi -q");
    let gpu = all.iter().position(|l| l.starts_with("GPU ")).unwrap();
    let mut out: Vec<String> = all[..=gpu].to_vec();
    let wanted: Vec<&str> = sections
        .iter()
        .flat_map(|s| section_blocks(s))
        .copied()
        .collect();
    let mut keep = false;
    let mut after: Option<&[&str]> = None;
    for line in &all[gpu + 1..] {
        if line.starts_with("    ") && !line.starts_with("     ") {
            // The block a sample section follows has ended: the samples come first.
            for heading in after.take().into_iter().flatten() {
                out.extend(sample_section(heading, "N/A"));
            }
            let name = label(line);
            keep = wanted.contains(&name.trim());
            after = SAMPLE_SECTIONS
                .iter()
                .find(|(s, block, _)| keep && sections.contains(s) && *block == name.trim())
                .map(|(_, _, headings)| *headings);
        }
        if keep {
            out.push(line.clone());
        }
    }
    out
}

fn labels<S: AsRef<str>>(lines: &[S]) -> Vec<String> {
    lines
        .iter()
        .map(|l| label(l.as_ref()))
        .filter(|l| !l.is_empty())
        .collect()
}

/// `grep -A after pattern`: the matching lines and `after` lines behind each, `--` between
/// groups that do not touch.
fn grep_after<S: AsRef<str>>(lines: &[S], pattern: &str, after: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut last: Option<usize> = None;
    let mut i = 0;
    while i < lines.len() {
        if lines[i].as_ref().contains(pattern) {
            let start = match last {
                Some(l) if i <= l + 1 => l + 1,
                Some(_) => {
                    out.push("--".to_string());
                    i
                }
                None => i,
            };
            let mut end = (i + after).min(lines.len() - 1);
            // A match inside the context extends it, as grep's does.
            let mut j = i + 1;
            while j <= end {
                if lines[j].as_ref().contains(pattern) {
                    end = (j + after).min(lines.len() - 1);
                }
                j += 1;
            }
            for l in &lines[start..=end] {
                out.push(l.as_ref().to_string());
            }
            last = Some(end);
            i = end + 1;
        } else {
            i += 1;
        }
    }
    out
}

fn report_lines(o: &Output) -> Vec<String> {
    assert!(o.status.success(), "{o:?}");
    let out = stdout(o);
    dcgm::testing::assert_no_sentinel(&out);
    // The real library's NVML injection shim writes its own notes to stdout, not the tool.
    let mut lines: Vec<String> = out
        .lines()
        .filter(|l| !l.starts_with("[./nvml-injection/"))
        .map(String::from)
        .collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

#[test]
fn query_q_sections_have_nvidia_smi_q_labels_and_indentation_on_the_simulator() {
    let Some(fx) = fixture() else {
        return;
    };
    let sections = [
        "PCIE",
        "PERFORMANCE",
        "MEMORY",
        "COMPUTE",
        "UTILIZATION",
        "ECC",
        "PAGE_RETIREMENT",
        "ROW_REMAPPER",
        "TEMPERATURE",
        "POWER",
        "CLOCK",
    ];
    let o = run(
        "query",
        &["--simulate", "-i", "0", "-q", "-d", &sections.join(",")],
        &[],
    );
    let got = report_lines(&o);
    assert_eq!(labels(&got), labels(&expected_report(&fx, &sections)));
}

#[test]
fn query_q_d_clock_greps_the_clock_event_reasons_as_nvidia_smi_q_does() {
    let Some(fx) = fixture() else {
        return;
    };
    let o = run(
        "query",
        &["--simulate", "-i", "0", "-q", "-d", "clock"],
        &[],
    );
    let got = report_lines(&o);
    let full = captured(&fx, "nvidia-smi -q");
    let want = grep_after(&full, "Clocks Event Reasons", 6);
    let got = grep_after(&got, "Clocks Event Reasons", 6);
    // The reasons' group (the heading and six lines) is nvidia-smi's line for line.
    assert_eq!(labels(&got[..7]), labels(&want[..7]));
    assert!(got[0].ends_with("Clocks Event Reasons"), "{got:?}");
}

/// The five lines under a sample section's heading.
fn sample_lines<'a>(lines: &'a [String], heading: &str) -> &'a [String] {
    let at = lines
        .iter()
        .position(|l| l.as_str() == format!("    {heading}"))
        .unwrap_or_else(|| panic!("no {heading:?} in {lines:#?}"));
    &lines[at + 1..at + 6]
}

fn value_of(line: &str) -> &str {
    line.split_once(": ").map_or("", |(_, v)| v)
}

#[test]
fn query_q_d_power_clock_prints_the_sample_sections_from_dcgms_samples() {
    let o = run(
        "query",
        &["--simulate", "-i", "0", "-q", "-d", "POWER,CLOCK"],
        &[],
    );
    let got = report_lines(&o);
    for (heading, unit) in [
        ("Power Samples", " W"),
        ("SM Clock Samples", " MHz"),
        ("Memory Clock Samples", " MHz"),
    ] {
        let lines = sample_lines(&got, heading);
        let labels: Vec<String> = lines.iter().map(|l| label(l)).collect();
        assert_eq!(
            labels,
            [
                "        Duration",
                "        Number of Samples",
                "        Max",
                "        Min",
                "        Avg"
            ]
            .map(|l| format!("{l:<55}")),
            "{got:#?}"
        );
        // nvidia-smi's `2.36 sec`: seconds with two decimals.
        let duration = value_of(&lines[0]);
        let secs = duration
            .strip_suffix(" sec")
            .unwrap_or_else(|| panic!("{duration}"));
        assert_eq!(
            secs.split_once('.').map(|(_, d)| d.len()),
            Some(2),
            "{duration}"
        );
        // The embedded engine has at least the sample it took for the report.
        let n: usize = value_of(&lines[1]).parse().unwrap();
        assert!(n >= 1, "{lines:?}");
        let num = |l: &str| -> f64 {
            let v = value_of(l);
            v.strip_suffix(unit)
                .unwrap_or_else(|| panic!("{v:?} has no {unit:?}"))
                .parse()
                .unwrap()
        };
        let (max, min, avg) = (num(&lines[2]), num(&lines[3]), num(&lines[4]));
        assert!(min <= avg && avg <= max, "{lines:?}");
        if unit == " W" {
            // Watts with two decimals, as nvidia-smi's `691.32 W`.
            let v = value_of(&lines[2]).trim_end_matches(unit);
            assert_eq!(v.split_once('.').map(|(_, d)| d.len()), Some(2), "{v}");
        }
    }
}

#[test]
fn query_q_whole_report_has_sparse_operation_mode_and_no_sample_sections() {
    let Some(fx) = fixture() else {
        return;
    };
    let o = run("query", &["--simulate", "-i", "0", "-q"], &[]);
    let got = report_lines(&o);
    // nvidia-smi prints the samples only for `-d POWER` / `-d CLOCK`: its whole report (the
    // H200's) has none, and neither has ours.
    let full = captured(&fx, "nvidia-smi -q");
    assert!(!full.iter().any(|l| l.contains("Samples")));
    assert!(!got.iter().any(|l| l.contains("Samples")), "{got:#?}");
    // Sparse Operation Mode: between the clock-event counters and the memory, as nvidia-smi's.
    let around = |lines: &[String]| -> Vec<String> {
        let at = lines
            .iter()
            .position(|l| l.starts_with("    Sparse Operation Mode"))
            .unwrap_or_else(|| panic!("no Sparse Operation Mode in {lines:#?}"));
        labels(&lines[at - 1..=at + 1])
    };
    assert_eq!(around(&got), around(&full));
    let line = got
        .iter()
        .find(|l| l.starts_with("    Sparse Operation Mode"))
        .unwrap();
    // DCGM has no field for it.
    assert_eq!(value_of(line), "N/A");
}

#[test]
fn query_q_sample_window_must_be_a_positive_number_of_seconds() {
    for bad in ["0", "-1", "soon"] {
        let o = run(
            "query",
            &["--simulate", "-q", "-d", "POWER", "--sample-window", bad],
            &[],
        );
        assert_eq!(o.status.code(), Some(2), "{bad}: {o:?}");
    }
    let o = run(
        "query",
        &[
            "--simulate",
            "-i",
            "0",
            "-q",
            "-d",
            "POWER",
            "--sample-window",
            "0.5",
        ],
        &[],
    );
    let got = report_lines(&o);
    sample_lines(&got, "Power Samples");
}

#[test]
fn query_q_rejects_an_unknown_section() {
    let o = run("query", &["--simulate", "-q", "-d", "CLOCKS"], &[]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown -d section \"CLOCKS\""));
}

#[test]
fn query_q_on_the_real_library_matches_nvidia_smi_q_on_the_h200_capture() {
    let Some(lib) = real_libdcgm() else {
        return;
    };
    let Some(fx) = fixture() else {
        return;
    };
    let Some(yaml) = dcgm::testing::shared_path("fixtures/nvml-capture-h200.yaml") else {
        return;
    };
    let sections = ["CLOCK", "PERFORMANCE", "PCIE", "POWER"];
    let o = run(
        "query",
        &[
            "--lib",
            lib.to_str().unwrap(),
            "-q",
            "-d",
            &sections.join(","),
        ],
        &[
            ("NVML_INJECTION_MODE", "True".into()),
            ("NVML_YAML_FILE", yaml.display().to_string()),
        ],
    );
    let got = report_lines(&o);
    let want = expected_report(&fx, &sections);
    assert_eq!(labels(&got), labels(&want), "{}", got.join("\n"));
    assert_eq!(
        labels(&grep_after(&got, "Clocks Event Reasons", 6)),
        labels(&grep_after(&want, "Clocks Event Reasons", 6))
    );
    // The capture's readings come through, not N/A.
    let line = |l: &str| got.iter().find(|g| g.trim_start().starts_with(l)).unwrap();
    assert!(line("Performance State").ends_with(": P0"), "{got:?}");
    assert!(line("Max Power Limit").ends_with(" W"), "{got:?}");
    // The real library's samples of the power and clocks, not N/A; the capture's memory clock.
    assert!(
        sample_lines(&got, "Power Samples")[2].ends_with(" W"),
        "{got:?}"
    );
    let mem = sample_lines(&got, "Memory Clock Samples");
    assert!(value_of(&mem[1]).parse::<usize>().unwrap() >= 1, "{mem:?}");
    assert_eq!(value_of(&mem[2]), "3201 MHz", "{mem:?}");
    assert!(
        sample_lines(&got, "SM Clock Samples")[4].ends_with(" MHz"),
        "{got:?}"
    );
}

#[test]
fn dmon_s_on_the_real_library_reads_the_h200_capture_and_measures_violations() {
    let Some(lib) = real_libdcgm() else {
        return;
    };
    let Some(fx) = fixture() else {
        return;
    };
    let want = captured(&fx, "nvidia-smi dmon -s pucvmet -c 2");
    let Some(yaml) = dcgm::testing::shared_path("fixtures/nvml-capture-h200.yaml") else {
        return;
    };
    let o = run(
        "dmon",
        &[
            "--lib",
            lib.to_str().unwrap(),
            "-s",
            "pucvmet",
            "-c",
            "3",
            "-d",
            "200",
        ],
        &[
            ("NVML_INJECTION_MODE", "True".into()),
            ("NVML_YAML_FILE", yaml.display().to_string()),
        ],
    );
    let lines = report_lines(&o);
    assert_eq!(lines[..2], want[..2]);
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    let rows: Vec<Vec<&str>> = lines[2..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 3, "{lines:?}");
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap() - 1;
    // The capture's H200: its power and memory clock come through.
    assert_eq!(rows[0][col("mclk")], "3201", "{lines:?}");
    assert!(rows[0][col("pwr")].parse::<u32>().is_ok(), "{lines:?}");
    // The violation columns measure an interval: nothing on the first sample, a number once
    // the engine has sampled again.
    assert_eq!(rows[0][col("pviol")], "-", "{lines:?}");
    assert!(rows[2][col("pviol")].parse::<u32>().is_ok(), "{lines:?}");
    assert!(["0", "1"].contains(&rows[2][col("tviol")]), "{lines:?}");
}
