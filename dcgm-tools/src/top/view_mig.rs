//! The MIG table: a row per GPU instance with its utilisation, memory and processes.

use dcgm::{Entity, EntityGroup, FieldId, Value};
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Row, Table};

use super::fields::Fields;
use super::format::fmt_opt;
use super::state::{GpuRow, Process, State};

/// One row per GPU instance: its utilisation and memory, and the processes of its GPU.
pub(crate) fn draw(f: &mut ratatui::Frame, s: &State, fields: &Fields, area: Rect) {
    let rows: Vec<Row> = s
        .rows
        .iter()
        .filter(|r| r.entity.group == EntityGroup::GpuInstance)
        .map(|r| Row::new(cells(s, fields, r)))
        .collect();
    let title = if rows.is_empty() {
        "MIG: no GPU in MIG mode"
    } else {
        "MIG instances (? = on the GPU, instance unknown)"
    };
    let table = Table::new(
        rows,
        [
            Constraint::Length(11),
            Constraint::Length(10),
            Constraint::Length(5),
            Constraint::Length(10),
            Constraint::Min(10),
        ],
    )
    .header(
        Row::new(["INSTANCE", "SLICES", "UTIL", "MEM", "PROCESSES"])
            .style(Style::default().add_modifier(Modifier::BOLD)),
    )
    .block(Block::default().borders(Borders::TOP).title(title));
    f.render_widget(table, area);
}

/// A GPU instance's cells: its name, slices, utilisation, memory, and its own processes, then
/// those of its GPU whose instance is not known (`?`).
fn cells(s: &State, fields: &Fields, r: &GpuRow) -> Vec<String> {
    let get = |e: Entity, fid: FieldId| s.values.get(&(e, fid)).and_then(Value::as_f64);
    let on = |p: &&Process| p.gpu == r.gpu && p.instance == Some(r.entity.id);
    let unknown = |p: &&Process| p.gpu == r.gpu && p.instance.is_none();
    let procs: Vec<String> = s
        .processes
        .iter()
        .filter(on)
        .map(|p| format!("{} {}", p.pid, p.name))
        .chain(
            s.processes
                .iter()
                .filter(unknown)
                .map(|p| format!("{} {}?", p.pid, p.name)),
        )
        .collect();
    vec![
        format!("GPU {} GI {}", r.gpu, r.entity.id),
        r.name.trim_start_matches("MIG ").to_string(),
        fmt_opt(get(r.entity, fields.util), "%", 0),
        fmt_opt(get(r.entity, fields.fb_used), " MiB", 0),
        if procs.is_empty() {
            "none".into()
        } else {
            procs.join(", ")
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::state::tests::{gpu_row, process};
    use std::time::Duration;

    #[test]
    fn an_instance_lists_its_processes_then_its_gpus_of_unknown_instance() {
        let fields = Fields::new();
        let gi = GpuRow {
            entity: Entity::new(EntityGroup::GpuInstance, 3),
            label: " └ GI 3".into(),
            name: "MIG 2 slice(s)".into(),
            power_limit_w: None,
            gpu: 0,
            mig: Some(("GPU-abc".into(), 1)),
        };
        let mut s = State::new(
            vec![gpu_row(0), gi, gpu_row(1)],
            Duration::from_secs(1),
            "dcgm-sim".into(),
        );
        let e = s.rows[1].entity;
        s.values.insert((e, fields.util), Value::Int(42));
        let mut mine = process(10, "train", 0, 1);
        mine.instance = Some(3);
        s.processes = vec![mine, process(11, "eval", 0, 1), process(12, "other", 1, 1)];
        assert_eq!(
            cells(&s, &fields, &s.rows[1]),
            [
                "GPU 0 GI 3",
                "2 slice(s)",
                "42%",
                "N/A",
                "10 train, 11 eval?"
            ]
        );
        s.processes.clear();
        assert_eq!(cells(&s, &fields, &s.rows[1])[4], "none");
    }
}
