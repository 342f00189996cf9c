//! The report as one self-contained HTML page: per GPU, SVG time-series charts with each
//! finding's window shaded, and the findings listed beside them. No script, no network.

use std::fmt::Write;

use crate::field::Field;
use crate::finding::{Finding, Report};
use crate::limits::Limits;
use crate::sample::Sample;
use crate::window::Window;

/// Points drawn per series at most: a one-hour trace at 100 ms has 36,000 samples per GPU,
/// more than a chart has pixels; each point is the mean of its bucket (blanks left out).
pub const MAX_POINTS: usize = 800;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 120.0;
const LEFT: f64 = 56.0;

/// A reading of a sample, for a series.
type Read = fn(&Sample) -> Option<f64>;

/// A series: its name, its colour and its reading.
type Series = (&'static str, &'static str, Read);

/// A limit line: its name and its reading of the GPU's limits.
type LimitLine = (&'static str, fn(&Limits) -> Option<f64>);

/// A series ready to draw: name, colour and its points.
type Drawn<'a> = (&'a str, &'a str, Vec<(f64, f64)>);

/// A chart: its title, unit, the series drawn, and an optional limit line.
struct Chart {
    title: &'static str,
    unit: &'static str,
    series: Vec<Series>,
    limit: Option<LimitLine>,
}

fn charts() -> Vec<Chart> {
    vec![
        Chart {
            title: "Utilisation",
            unit: "%",
            series: vec![("gpu_utilization", "#1f77b4", |s| s.get(Field::GpuUtil))],
            limit: None,
        },
        Chart {
            title: "SM, tensor, FP32 and DRAM activity",
            unit: "%",
            series: vec![
                ("sm_active", "#2ca02c", |s| {
                    s.get(Field::SmActive).map(|v| v * 100.0)
                }),
                ("tensor_active", "#9467bd", |s| {
                    s.get(Field::TensorActive).map(|v| v * 100.0)
                }),
                ("fp32_active", "#17a589", |s| {
                    s.get(Field::Fp32Active).map(|v| v * 100.0)
                }),
                ("dram_active", "#ff7f0e", |s| {
                    s.get(Field::DramActive).map(|v| v * 100.0)
                }),
            ],
            limit: None,
        },
        Chart {
            title: "PCIe",
            unit: "GB/s",
            series: vec![
                ("rx", "#d62728", |s| {
                    s.get(Field::PcieRxBytes).map(|v| v / 1e9)
                }),
                ("tx", "#8c564b", |s| {
                    s.get(Field::PcieTxBytes).map(|v| v / 1e9)
                }),
            ],
            limit: Some(("link", |l| l.pcie_link_bytes_per_s.map(|v| v / 1e9))),
        },
        Chart {
            title: "NVLink",
            unit: "GB/s",
            series: vec![
                ("rx", "#17becf", |s| {
                    s.get(Field::NvlinkRxBytes).map(|v| v / 1e9)
                }),
                ("tx", "#bcbd22", |s| {
                    s.get(Field::NvlinkTxBytes).map(|v| v / 1e9)
                }),
            ],
            limit: None,
        },
        Chart {
            title: "Power",
            unit: "W",
            series: vec![("power", "#e377c2", |s| s.get(Field::Power))],
            limit: Some(("limit", |l| l.power_limit_w)),
        },
        Chart {
            title: "SM clock",
            unit: "MHz",
            series: vec![("sm_clock", "#7f7f7f", |s| s.get(Field::SmClock))],
            limit: Some(("max", |l| l.max_sm_clock_mhz)),
        },
        Chart {
            title: "Temperature",
            unit: "°C",
            series: vec![("gpu_temp", "#ff9896", |s| s.get(Field::Temperature))],
            limit: None,
        },
    ]
}

/// The page for `report`, drawn from the samples of `window` it judged.
///
/// ```
/// use dcgm_doctor::{Field, Sample, Window};
/// let w = Window::from_samples((0..50).map(|i| Sample::new(i * 100, 0).with(Field::GpuUtil, 50.0)));
/// let page = dcgm_doctor::html::render(&w, &dcgm_doctor::judge(&w));
/// assert!(page.starts_with("<!DOCTYPE html>") && page.contains("<svg"));
/// ```
pub fn render(window: &Window, report: &Report) -> String {
    let (t0, t1) = report.span_ms.unwrap_or((0, 1));
    let span = ((t1 - t0) as f64).max(1.0);
    let mut out = String::new();
    let simulated = if report.simulated {
        " (SIMULATED DATA)"
    } else {
        ""
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>doctor report{simulated}</title><style>{CSS}</style></head><body>\
         <h1>doctor: GPU {}, {} samples over {:.1} s{simulated}</h1>",
        report
            .gpus
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        report.samples,
        span / 1e3
    );
    for (gpu, samples) in window.gpus() {
        let limits = Limits::from_samples(samples);
        let findings: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| f.gpus.contains(&gpu))
            .collect();
        let _ = write!(
            out,
            "<section class=\"gpu\"><h2>GPU {gpu}</h2><div class=\"row\"><div class=\"charts\">"
        );
        for chart in charts() {
            draw(&mut out, &chart, samples, &limits, &findings, t0, span);
        }
        out.push_str("</div><div class=\"findings\">");
        if findings.is_empty() {
            out.push_str("<p>No findings.</p>");
        }
        for f in &findings {
            let _ = write!(
                out,
                "<div class=\"finding {sev}\"><b>{sev_up} {kind}</b> {a:.1}–{b:.1} s\
                 <p>{expl}</p><p class=\"ev\">{ev}</p><p class=\"try\">Try: {advice}</p></div>",
                sev = f.severity,
                sev_up = f.severity.to_string().to_uppercase(),
                kind = f.kind,
                a = (f.start_ms - t0) as f64 / 1e3,
                b = (f.end_ms - t0) as f64 / 1e3,
                expl = escape(&f.explanation),
                ev = escape(
                    &f.evidence
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                advice = escape(&f.advice),
            );
        }
        processes(&mut out, report, gpu);
        out.push_str("</div></div></section>");
    }
    if !report.not_judged.is_empty() {
        out.push_str("<section><h2>Not judged</h2><ul>");
        for n in &report.not_judged {
            let _ = write!(out, "<li><b>{}</b>: {}</li>", n.kind, escape(&n.reason));
        }
        out.push_str("</ul></section>");
    }
    out.push_str("</body></html>\n");
    out
}

/// The processes on `gpu`: memory, its share of the GPU's, SM utilisation where DCGM has it,
/// and how much of the window each was listed.
fn processes(out: &mut String, report: &Report, gpu: u32) {
    let procs: Vec<_> = report.processes.iter().filter(|p| p.gpu == gpu).collect();
    if procs.is_empty() {
        return;
    }
    out.push_str(
        "<table class=\"procs\"><caption>Processes</caption><tr><th>pid</th><th>name</th>\
         <th>memory MiB</th><th>of the GPU</th><th>SM %</th><th>listed</th></tr>",
    );
    let opt = |v: Option<String>| v.unwrap_or_else(|| "?".into());
    for p in procs {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0} %</td></tr>",
            p.pid,
            escape(p.name.as_deref().unwrap_or("?")),
            opt(p.memory_mib.map(|m| m.to_string())),
            opt(p.memory_share.map(|s| format!("{:.1} %", s * 100.0))),
            opt(p.sm_util.map(|s| format!("{s:.0}"))),
            p.listed_share * 100.0
        );
    }
    out.push_str("</table>");
}

