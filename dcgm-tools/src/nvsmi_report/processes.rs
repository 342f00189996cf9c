//! The process list (`-d PIDS`).

use super::read::Process;
use super::text::{NA, PROCESS_LABEL_WIDTH, Report};

/// `Processes`: each process's ids, type, name and GPU memory, or `None`.
pub(super) fn write(r: &mut Report, processes: Option<&[Process]>) {
    match processes {
        Some(ps) if !ps.is_empty() => {
            r.head(1, "Processes");
            for p in ps {
                let w = PROCESS_LABEL_WIDTH;
                r.kv_in(w, 2, "GPU instance ID", NA);
                r.kv_in(w, 2, "Compute instance ID", NA);
                r.kv_in(w, 2, "Process ID", p.pid);
                r.kv_in(w, 3, "Type", "C");
                r.kv_in(w, 3, "Name", p.name.as_deref().unwrap_or(NA));
                r.kv_in(w, 3, "Used GPU Memory", format!("{} MiB", p.used_mib));
            }
        }
        _ => r.kv(1, "Processes", "None"),
    };
}
