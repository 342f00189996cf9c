//! The burn's report: the summary printed at the end, `--json` (one object), and `--html`:
//! the doctor's self-contained page of the run's DCGM samples (power against its limit, SM
//! clock against its maximum, temperature, ...), with a TFLOPS chart per GPU and the verdict
//! table added.

use std::fmt::Write;

use dcgm_doctor::{Kind, Severity};
use serde_json::json;

use crate::run::Outcome;
use crate::verdict::{GpuVerdict, Status};

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// The label of a run's data: ` (SIMULATED DATA)` when simulated.
fn simulated(o: &Outcome) -> &'static str {
    if o.simulated { " (SIMULATED DATA)" } else { "" }
}

/// The summary for a terminal: a line per GPU, then each finding with its evidence.
pub fn text(o: &Outcome) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "burn: {} GPU(s), {} {}x{}, {:.1} s, {}{}",
        o.verdict.gpus.len(),
        o.dtype,
        o.size,
        o.size,
        o.seconds,
        o.engine,
        simulated(o)
    );
    for n in &o.notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = writeln!(
        out,
        "{:>4} {:<8} {:>8} {:>9} {:>6} {:>7} {:>6} {:>7} {:>7} {:>8} {:>8} {:>6} {:>5}",
        "GPU",
        "status",
        "TFLOPS",
        "stability",
        "peakC",
        "settleS",
        "memC",
        "W",
        "MHz",
        "capS",
        "thermS",
        "errors",
        "ECC"
    );
    for g in &o.verdict.gpus {
        let ecc = g.ecc_sbe.unwrap_or(0.0) + g.ecc_dbe.unwrap_or(0.0);
        let _ = writeln!(
            out,
            "{:>4} {:<8} {:>8} {:>9} {:>6} {:>7} {:>6} {:>7} {:>7} {:>8} {:>8} {:>6} {:>5}",
            g.gpu,
            status(g.status),
            opt(g.tflops, 1),
            g.stability
                .map_or("-".into(), |s| format!("{:.1}%", s * 100.0)),
            opt(g.peak_temp_c, 0),
            g.temp_settled_s
                .map_or("rising".into(), |s| format!("{s:.0}")),
            opt(g.peak_memory_temp_c, 0),
            opt(g.power_w, 0),
            opt(g.sm_clock_mhz, 0),
            opt(g.power_capped_s, 1),
            opt(g.thermal_throttled_s, 1),
            g.compute.mismatches,
            ecc
        );
    }
    if let Some(m) = o.verdict.median_tflops {
        let _ = writeln!(out, "median: {m:.1} TFLOPS{}", simulated(o));
    }
    for g in &o.verdict.gpus {
        for f in g.findings.iter().filter(|f| f.severity > Severity::Info) {
            let _ = writeln!(
                out,
                "\n{:<8} {} on GPU {}\n  {}\n  evidence: {}\n  try: {}",
                f.severity.to_string().to_uppercase(),
                f.kind,
                g.gpu,
                f.explanation,
                f.evidence
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                f.advice
            );
        }
    }
    let _ = writeln!(
        out,
        "\nverdict: {}{}",
        match o.verdict.status {
            Status::Healthy => "every GPU healthy",
            Status::Warning => "warnings (exit 2)",
            Status::Failure => "failures (exit 3)",
        },
        simulated(o)
    );
    out
}

fn status(s: Status) -> &'static str {
    match s {
        Status::Healthy => "healthy",
        Status::Warning => "WARNING",
        Status::Failure => "FAILURE",
    }
}