/// One chart: shaded finding windows under the series, the limit as a dashed line, the axis
/// range and a legend. A series with no known value is left out; a chart with none says so.
fn draw(
    out: &mut String,
    chart: &Chart,
    samples: &[Sample],
    limits: &Limits,
    findings: &[&Finding],
    t0: i64,
    span: f64,
) {
    let series: Vec<Drawn<'_>> = chart
        .series
        .iter()
        .map(|(name, colour, read)| (*name, *colour, points(samples, *read, t0, span)))
        .filter(|s| !s.2.is_empty())
        .collect();
    let limit = chart
        .limit
        .and_then(|(name, read)| read(limits).map(|v| (name, v)));
    let mut hi = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.1))
        .chain(limit.map(|l| l.1))
        .fold(0.0f64, f64::max);
    if chart.unit == "%" {
        hi = hi.max(100.0);
    }
    if hi <= 0.0 {
        hi = 1.0;
    }
    let plot_w = WIDTH - LEFT - 8.0;
    let x = |f: f64| LEFT + f * plot_w;
    let y = |v: f64| 8.0 + (HEIGHT - 24.0) * (1.0 - v / hi);
    let _ = write!(
        out,
        "<figure><figcaption>{} ({})</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" \
         width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\">",
        chart.title, chart.unit
    );
    let _ = write!(
        out,
        "<rect x=\"{LEFT}\" y=\"8\" width=\"{plot_w:.1}\" height=\"{:.1}\" class=\"plot\"/>",
        HEIGHT - 24.0
    );
    for f in findings {
        let a = ((f.start_ms - t0) as f64 / span).clamp(0.0, 1.0);
        let b = ((f.end_ms - t0) as f64 / span).clamp(0.0, 1.0);
        let _ = write!(
            out,
            "<rect x=\"{:.1}\" y=\"8\" width=\"{:.1}\" height=\"{:.1}\" class=\"shade {}\">\
             <title>{} {}</title></rect>",
            x(a),
            ((b - a) * plot_w).max(1.0),
            HEIGHT - 24.0,
            f.severity,
            f.severity,
            f.kind
        );
    }
    if let Some((name, v)) = limit {
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{yv:.1}\" y2=\"{yv:.1}\" class=\"limit\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\" text-anchor=\"end\">{name} {v:.0}</text>",
            LEFT + plot_w,
            LEFT + plot_w - 2.0,
            y(v) - 2.0,
            yv = y(v)
        );
    }
    for (_, colour, pts) in &series {
        let path: String = pts
            .iter()
            .map(|(f, v)| format!("{:.1},{:.1}", x(*f), y(*v)))
            .collect::<Vec<_>>()
            .join(" ");
        let _ = write!(
            out,
            "<polyline points=\"{path}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.2\"/>"
        );
    }
    let _ = write!(
        out,
        "<text x=\"{:.1}\" y=\"14\" class=\"lbl\" text-anchor=\"end\">{}</text>\
         <text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\" text-anchor=\"end\">0</text>",
        LEFT - 4.0,
        axis(hi),
        LEFT - 4.0,
        HEIGHT - 16.0
    );
    if series.is_empty() {
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\" text-anchor=\"middle\">no readings \
             (unknown, not 0)</text>",
            LEFT + plot_w / 2.0,
            HEIGHT / 2.0
        );
    }
    let mut lx = LEFT;
    for (name, colour, _) in &series {
        let _ = write!(
            out,
            "<text x=\"{lx:.1}\" y=\"{:.1}\" class=\"lbl\" fill=\"{colour}\">{name}</text>",
            HEIGHT - 3.0
        );
        lx += 8.0 * name.len() as f64 + 16.0;
    }
    out.push_str("</svg></figure>");
}

