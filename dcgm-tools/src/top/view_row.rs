//! A GPU or MIG instance's block: title line with its readings and health, the bars, the
//! sparkline.

use dcgm::{EntityGroup, FieldId, HealthResult, Value};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Gauge, Sparkline};

use super::fields::Fields;
use super::format::{fmt_opt, rate};
use super::state::{GpuRow, State};

/// A GPU or instance block: its title line (name, health, temperature, clocks, throughput),
/// the utilisation, memory and power bars, and the utilisation sparkline.
pub(crate) fn draw(
    f: &mut ratatui::Frame,
    s: &State,
    fields: &Fields,
    r: &GpuRow,
    selected: bool,
    rect: Rect,
) {
    let get = |fid: FieldId| s.values.get(&(r.entity, fid)).and_then(Value::as_f64);
    let marker = if selected { "> " } else { "  " };
    let title = Line::from(vec![
        Span::styled(
            format!("{marker}{} {}", r.label, r.name),
            if selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default().add_modifier(Modifier::BOLD)
            },
        ),
        Span::raw("  health "),
        health_span(
            s.health
                .get(&r.gpu)
                .filter(|_| r.entity.group == EntityGroup::Gpu),
        ),
        Span::raw(readings(get, fields)),
    ]);
    let block = Block::default().borders(Borders::TOP).title(title);
    let inner = block.inner(rect);
    f.render_widget(block, rect);
    if inner.height == 0 {
        return;
    }
    let [bars, spark] = Layout::vertical([Constraint::Length(2), Constraint::Min(0)]).areas(inner);
    draw_bars(f, &get, fields, r.power_limit_w, bars);
    if spark.height > 0 {
        let h: Vec<u64> = s
            .util_history
            .get(&r.entity)
            .map(|h| {
                let skip = h.len().saturating_sub(spark.width as usize);
                h.iter().skip(skip).copied().collect()
            })
            .unwrap_or_default();
        f.render_widget(Sparkline::default().data(&h).max(100), spark);
    }
}

/// The utilisation (with the encoder and decoder use in its title), memory and power bars, side
/// by side in `area`.
fn draw_bars(
    f: &mut ratatui::Frame,
    get: &dyn Fn(FieldId) -> Option<f64>,
    fields: &Fields,
    power_limit_w: Option<u32>,
    area: Rect,
) {
    let [u, m, p] = Layout::horizontal([Constraint::Ratio(1, 3); 3]).areas(area);
    let util = get(fields.util);
    f.render_widget(
        gauge(
            &format!(
                "Util  enc {} dec {}",
                fmt_opt(get(fields.enc), "%", 0),
                fmt_opt(get(fields.dec), "%", 0)
            ),
            util.map(|u| u / 100.0),
            fmt_opt(util, "%", 0),
            Color::Green,
        ),
        u,
    );
    let (used, total) = (get(fields.fb_used), get(fields.fb_total));
    let mem_ratio = used
        .zip(total)
        .filter(|(_, t)| *t > 0.0)
        .map(|(u, t)| u / t);
    f.render_widget(
        gauge(
            "Mem",
            mem_ratio,
            format!(
                "{} / {}",
                fmt_opt(used, " MiB", 0),
                fmt_opt(total, " MiB", 0)
            ),
            Color::Cyan,
        ),
        m,
    );
    let power = get(fields.power);
    let limit = power_limit_w.map(f64::from);
    let limit_text = limit.map_or_else(|| "N/A".into(), |l| format!("{l:.0} W"));
    f.render_widget(
        gauge(
            "Power",
            power
                .zip(limit)
                .filter(|(_, l)| *l > 0.0)
                .map(|(p, l)| p / l),
            format!("{} / {limit_text}", fmt_opt(power, " W", 0)),
            Color::Magenta,
        ),
        p,
    );
}

/// The title's readings after the health: temperature, clocks, PCIe and NVLink throughput.
fn readings(get: impl Fn(FieldId) -> Option<f64>, fields: &Fields) -> String {
    format!(
        "  {}  SM {}  MEM {}  PCIe tx {} rx {}  NVLink tx {} rx {}",
        fmt_opt(get(fields.temp), " C", 0),
        fmt_opt(get(fields.sm_clock), " MHz", 0),
        fmt_opt(get(fields.mem_clock), " MHz", 0),
        rate(get(fields.pcie_tx)),
        rate(get(fields.pcie_rx)),
        rate(get(fields.nvlink_tx)),
        rate(get(fields.nvlink_rx)),
    )
}

fn health_span(h: Option<&HealthResult>) -> Span<'static> {
    match h {
        Some(HealthResult::Pass) => Span::styled("OK", Style::default().fg(Color::Green)),
        Some(HealthResult::Warn) => Span::styled("WARN", Style::default().fg(Color::Yellow)),
        Some(HealthResult::Fail) => Span::styled("FAIL", Style::default().fg(Color::Red)),
        None => Span::raw("N/A"),
    }
}

fn gauge(title: &str, ratio: Option<f64>, text: String, color: Color) -> Gauge<'static> {
    Gauge::default()
        .block(Block::default().title(title.to_string()))
        .gauge_style(Style::default().fg(color))
        .ratio(ratio.unwrap_or(0.0).clamp(0.0, 1.0))
        .label(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readings_have_units_and_na_for_blanks() {
        let fields = Fields::new();
        let get = |f: FieldId| {
            if f == fields.temp {
                Some(56.0)
            } else if f == fields.sm_clock {
                Some(1980.0)
            } else if f == fields.pcie_tx {
                Some(2_400_000.0)
            } else {
                None
            }
        };
        assert_eq!(
            readings(get, &fields),
            "  56 C  SM 1980 MHz  MEM N/A  PCIe tx 2 MB/s rx N/A  NVLink tx N/A rx N/A"
        );
    }

    #[test]
    fn health_reads_ok_warn_fail_or_na() {
        let text = |h: Option<&HealthResult>| health_span(h).content.to_string();
        assert_eq!(text(Some(&HealthResult::Pass)), "OK");
        assert_eq!(text(Some(&HealthResult::Warn)), "WARN");
        assert_eq!(text(Some(&HealthResult::Fail)), "FAIL");
        assert_eq!(text(None), "N/A");
    }
}
