//! HPC attribution (`--hpc-job-mapping-dir`): a directory with one file per GPU, named by the
//! GPU index (`0`, `1`, …) or, for a MIG instance, `<gpu>.<instance id>`, listing the jobs on
//! it one per line (a scheduler's prolog writes it, its epilog empties it). Each job becomes an
//! `hpc_job` label, one series per job, as dcgm-exporter does.
//!
//! What a scheduler (or anyone who can write the directory) puts there is bounded: a file is
//! read up to [`MAX_FILE_BYTES`] and refused past it, a GPU gets at most [`MAX_JOBS_PER_GPU`]
//! jobs, a job id is at most [`MAX_JOB_LEN`] bytes, and at most [`MAX_FILES`] files are read.
//! Symbolic links are followed (a Kubernetes ConfigMap volume is made of them); FIFOs and
//! devices are skipped without being opened or blocked on. A file that cannot be used is
//! skipped and named in the log, and the other GPUs keep their jobs.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};

use dcgm_prometheus::{EntityIdentity, LabelSet};

use crate::regular_file;

/// The largest mapping file read (64 KiB: 64 jobs of 256 bytes with room to spare).
pub const MAX_FILE_BYTES: u64 = 64 * 1024;

/// The most jobs exported for one GPU or MIG instance: each job repeats every series of the
/// GPU. 64 is above the 48 clients CUDA MPS serves on one GPU.
pub const MAX_JOBS_PER_GPU: usize = 64;

/// The longest job id, in bytes (Slurm's are numbers; 256 leaves room for names).
pub const MAX_JOB_LEN: usize = 256;

/// The most mapping files read: one per GPU (`DCGM_MAX_NUM_DEVICES`) and one per GPU instance
/// (`DCGM_MAX_INSTANCES_PER_GPU` of each).
pub const MAX_FILES: usize =
    dcgm::raw::sys::DCGM_MAX_NUM_DEVICES * (1 + dcgm::raw::sys::DCGM_MAX_INSTANCES_PER_GPU);

/// The jobs per GPU key (`"0"`, `"2.1"`), read from a mapping directory.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct JobMap(pub HashMap<String, Vec<String>>);

/// One read of the directory: the jobs, and what was wrong with the files that were skipped
/// or cut short (file name → why).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The jobs of the files that could be read.
    pub jobs: JobMap,
    /// File name → what was wrong with it.
    pub problems: BTreeMap<String, String>,
}

/// Reads the directory. Names that are not `N` or `N.M` (with `N` a GPU id DCGM can have) are
/// ignored; blank lines are skipped, surrounding blanks (a CR of CRLF files included) trimmed,
/// and repeated jobs listed once (dcgm-exporter would export an empty `hpc_job` for a blank
/// line, and the same series twice for a repeated job).
///
/// # Errors
///
/// The directory cannot be read (a missing directory included). A file that cannot be used is
/// not an error: it is in [`Listing::problems`].
pub fn read_dir(dir: &Path) -> io::Result<Listing> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        if let Some(key) = name.to_str().and_then(gpu_key) {
            names.push((key, name.to_string_lossy().into_owned()));
        }
    }
    names.sort();
    let mut out = Listing::default();
    if names.len() > MAX_FILES {
        out.problems.insert(
            names[MAX_FILES].1.clone(),
            format!(
                "more than {MAX_FILES} mapping files; this one and the {} after it are skipped",
                names.len() - MAX_FILES - 1
            ),
        );
        names.truncate(MAX_FILES);
    }
    for (_, name) in names {
        match read_file(&dir.join(&name)) {
            Ok((jobs, note)) => {
                if let Some(n) = note {
                    out.problems.insert(name.clone(), n);
                }
                if !jobs.is_empty() {
                    out.jobs.0.insert(name, jobs);
                }
            }
            Err(why) => {
                out.problems.insert(name, format!("{why}; skipped"));
            }
        }
    }
    Ok(out)
}

/// The jobs of one file, and a note when some were left out.
fn read_file(path: &Path) -> Result<(Vec<String>, Option<String>), String> {
    let bytes = regular_file::read_capped(path, MAX_FILE_BYTES).map_err(|e| e.to_string())?;
    if bytes.contains(&0) {
        return Err("it holds NUL bytes (a binary file?), not job ids one per line".into());
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| "it is not UTF-8 text (a binary file?), not job ids one per line")?;
    let mut jobs: Vec<String> = Vec::new();
    let (mut too_long, mut too_many, mut control) = (0usize, 0usize, 0usize);
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.len() > MAX_JOB_LEN {
            too_long += 1;
            continue;
        }
        if line.chars().any(char::is_control) {
            control += 1;
            continue;
        }
        if jobs.iter().any(|j| j == line) {
            continue;
        }
        if jobs.len() == MAX_JOBS_PER_GPU {
            too_many += 1;
            continue;
        }
        jobs.push(line.to_string());
    }
    let mut notes = Vec::new();
    if too_long > 0 {
        notes.push(format!(
            "{too_long} line(s) longer than {MAX_JOB_LEN} bytes left out"
        ));
    }
    if control > 0 {
        notes.push(format!(
            "{control} line(s) with control characters left out"
        ));
    }
    if too_many > 0 {
        notes.push(format!(
            "{too_many} job(s) past the first {MAX_JOBS_PER_GPU} left out"
        ));
    }
    Ok((jobs, (!notes.is_empty()).then(|| notes.join(", "))))
}

/// `(gpu, instance)` for a name `N` or `N.M` (digits only, `N` below DCGM's GPU count);
/// `None` otherwise.
fn gpu_key(name: &str) -> Option<(u32, Option<u32>)> {
    let num = |s: &str| {
        (!s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let (gpu, instance) = match name.split_once('.') {
        Some((a, b)) => (num(a)?, Some(num(b)?)),
        None => (num(name)?, None),
    };
    ((gpu as usize) < dcgm::raw::sys::DCGM_MAX_NUM_DEVICES).then_some((gpu, instance))
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

/// The mapping directory, read before each collection, with its state and the problems of
/// its files logged once per change.
#[derive(Debug)]
pub struct HpcJobs {
    dir: PathBuf,
    last_error: Option<String>,
    problems: BTreeMap<String, String>,
}

impl HpcJobs {
    /// Jobs from `dir`.
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            last_error: None,
            problems: BTreeMap::new(),
        }
    }

    /// The current jobs; none (and a log line when this is new) when the directory cannot be
    /// read. Metrics are still exported, without `hpc_job`. A file that cannot be used is
    /// logged by name when its problem is new or changes, and again when it is fine.
    pub fn read(&mut self) -> JobMap {
        match read_dir(&self.dir) {
            Ok(listing) => {
                if self.last_error.take().is_some() {
                    log::info!("HPC job mapping {} readable again", self.dir.display());
                }
                self.log_problems(listing.problems);
                listing.jobs
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

    fn log_problems(&mut self, problems: BTreeMap<String, String>) {
        for (name, why) in &problems {
            if self.problems.get(name) != Some(why) {
                log::warn!(
                    "HPC job mapping file {}: {why}",
                    self.dir.join(name).display()
                );
            }
        }
        for name in self.problems.keys() {
            if !problems.contains_key(name) {
                log::info!(
                    "HPC job mapping file {}: no longer a problem",
                    self.dir.join(name).display()
                );
            }
        }
        self.problems = problems;
    }
}
