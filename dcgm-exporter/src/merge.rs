//! Several expositions (one per host engine) as one: the text format allows a metric family's
//! `# HELP` and `# TYPE` once, with all its series together, so the families are merged by
//! name rather than the texts concatenated.

use std::collections::BTreeMap;

/// The families of `texts` in name order, each with the `# HELP`/`# TYPE` lines of the first
/// text that has it and the series of every text, in the order of `texts`; a series line that
/// is already there is not repeated. Lines before a text's first family are dropped.
///
/// ```
/// use dcgm_exporter::merge::merge_expositions;
/// let a = "# HELP t T.\n# TYPE t gauge\nt{e=\"a\"} 1\n";
/// let b = "# HELP s S.\n# TYPE s gauge\ns{e=\"b\"} 3\n# HELP t T.\n# TYPE t gauge\nt{e=\"b\"} 2\n";
/// assert_eq!(
///     merge_expositions(&[a, b]),
///     "# HELP s S.\n# TYPE s gauge\ns{e=\"b\"} 3\n# HELP t T.\n# TYPE t gauge\nt{e=\"a\"} 1\nt{e=\"b\"} 2\n"
/// );
/// ```
pub fn merge_expositions(texts: &[&str]) -> String {
    let mut families: BTreeMap<&str, (Vec<&str>, Vec<&str>)> = BTreeMap::new();
    for text in texts {
        let mut current: Option<&str> = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let name = rest.split(' ').next().unwrap_or(rest);
                let (head, _) = families.entry(name).or_default();
                let first = head.is_empty();
                if first {
                    head.push(line);
                }
                current = Some(name);
                continue;
            }
            let Some(name) = current else { continue };
            let (head, series) = families.entry(name).or_default();
            if line.starts_with("# TYPE ") {
                if head.len() == 1 {
                    head.push(line);
                }
            } else if !line.is_empty() && !series.contains(&line) {
                series.push(line);
            }
        }
    }
    let mut out = String::new();
    for (head, series) in families.values() {
        for l in head.iter().chain(series) {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_of_one_text_only_and_repeated_series_are_kept_once() {
        let a = "# HELP x X.\n# TYPE x gauge\nx 1\n";
        let b = "# HELP x X.\n# TYPE x gauge\nx 1\n# HELP y Y.\n# TYPE y counter\ny{a=\"1\"} 5\n";
        assert_eq!(
            merge_expositions(&[a, b]),
            "# HELP x X.\n# TYPE x gauge\nx 1\n# HELP y Y.\n# TYPE y counter\ny{a=\"1\"} 5\n"
        );
        assert_eq!(merge_expositions(&[]), "");
        assert_eq!(merge_expositions(&["", a]), a);
    }
}
