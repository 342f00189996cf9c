//! `dcgm-top`'s view: an nvtop-style live view of the GPUs and their MIG instances, built on the
//! `dcgm` safe layer. The binary (`src/bin/dcgm-top.rs`) parses the command line, opens the
//! engine ([`Source::open`]) and runs the loop: [`Source::refresh`] every interval, [`draw`],
//! [`on_key`].
//!
//! Each module is one part of the screen or of what feeds it:
//!
//! - `state`: what the screen shows (rows, values, history, processes, selection, sort);
//! - `source`: the DCGM side (groups, watches, the reads of one refresh);
//! - `host`: what `/proc` says of a pid (start time, MIG instance), the signals sent;
//! - `keys`: what each key does;
//! - `format`: values as the view writes them (N/A, `-`);
//! - `view_screen`: the layout; `view_row` a GPU's block; `view_processes` the process table;
//!   `view_chart` the history chart; `view_mig` the MIG table; `view_menu` the kill menu;
//! - `terminal`: the terminal given back on every way out.

mod fields;
mod format;
mod host;
mod keys;
mod source;
mod state;
mod terminal;
mod view_chart;
mod view_menu;
mod view_mig;
mod view_processes;
mod view_row;
mod view_screen;

pub use fields::Fields;
pub use keys::{Outcome, on_key};
pub use source::Source;
pub use state::{GpuRow, State};
pub use terminal::{TerminalGuard, catch_signals};
pub use view_screen::draw;