/// The report as one JSON object.
pub fn json(o: &Outcome) -> serde_json::Value {
    json!({
        "tool": "dcgm-burn",
        "simulated": o.simulated,
        "engine": o.engine,
        "dtype": o.dtype,
        "size": o.size,
        "seconds": o.seconds,
        "status": o.verdict.status,
        "exit_status": o.verdict.status.exit_code(),
        "median_tflops": o.verdict.median_tflops,
        "notes": o.notes,
        "gpus": o.verdict.gpus.iter().map(|g| {
            let mut v = serde_json::to_value(g).unwrap_or_default();
            v["name"] = json!(o.names.get(&g.gpu));
            v["tflops_series"] = json!(o.run.tflops.get(&g.gpu));
            v
        }).collect::<Vec<_>>(),
    })
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 120.0;
const LEFT: f64 = 56.0;

/// The page: the doctor's, with the burn's title, a verdict table at the top and a TFLOPS
/// chart first in each GPU's charts.
pub fn html(o: &Outcome) -> String {
    let mut report = dcgm_doctor::judge(&o.run.window);
    // What the verdict keeps of the doctor's findings, shaded on the charts, at the verdict's
    // severity (the power cap is information under a stress test), and only those kinds'
    // "not judged".
    let kept = |k: Kind| {
        matches!(
            k,
            Kind::ThermalThrottled | Kind::HardwareErrors | Kind::PowerCapped
        )
    };
    report.findings.retain(|f| kept(f.kind));
    for f in &mut report.findings {
        if f.kind == Kind::PowerCapped {
            f.severity = Severity::Info;
        }
    }
    report.not_judged.retain(|n| kept(n.kind));
    let mut page = dcgm_doctor::html::render(&o.run.window, &report);
    let span = report.span_ms.unwrap_or((0, 1));
    page = page.replacen("<title>doctor report", "<title>burn report", 1);
    let head = format!(
        "<h1>burn: {} {}x{} on {} GPU(s), {:.1} s, {}{}</h1>",
        o.dtype,
        o.size,
        o.size,
        o.verdict.gpus.len(),
        o.seconds,
        escape(&o.engine),
        simulated(o)
    );
    if let (Some(a), Some(b)) = (page.find("<h1>"), page.find("</h1>")) {
        page.replace_range(a..b + 5, &(head + &table(o)));
    }
    for g in &o.verdict.gpus {
        let at = format!(
            "<h2>GPU {}</h2><div class=\"row\"><div class=\"charts\">",
            g.gpu
        );
        let series = o.run.tflops.get(&g.gpu).cloned().unwrap_or_default();
        page = page.replacen(&at, &(at.clone() + &chart(&series, span, o.simulated)), 1);
    }
    page
}

fn table(o: &Outcome) -> String {
    let mut t = String::from(
        "<table class=\"procs\"><caption>Verdict</caption><tr><th>GPU</th><th>status</th>\
         <th>TFLOPS</th><th>last/first</th><th>peak °C</th><th>settled s</th>\
         <th>memory peak °C</th><th>W</th>\
         <th>MHz</th><th>at power cap s</th><th>thermal s</th><th>compute errors</th>\
         <th>ECC</th><th>XID</th><th>findings</th></tr>",
    );
    for g in &o.verdict.gpus {
        let _ = write!(t, "{}", row(g));
    }
    t.push_str("</table>");
    if let Some(m) = o.verdict.median_tflops {
        let _ = write!(t, "<p>Median {m:.1} TFLOPS{}.</p>", simulated(o));
    }
    for n in &o.notes {
        let _ = write!(t, "<p>Note: {}</p>", escape(n));
    }
    t
}

fn row(g: &GpuVerdict) -> String {
    let findings: Vec<String> = g
        .findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .map(|f| {
            format!(
                "<b>{} {}</b>: {}",
                f.severity.to_string().to_uppercase(),
                f.kind,
                escape(&f.explanation)
            )
        })
        .collect();
    format!(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
         <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        g.gpu,
        status(g.status),
        opt(g.tflops, 1),
        g.stability
            .map_or("-".into(), |s| format!("{:.1} %", s * 100.0)),
        opt(g.peak_temp_c, 0),
        g.temp_settled_s
            .map_or("still rising".into(), |s| format!("{s:.0}")),
        opt(g.peak_memory_temp_c, 0),
        opt(g.power_w, 0),
        opt(g.sm_clock_mhz, 0),
        opt(g.power_capped_s, 1),
        opt(g.thermal_throttled_s, 1),
        g.compute.mismatches,
        g.ecc_sbe.unwrap_or(0.0) + g.ecc_dbe.unwrap_or(0.0),
        g.xids
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        findings.join("<br>")
    )
}

/// The TFLOPS chart of one GPU, drawn as the doctor draws its own (same size and classes).
fn chart(series: &[(i64, f64)], (t0, t1): (i64, i64), simulated: bool) -> String {
    let span = ((t1 - t0) as f64).max(1.0);
    let hi = series.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1e-9);
    let plot_w = WIDTH - LEFT - 8.0;
    let x = |t: i64| LEFT + ((t - t0) as f64 / span).clamp(0.0, 1.0) * plot_w;
    let y = |v: f64| 8.0 + (HEIGHT - 24.0) * (1.0 - v / hi);
    let title = if simulated {
        "TFLOPS (modelled, SIMULATED)"
    } else {
        "TFLOPS"
    };
    let mut out = format!(
        "<figure><figcaption>{title}</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" \
         width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\">\
         <rect x=\"{LEFT}\" y=\"8\" width=\"{plot_w:.1}\" height=\"{:.1}\" class=\"plot\"/>",
        HEIGHT - 24.0
    );
    if series.is_empty() {
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\" text-anchor=\"middle\">no TFLOPS \
             measured</text>",
            LEFT + plot_w / 2.0,
            HEIGHT / 2.0
        );
    } else {
        let per = series.len().div_ceil(dcgm_doctor::html::MAX_POINTS).max(1);
        let pts: Vec<String> = series
            .chunks(per)
            .map(|c| {
                let v = c.iter().map(|p| p.1).sum::<f64>() / c.len() as f64;
                format!("{:.1},{:.1}", x(c[0].0), y(v))
            })
            .collect();
        let _ = write!(
            out,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"#d35400\" stroke-width=\"1.2\"/>",
            pts.join(" ")
        );
    }
    let _ = write!(
        out,
        "<text x=\"{:.1}\" y=\"14\" class=\"lbl\" text-anchor=\"end\">{hi:.0}</text>\
         <text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\" text-anchor=\"end\">0</text>\
         <text x=\"{LEFT}\" y=\"{:.1}\" class=\"lbl\" fill=\"#d35400\">tflops</text></svg></figure>",
        LEFT - 4.0,
        LEFT - 4.0,
        HEIGHT - 16.0,
        HEIGHT - 3.0
    );
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
