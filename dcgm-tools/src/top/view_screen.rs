//! The screen's layout: the header line, the GPU blocks scrolled to the selected one, the chart
//! and MIG band, the process table, the message and key lines, the kill menu.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::fields::Fields;
use super::state::State;
use super::{view_chart, view_menu, view_mig, view_processes, view_row};

/// The whole screen: the header, a block per GPU or instance, the history chart and the MIG
/// table (on a tall enough terminal), the processes, the last message, the keys, and the kill
/// menu over them when open.
pub fn draw(f: &mut ratatui::Frame, s: &State, fields: &Fields) {
    let area = f.area();
    // The chart and the MIG table need room: a short terminal shows the GPUs and processes.
    let band = if area.height >= 30 { 8 } else { 0 };
    let [header, gpus, middle, procs, message, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Percentage(40),
        Constraint::Length(band),
        Constraint::Min(4),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let mut head = vec![Span::styled(
        format!(
            "dcgm top  {}  interval {} ms",
            s.source,
            s.interval.as_millis()
        ),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    if s.paused {
        head.push(Span::styled("  PAUSED", Style::default().fg(Color::Yellow)));
    }
    if let Some(e) = &s.error {
        head.push(Span::styled(
            format!("  {e}"),
            Style::default().fg(Color::Red),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(head)), header);

    // One 4-line block per GPU or instance, scrolled so that the selected one is visible.
    let per = 4u16;
    let fit = (gpus.height / per).max(1) as usize;
    let first = s.selected.saturating_sub(fit - 1);
    for (i, r) in s.rows.iter().enumerate().skip(first).take(fit) {
        let y = gpus.y + (i - first) as u16 * per;
        let rect = Rect::new(gpus.x, y, gpus.width, per.min(gpus.y + gpus.height - y));
        view_row::draw(f, s, fields, r, i == s.selected, rect);
    }
    if middle.height > 0 {
        let [chart, mig] =
            Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)])
                .areas(middle);
        view_chart::draw(f, s, chart);
        view_mig::draw(f, s, fields, mig);
    }
    view_processes::draw(f, s, procs);
    if let Some(m) = &s.message {
        f.render_widget(
            Paragraph::new(m.as_str()).style(Style::default().fg(Color::Yellow)),
            message,
        );
    }
    f.render_widget(
        Paragraph::new(
            "↑/↓ select  Tab GPUs/processes  F9/k kill  F6/s sort  r reverse  +/- interval  \
             p pause  q quit",
        ),
        footer,
    );
    if let Some(menu) = &s.menu {
        view_menu::draw(f, menu, area);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::state::tests::{gpu_row, process};
    use dcgm::{Entity, Value};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use std::time::Duration;

    /// The screen `s` draws on a terminal `width` by `height`, a string per line.
    fn screen(s: &State, fields: &Fields, width: u16, height: u16) -> Vec<String> {
        let mut t = Terminal::new(TestBackend::new(width, height)).unwrap();
        t.draw(|f| draw(f, s, fields)).unwrap();
        let buf = t.backend().buffer();
        (0..height)
            .map(|y| {
                let line: String = (0..width).map(|x| buf[(x, y)].symbol()).collect();
                line.trim_end().to_string()
            })
            .collect()
    }

    #[test]
    fn the_screen_has_the_header_a_gpu_block_the_processes_and_the_keys() {
        let fields = Fields::new();
        let mut s = State::new(
            vec![gpu_row(0)],
            Duration::from_millis(500),
            "dcgm-sim".into(),
        );
        let gpu = Entity::gpu(0);
        for (f, v) in [
            (fields.util, 99.0),
            (fields.temp, 56.0),
            (fields.fb_used, 1010.0),
            (fields.fb_total, 143771.0),
            (fields.power, 350.0),
        ] {
            s.values.insert((gpu, f), Value::Double(v));
        }
        s.processes = vec![process(581, "python3", 0, 1002)];
        s.paused = true;
        let lines = screen(&s, &fields, 120, 24);
        assert_eq!(lines[0], "dcgm top  dcgm-sim  interval 500 ms  PAUSED");
        assert_eq!(
            lines[1],
            format!(
                "> GPU 0 NVIDIA H200  health N/A  56 C  SM N/A  MEM N/A  PCIe tx N/A rx N/A  NVLink \
                 tx N/A rx N/A{}",
                "─".repeat(24)
            )
        );
        assert_eq!(
            lines[2],
            // Three bars of a third of the width each.
            format!(
                "Util  enc N/A dec N/A{}Mem{}Power",
                " ".repeat(40 - 21),
                " ".repeat(40 - 3)
            )
        );
        // Too short for the chart and the MIG table: the processes follow the GPUs.
        assert_eq!(lines[11], format!("Processes (1){}", "─".repeat(107)));
        assert_eq!(
            lines[12],
            "PID      USER     NAME                           GPU  TYPE  SM%  MEM%  CPU%  HOST MEM  \
             CONTAINER              GPU MEM▼"
        );
        assert_eq!(
            lines[13],
            "581      root     python3                        0    C     N/A  N/A   -     -         \
             -                      1002 MiB"
        );
        assert_eq!(
            lines[23],
            "↑/↓ select  Tab GPUs/processes  F9/k kill  F6/s sort  r reverse  +/- interval  p pause  \
             q quit"
        );
    }
}
