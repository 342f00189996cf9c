//! The history chart of the selected GPU or instance: utilisation and memory in percent.

use std::collections::VecDeque;

use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::symbols;
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType};

use super::state::State;

/// Utilisation and memory of the selected GPU (or instance) over the last samples.
pub(crate) fn draw(f: &mut ratatui::Frame, s: &State, area: Rect) {
    let Some(r) = s.rows.get(s.selected) else {
        return;
    };
    let points = |h: Option<&VecDeque<u64>>| -> Vec<(f64, f64)> {
        h.map(|h| {
            h.iter()
                .enumerate()
                .map(|(i, v)| (i as f64, *v as f64))
                .collect()
        })
        .unwrap_or_default()
    };
    let util = points(s.util_history.get(&r.entity));
    let mem = points(s.mem_history.get(&r.entity));
    let n = util.len().max(mem.len()).max(2);
    let datasets = vec![
        Dataset::default()
            .name("util %")
            .marker(symbols::Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::default().fg(Color::Green))
            .data(&util),
        Dataset::default()
            .name("mem %")
            .marker(symbols::Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::default().fg(Color::Cyan))
            .data(&mem),
    ];
    let chart = Chart::new(datasets)
        .block(Block::default().borders(Borders::TOP).title(format!(
            "{} history, last {} samples: util % (green), memory % (cyan)",
            r.label.trim_start_matches(" └ "),
            util.len()
        )))
        .x_axis(Axis::default().bounds([0.0, (n - 1) as f64]))
        .y_axis(
            Axis::default()
                .bounds([0.0, 100.0])
                .labels(["0", "50", "100"]),
        );
    f.render_widget(chart, area);
}
