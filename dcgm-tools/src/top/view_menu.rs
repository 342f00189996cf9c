//! The kill menu: the signals to send the selected process, SIGTERM first.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use super::host::SIGNALS;
use super::state::KillMenu;

/// The signal menu, over the middle of the screen.
pub(crate) fn draw(f: &mut ratatui::Frame, menu: &KillMenu, area: Rect) {
    let h = (SIGNALS.len() as u16 + 4).min(area.height);
    let w = 48.min(area.width);
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let mut lines = vec![Line::from(format!(
        "Send to {} ({}):",
        menu.target.pid, menu.target.name
    ))];
    for (i, (name, _)) in SIGNALS.iter().enumerate() {
        let style = if i == menu.choice {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        lines.push(Line::styled(format!("  {name}"), style));
    }
    lines.push(Line::from("Enter send  Esc cancel"));
    f.render_widget(ratatui::widgets::Clear, rect);
    f.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title("Kill")),
        rect,
    );
}
