//! HPC attribution (`--hpc-job-mapping-dir`): a directory with one file per GPU, named by the
//! GPU index (`0`, `1`, …) or, for a MIG instance, `<gpu>.<instance id>`, listing the jobs on
//! it one per line (a scheduler's prolog writes it, its epilog empties it). Each job becomes an
//! `hpc_job` label, one series per job, as dcgm-exporter does.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use dcgm_reader::{EntityIdentity, LabelSet};

/// The jobs per GPU key (`"0"`, `"2.1"`), read from a mapping directory.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct JobMap(pub HashMap<String, Vec<String>>);

/// Reads the directory. Names that are not `N` or `N.M` are ignored; blank lines are skipped
/// and surrounding blanks (a CR of CRLF files included) trimmed (dcgm-exporter would export
/// an empty `hpc_job` for a blank line).
///
/// # Errors
///
/// The directory or a file cannot be read (a missing directory included).
pub fn read_dir(dir: &Path) -> io::Result<JobMap> {
    let mut map = HashMap::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| is_gpu_key(n)) else {
            continue;
        };
        if !entry.file_type()?.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(entry.path())?;
        let jobs: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        if !jobs.is_empty() {
            map.insert(name.to_string(), jobs);
        }
    }
    Ok(JobMap(map))
}

/// `N` or `N.M`, digits only.
fn is_gpu_key(name: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match name.split_once('.') {
        Some((a, b)) => digits(a) && digits(b),
        None => digits(name),
    }
}

impl JobMap {
    /// One `hpc_job` label set per job on the identity's GPU or MIG instance.
    pub fn labels(&self, id: &EntityIdentity) -> Vec<LabelSet> {
        let key = match id.mig.as_ref().and_then(|m| m.instance_id) {
            Some(gi) => format!("{}.{gi}", id.gpu),
            None if id.mig.is_some() => return Vec::new(),
            None => id.gpu.to_string(),
        };
        self.0
            .get(&key)
            .map(|jobs| {
                jobs.iter()
                    .map(|j| vec![("hpc_job".to_string(), j.clone())])
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The mapping directory, read before each collection, with its state logged once per change.
#[derive(Debug)]
pub struct HpcJobs {
    dir: PathBuf,
    last_error: Option<String>,
}

impl HpcJobs {
    /// Jobs from `dir`.
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            last_error: None,
        }
    }

    /// The current jobs; none (and a log line when this is new) when the directory cannot be
    /// read. Metrics are still exported, without `hpc_job`.
    pub fn read(&mut self) -> JobMap {
        match read_dir(&self.dir) {
            Ok(m) => {
                if self.last_error.take().is_some() {
                    log::info!("HPC job mapping {} readable again", self.dir.display());
                }
                m
            }
            Err(e) => {
                let msg = e.to_string();
                if self.last_error.as_deref() != Some(&msg) {
                    log::warn!(
                        "HPC job mapping {}: {msg}; exporting without hpc_job labels",
                        self.dir.display()
                    );
                    self.last_error = Some(msg);
                }
                JobMap::default()
            }
        }
    }
}
