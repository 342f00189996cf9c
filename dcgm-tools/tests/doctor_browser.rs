//! `doctor --html` in a real browser: headless Chromium renders the report of the H200
//! recording to a screenshot, and the test checks that the page rendered: the chart areas hold
//! drawn series (many colours, not one flat fill) and the findings are in the page's DOM.
//! Skips with a message where Chromium or the recording is absent, unless `DCGM_REQUIRE_REAL=1`.

mod support;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The background of a chart's plot area (`.plot{fill:#fafafa}` in the report's CSS): the
/// pixels that find the charts in the screenshot, wherever the layout puts them.
const PLOT_FILL: [u8; 3] = [0xfa, 0xfa, 0xfa];

/// A chart with series drawn on it, seen at screen resolution, has many colours (each series'
/// colour, their anti-aliased edges, the shaded finding windows); a blank or unstyled one has
/// one or two.
const MIN_CHART_COLOURS: usize = 12;

/// Skips (returning `None`, reported as a skip) where a prerequisite is absent, or fails under
/// DCGM_REQUIRE_REAL=1.
fn need(what: &str, found: Option<PathBuf>) -> Option<PathBuf> {
    if found.is_none() {
        dcgm::testing::skip(&format!("{what} is absent"));
    }
    found
}

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

fn recording() -> Option<PathBuf> {
    let dir = std::env::var_os("DCGM_H200_TRACES").map_or_else(
        || dcgm::testing::shared_dir().join("fixtures/h200-traces"),
        PathBuf::from,
    );
    let f = dir.join("workloads.jsonl");
    f.is_file().then_some(f)
}

fn headless(browser: &Path, args: &[&str], page: &Path) -> std::process::Output {
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
        ])
        .arg(format!(
            "--user-data-dir={}",
            page.with_extension("profile").display()
        ))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap()
}

#[test]
fn the_html_report_renders_in_chromium_with_its_charts_and_findings() {
    let Some(browser) = need("chromium (apt-get install chromium)", chromium()) else {
        return;
    };
    let Some(trace) = need(
        "the H200 recording (../shared/fixtures/h200-traces)",
        recording(),
    ) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("doctor-browser-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    let o = support::tool_command("doctor")
        .arg("--replay")
        .arg(&trace)
        .arg("--html")
        .arg(&page)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let kinds: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect();
    assert!(!kinds.is_empty());

    // The DOM the browser built holds every finding and the charts.
    let dom = headless(&browser, &["--dump-dom"], &page);
    assert!(dom.status.success(), "{dom:?}");
    let dom = String::from_utf8_lossy(&dom.stdout);
    for k in &kinds {
        assert!(
            dom.contains(&format!("{} {k}</b>", severity_of(&report, k))),
            "{k}"
        );
    }
    assert!(dom.matches("<svg").count() >= 7, "one chart per signal");

    // The screenshot: find the plot areas by their fill, then count the colours inside them.
    let shot = dir.join("report.png");
    let o = headless(
        &browser,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1400,1400",
        ],
        &page,
    );
    assert!(o.status.success(), "{o:?}");
    let (w, h, rgb) = decode(&shot);
    let plot: Vec<(u32, u32)> = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .filter(|&(x, y)| px(&rgb, w, x, y) == PLOT_FILL)
        .collect();
    assert!(
        plot.len() > (w * h / 100) as usize,
        "the plot areas cover a real part of the page: {} of {} pixels",
        plot.len(),
        w * h
    );
    // The charts' columns: from the leftmost to the rightmost plot pixel. Their rows: runs of
    // rows that show the plot's fill (the shaded finding windows cover the rest of it).
    let x0 = plot.iter().map(|p| p.0).min().unwrap();
    let x1 = plot.iter().map(|p| p.0).max().unwrap();
    let mut per_row = vec![0u32; h as usize];
    for p in &plot {
        per_row[p.1 as usize] += 1;
    }
    let mut charts: Vec<(u32, u32)> = Vec::new();
    for y in 0..h {
        if per_row[y as usize] < 20 {
            continue;
        }
        match charts.last_mut() {
            Some((_, end)) if *end == y => *end = y + 1,
            _ => charts.push((y, y + 1)),
        }
    }
    charts.retain(|(a, b)| b - a >= 20);
    assert!(charts.len() >= 7, "one chart per signal: {charts:?}");
    for (a, b) in &charts {
        let colours: HashSet<[u8; 3]> = (*a..*b)
            .flat_map(|y| (x0..=x1).map(move |x| (x, y)))
            .map(|(x, y)| px(&rgb, w, x, y))
            .collect();
        assert!(
            colours.len() >= MIN_CHART_COLOURS,
            "the chart in rows {a}..{b} has {} colours: blank",
            colours.len()
        );
    }
}

fn severity_of(report: &serde_json::Value, kind: &str) -> String {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind)
        .unwrap()["severity"]
        .as_str()
        .unwrap()
        .to_uppercase()
}

/// The PNG's width, height and pixels as RGB.
fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let rgb = buf[..info.buffer_size()]
        .chunks(channels)
        .flat_map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width, info.height, rgb)
}

fn px(rgb: &[u8], w: u32, x: u32, y: u32) -> [u8; 3] {
    let i = ((y * w + x) * 3) as usize;
    [rgb[i], rgb[i + 1], rgb[i + 2]]
}
