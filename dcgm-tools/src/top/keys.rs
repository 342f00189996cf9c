//! The keys (nvtop's): what each does to the view's state.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::time::Duration;

use super::host::{SIGNALS, send_signal};
use super::state::{Focus, KillMenu, SORT_COLUMNS, State};

/// What the main loop does after a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Carry on (the state may have changed: the next draw shows it).
    Stay,
    /// Leave: q, Esc outside the menu, Ctrl-C.
    Quit,
    /// The interval changed (+ or -): watch at the new one and refresh now.
    Interval,
}

/// Applies key `k` to `s`: in the kill menu, its keys (Enter sends the signal chosen);
/// otherwise selection, focus, sort, pause, interval, the menu's opening, quitting.
pub fn on_key(s: &mut State, k: KeyEvent) -> Outcome {
    if k.kind != KeyEventKind::Press {
        return Outcome::Stay;
    }
    // Raw mode turns Ctrl-C into a key, not a SIGINT.
    if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
        return Outcome::Quit;
    }
    if s.menu.is_some() {
        in_menu(s, k.code);
        return Outcome::Stay;
    }
    let n_procs = s.processes.len();
    match k.code {
        KeyCode::Char('q') | KeyCode::Esc => return Outcome::Quit,
        KeyCode::Tab | KeyCode::BackTab => {
            s.focus = match s.focus {
                Focus::Gpus => Focus::Processes,
                Focus::Processes => Focus::Gpus,
            };
        }
        KeyCode::Down if s.focus == Focus::Processes => {
            s.proc_selected = (s.proc_selected + 1).min(n_procs.saturating_sub(1));
        }
        KeyCode::Up if s.focus == Focus::Processes => {
            s.proc_selected = s.proc_selected.saturating_sub(1);
        }
        KeyCode::Down => {
            s.selected = (s.selected + 1).min(s.rows.len().saturating_sub(1));
        }
        KeyCode::Up => s.selected = s.selected.saturating_sub(1),
        KeyCode::F(9) | KeyCode::Char('k') => open_menu(s),
        KeyCode::Char('p') | KeyCode::Char(' ') => s.paused = !s.paused,
        KeyCode::F(6) | KeyCode::Char('s') => s.sort = (s.sort + 1) % SORT_COLUMNS.len(),
        KeyCode::Char('r') => s.reverse = !s.reverse,
        KeyCode::Char('+') | KeyCode::Char('-') => {
            let ms = s.interval.as_millis() as u64;
            let ms = if k.code == KeyCode::Char('+') {
                ms * 2
            } else {
                ms / 2
            };
            s.interval = Duration::from_millis(ms.clamp(100, 10_000));
            return Outcome::Interval;
        }
        _ => {}
    }
    Outcome::Stay
}

/// F9 or k: the kill menu for the selected process, or why there is none.
fn open_menu(s: &mut State) {
    if s.focus != Focus::Processes {
        s.message = Some("Tab to the processes first, then select one".into());
    } else if let Some(p) = s.sorted_processes().get(s.proc_selected) {
        s.menu = Some(KillMenu {
            target: p.clone(),
            choice: 0,
        });
    } else {
        s.message = Some("no process to signal".into());
    }
}

/// A key in the open kill menu: move, send (Enter) or cancel (Esc, q).
fn in_menu(s: &mut State, code: KeyCode) {
    let Some(menu) = &mut s.menu else {
        return;
    };
    match code {
        KeyCode::Esc | KeyCode::Char('q') => {
            s.menu = None;
            s.message = Some("kill cancelled".into());
        }
        KeyCode::Down | KeyCode::Char('j') => {
            menu.choice = (menu.choice + 1).min(SIGNALS.len() - 1);
        }
        KeyCode::Up | KeyCode::Char('k') => menu.choice = menu.choice.saturating_sub(1),
        KeyCode::Enter => {
            let r = send_signal(&menu.target, SIGNALS[menu.choice]);
            s.message = Some(r.unwrap_or_else(|e| e));
            s.menu = None;
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::state::tests::{gpu_row, process};

    fn press(s: &mut State, code: KeyCode) -> Outcome {
        on_key(s, KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn state() -> State {
        let mut s = State::new(
            vec![gpu_row(0), gpu_row(1)],
            Duration::from_millis(1000),
            "dcgm-sim".into(),
        );
        s.processes = vec![process(10, "a", 0, 100), process(20, "b", 1, 900)];
        s
    }

    #[test]
    fn arrows_move_the_gpu_then_after_tab_the_process_within_bounds() {
        let mut s = state();
        assert_eq!(press(&mut s, KeyCode::Down), Outcome::Stay);
        press(&mut s, KeyCode::Down);
        assert_eq!(s.selected, 1);
        press(&mut s, KeyCode::Tab);
        assert_eq!(s.focus, Focus::Processes);
        press(&mut s, KeyCode::Down);
        press(&mut s, KeyCode::Down);
        assert_eq!((s.selected, s.proc_selected), (1, 1));
        press(&mut s, KeyCode::Up);
        assert_eq!(s.proc_selected, 0);
    }

    #[test]
    fn the_kill_menu_needs_the_process_focus_and_refuses_a_simulated_pid() {
        let mut s = state();
        press(&mut s, KeyCode::Char('k'));
        assert!(s.menu.is_none());
        assert_eq!(
            s.message.as_deref(),
            Some("Tab to the processes first, then select one")
        );
        press(&mut s, KeyCode::Tab);
        press(&mut s, KeyCode::F(9));
        // Sorted by GPU memory: pid 20 first.
        assert_eq!(s.menu.as_ref().map(|m| m.target.pid), Some(20));
        press(&mut s, KeyCode::Down);
        assert_eq!(s.menu.as_ref().map(|m| m.choice), Some(1));
        press(&mut s, KeyCode::Enter);
        assert!(s.menu.is_none());
        assert!(
            s.message
                .unwrap()
                .starts_with("20 (b) is not a process on this host")
        );
    }

    #[test]
    fn interval_keys_double_and_halve_within_limits_and_quit_keys_quit() {
        let mut s = state();
        assert_eq!(press(&mut s, KeyCode::Char('+')), Outcome::Interval);
        assert_eq!(s.interval, Duration::from_millis(2000));
        for _ in 0..6 {
            press(&mut s, KeyCode::Char('-'));
        }
        assert_eq!(s.interval, Duration::from_millis(100));
        assert_eq!(press(&mut s, KeyCode::Char('q')), Outcome::Quit);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(on_key(&mut s, ctrl_c), Outcome::Quit);
    }
}
