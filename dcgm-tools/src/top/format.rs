//! How the view writes a value: N/A where DCGM has none, `-` where `/proc` has nothing to say.

use super::state::Process;

/// `v` with `digits` decimals and its unit, or N/A.
pub(crate) fn fmt_opt(v: Option<f64>, unit: &str, digits: usize) -> String {
    v.map_or_else(|| "N/A".into(), |v| format!("{v:.digits$}{unit}"))
}

/// Bytes per second as MB/s, or N/A.
pub(crate) fn rate(v: Option<f64>) -> String {
    v.map_or_else(|| "N/A".into(), |b| format!("{:.0} MB/s", b / 1e6))
}

/// A `/proc` column: `-` for a process not on this host, N/A for one it cannot read.
pub(crate) fn host_col(p: &Process, v: Option<String>) -> String {
    match (p.host, v) {
        (None, _) => "-".into(),
        (Some(_), Some(v)) => v,
        (Some(_), None) => "N/A".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::state::tests::process;

    #[test]
    fn values_print_with_their_unit_or_na() {
        assert_eq!(fmt_opt(Some(61.6), " C", 0), "62 C");
        assert_eq!(fmt_opt(Some(2.345), "", 1), "2.3");
        assert_eq!(fmt_opt(None, " MHz", 0), "N/A");
        assert_eq!(rate(Some(12_345_678.0)), "12 MB/s");
        assert_eq!(rate(None), "N/A");
    }

    #[test]
    fn a_proc_column_is_a_dash_off_this_host_and_na_when_unreadable() {
        let mut p = process(7, "x", 0, 1);
        assert_eq!(host_col(&p, Some("1.0".into())), "-");
        p.host = Some(1);
        assert_eq!(host_col(&p, Some("1.0".into())), "1.0");
        assert_eq!(host_col(&p, None), "N/A");
    }
}
