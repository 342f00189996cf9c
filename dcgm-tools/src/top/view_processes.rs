//! The process table: a row per process and GPU, the sort column marked in the header.

use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Cell, Row, Table};

use super::format::{fmt_opt, host_col};
use super::state::{Focus, Process, SORT_COLUMNS, State};

/// The process table, sorted as chosen, its sort column marked, scrolled to the selected
/// process.
pub(crate) fn draw(f: &mut ratatui::Frame, s: &State, area: Rect) {
    let col = |i: usize| {
        let mark = if i == s.sort {
            if s.reverse { "▲" } else { "▼" }
        } else {
            ""
        };
        Cell::from(format!("{}{mark}", SORT_COLUMNS[i]))
    };
    let sorted = s.sorted_processes();
    let rows = sorted.iter().enumerate().map(|(i, p)| {
        let row = Row::new(cells(p));
        if s.focus == Focus::Processes && i == s.proc_selected {
            row.style(Style::default().add_modifier(Modifier::REVERSED))
        } else {
            row
        }
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Min(10),
            Constraint::Length(4),
            Constraint::Length(5),
            Constraint::Length(4),
            Constraint::Length(5),
            Constraint::Length(5),
            Constraint::Length(9),
            Constraint::Length(22),
            Constraint::Length(10),
        ],
    )
    .header(
        Row::new((0..SORT_COLUMNS.len()).map(col).collect::<Vec<_>>())
            .style(Style::default().add_modifier(Modifier::BOLD)),
    )
    .block(
        Block::default()
            .borders(Borders::TOP)
            .title(match &s.proc_error {
                Some(e) => format!("Processes: N/A ({e})"),
                None => format!("Processes ({})", s.processes.len()),
            }),
    );
    // Scrolled so that the selected process is visible.
    let mut state = ratatui::widgets::TableState::default();
    if s.focus == Focus::Processes {
        state.select(Some(s.proc_selected));
    }
    f.render_stateful_widget(table, area, &mut state);
}

/// A process's cells in the order of [`SORT_COLUMNS`].
fn cells(p: &Process) -> Vec<String> {
    let pct = |v: Option<f64>| fmt_opt(v, "", 0);
    vec![
        p.pid.to_string(),
        p.user.clone(),
        p.name.clone(),
        p.gpu.to_string(),
        p.kind.label().to_string(),
        pct(p.sm_util),
        pct(p.mem_util),
        host_col(p, p.cpu_percent.map(|c| format!("{c:.1}"))),
        host_col(p, p.host_mem_mib.map(|m| format!("{m} MiB"))),
        host_col(p, p.container.clone()),
        format!("{} MiB", p.mem_mib),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::state::tests::process;

    #[test]
    fn a_simulated_process_has_dashes_for_what_proc_knows() {
        let mut p = process(581, "python3 train.py", 1, 1002);
        p.sm_util = Some(87.4);
        assert_eq!(
            cells(&p),
            [
                "581",
                "root",
                "python3 train.py",
                "1",
                "C",
                "87",
                "N/A",
                "-",
                "-",
                "-",
                "1002 MiB"
            ]
        );
    }

    #[test]
    fn a_host_process_has_its_cpu_memory_and_container() {
        let mut p = process(1234, "train", 0, 512);
        p.kind.graphics = true;
        p.host = Some(99);
        p.cpu_percent = Some(12.345);
        p.host_mem_mib = Some(2048);
        p.container = Some("docker:0123456789ab".into());
        assert_eq!(
            cells(&p),
            [
                "1234",
                "root",
                "train",
                "0",
                "C+G",
                "N/A",
                "N/A",
                "12.3",
                "2048 MiB",
                "docker:0123456789ab",
                "512 MiB"
            ]
        );
    }
}
