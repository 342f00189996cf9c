//! The report's text: headings and `label : value` lines in nvidia-smi's columns.

use std::fmt::Write as _;

/// What a line says where DCGM has no value.
pub(super) const NA: &str = "N/A";

/// Where the values of nvidia-smi's report column: the label, indented, padded to this width.
pub(super) const LABEL_WIDTH: usize = 55;
/// The same for the lines of the process list, which nvidia-smi pads less.
pub(super) const PROCESS_LABEL_WIDTH: usize = 42;

/// The report's text, a line at a time.
#[derive(Default)]
pub(super) struct Report {
    pub(super) text: String,
}

impl Report {
    pub(super) fn line(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
    }

    /// A heading at `depth` (a GPU's blocks are at depth 1, four spaces).
    pub(super) fn head(&mut self, depth: usize, label: &str) {
        let _ = writeln!(self.text, "{:w$}{label}", "", w = depth * 4);
    }

    /// `label : value`, the value in nvidia-smi's column.
    pub(super) fn kv(&mut self, depth: usize, label: &str, value: impl std::fmt::Display) {
        self.kv_in(LABEL_WIDTH, depth, label, value);
    }

    /// `label : value`, the value in column `width`.
    pub(super) fn kv_in(
        &mut self,
        width: usize,
        depth: usize,
        label: &str,
        value: impl std::fmt::Display,
    ) {
        let label = format!("{:w$}{label}", "", w = depth * 4);
        let _ = writeln!(self.text, "{label:<width$}: {value}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_line_up_in_nvidia_smis_columns() {
        let mut r = Report::default();
        r.line("GPU 00000000:00:06.0");
        r.head(1, "FB Memory Usage");
        r.kv(2, "Total", "143771 MiB");
        r.kv_in(PROCESS_LABEL_WIDTH, 3, "Type", "C");
        let want = format!(
            "GPU 00000000:00:06.0\n    FB Memory Usage\n        Total{}: 143771 MiB\n            \
             Type{}: C\n",
            " ".repeat(LABEL_WIDTH - 13),
            " ".repeat(PROCESS_LABEL_WIDTH - 16)
        );
        assert_eq!(r.text, want);
    }
}
