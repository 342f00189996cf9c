//! `dcgm-stat`'s format: gpustat over DCGM. A header line (host, time, driver version), then a
//! line per GPU (index, name, temperature, utilisation, memory and the processes on it), with
//! gpustat's flags, colours, layout and `--json` schema. A value DCGM has no reading for prints
//! as `??` (`null` in JSON), as gpustat prints what NVML cannot read.
//!
//! The binary (`src/bin/dcgm-stat.rs`) parses the command line, opens the engine and loops:
//! [`Reader::snapshot`], then [`Format::frame`]. The modules:
//!
//! - `show`: which parts the lines show, gpustat's flags resolved;
//! - `model`: one query's answer ([`Snapshot`]: host, driver, time, GPUs and processes);
//! - `read`: the DCGM and `/proc` reads that fill it;
//! - `line`: the text lines; `paint`: the palette and text pieces; `json`: `--json`.

mod json;
mod line;
mod model;
mod paint;
mod read;
mod show;

pub use model::Snapshot;
pub use read::Reader;
pub use show::{Flags, Show};

/// How a query is printed.
#[derive(Debug, Clone, Copy)]
pub struct Format {
    /// gpustat's `--json` document instead of lines.
    pub json: bool,
    /// What the lines show.
    pub show: Show,
    /// No host, time and driver line.
    pub no_header: bool,
    /// The GPU names this wide (`Some(0)`: none); the widest name's width when `None`.
    pub name_width: Option<usize>,
    /// gpustat's colours.
    pub color: bool,
    /// Redraw in place (a watch on a terminal), as gpustat's watch mode does.
    pub in_place: bool,
}

impl Format {
    /// The text of `snapshot`, lines ended by newlines; in place, the escapes that home the
    /// cursor and clear what is left of the last frame (the screen too, on the `first`).
    pub fn frame(&self, snapshot: &Snapshot, first: bool) -> String {
        if self.json {
            let mut t = String::new();
            snapshot.to_json().write(&mut t, 0);
            return t + "\n";
        }
        let lines = snapshot.render(&self.show, self.no_header, self.name_width, self.color);
        if self.in_place {
            // In place, as gpustat's watch mode does: home, each line cleared to its end,
            // then the rest of the screen.
            let mut t = if first { "\x1b[2J" } else { "" }.to_string() + "\x1b[H";
            for l in lines {
                t += &l.replace('\n', "\x1b[K\n");
                t += "\x1b[K\n";
            }
            t + "\x1b[J"
        } else {
            lines.iter().map(|l| format!("{l}\n")).collect()
        }
    }
}

/// Colours on a terminal unless NO_COLOR is set (CLICOLOR_FORCE forces them), as
/// `anstream` decides for clap's own output.
pub fn colors_wanted() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

#[cfg(test)]
mod tests;
