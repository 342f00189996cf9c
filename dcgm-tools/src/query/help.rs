//! `--help-query-gpu` and `--help-query-compute-apps`: the properties, what each means.

use crate::nvsmi_properties as nvsmi;

/// `--help-query-gpu`: every property, its aliases and unit, what it means and its DCGM source.
pub fn print_gpu_help() {
    crate::outln!("Properties for --query-gpu (nvidia-smi's names; aliases after \"or\"):");
    crate::outln!();
    for p in nvsmi::GPU_PROPERTIES {
        let mut names = format!("\"{}\"", p.name);
        for a in p.aliases {
            names.push_str(&format!(" or \"{a}\""));
        }
        let unit = if p.unit.is_empty() {
            String::new()
        } else {
            format!(" [{}]", p.unit)
        };
        crate::outln!("{names}{unit}");
        crate::outln!("    {}. From: {}.", capitalised(p.meaning), p.source_text());
    }
}

/// `--help-query-compute-apps`: every process property and what it means.
pub fn print_apps_help() {
    crate::outln!(
        "Properties for --query-compute-apps (nvidia-smi's names; aliases after \"or\"):"
    );
    crate::outln!();
    let what = [
        ("timestamp", "when this line was read"),
        ("gpu_name", "product name of the process's GPU"),
        ("gpu_bus_id", "PCI bus id of the process's GPU"),
        ("gpu_serial", "board serial number of the process's GPU"),
        ("gpu_uuid", "UUID of the process's GPU"),
        ("pid", "the process id"),
        ("process_name", "the process's command name"),
        ("used_gpu_memory", "GPU memory the process holds"),
        (
            "gpu_index",
            "DCGM id of the process's GPU (not in nvidia-smi)",
        ),
    ];
    for p in nvsmi::APP_PROPERTIES {
        let mut names = format!("\"{}\"", p.name);
        for a in p.aliases {
            names.push_str(&format!(" or \"{a}\""));
        }
        let meaning = what.iter().find(|(n, _)| *n == p.name).map_or("", |w| w.1);
        crate::outln!("{names}");
        crate::outln!("    {}.", capitalised(meaning));
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_meaning_starts_with_a_capital() {
        assert_eq!(capitalised("the process id"), "The process id");
        assert_eq!(capitalised("élan"), "Élan");
        assert_eq!(capitalised(""), "");
    }
}