/// The series as (share of the span, bucket mean) points, at most [`MAX_POINTS`].
fn points(samples: &[Sample], read: Read, t0: i64, span: f64) -> Vec<(f64, f64)> {
    let per = samples.len().div_ceil(MAX_POINTS).max(1);
    samples
        .chunks(per)
        .filter_map(|c| {
            let vals: Vec<f64> = c.iter().filter_map(read).collect();
            if vals.is_empty() {
                return None;
            }
            let t = c[c.len() / 2].timestamp_ms;
            Some((
                (t - t0) as f64 / span,
                vals.iter().sum::<f64>() / vals.len() as f64,
            ))
        })
        .collect()
}

fn axis(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:16px;color:#222}\
h1{font-size:18px}h2{font-size:16px;margin:12px 0 4px}\
.row{display:flex;gap:16px;align-items:flex-start}.findings{max-width:520px}\
figure{margin:0 0 6px}figcaption{font-size:12px;color:#444}\
.plot{fill:#fafafa;stroke:#ccc}.limit{stroke:#000;stroke-dasharray:4 3;stroke-width:1}\
.lbl{font-size:10px;fill:#555}.shade{opacity:.18}.shade.problem{fill:#d62728}\
.shade.warning{fill:#ff9f1c}.shade.info{fill:#2b7bba}\
.finding{border-left:4px solid #999;padding:2px 8px;margin:6px 0;font-size:13px}\
.finding.problem{border-color:#d62728}.finding.warning{border-color:#ff9f1c}\
.finding.info{border-color:#2b7bba}.finding p{margin:2px 0}.ev{color:#555;font-size:12px}\
.try{font-style:italic}.procs{font-size:12px;border-collapse:collapse;margin:8px 0}\
.procs caption{text-align:left;font-weight:bold}.procs td,.procs th{padding:1px 6px;\
text-align:right}";
