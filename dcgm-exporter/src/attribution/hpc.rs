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
//!
//! The directory is read before every collection, so what that costs is bounded too
//! ([`HpcJobs`]): a file is read again only when its version (device, inode, size,
//! modification time) changed; one read takes at most [`MAX_PASS_BYTES`] of changed files (the
//! others keep their last jobs until the next collection reads them); the directory is listed
//! again only when it changed (or every [`RELIST_EVERY`]), looking at [`MAX_LISTED`] entries at
//! most. `/health` has a line for it (`hpc: ok`, `partial`, `failing`, `stale`).

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dcgm_prometheus::{EntityIdentity, LabelSet};

use crate::health::{SourceBoard, SourceHealth};
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

/// The most bytes of changed mapping files one read takes; the others wait for the next
/// collection, keeping their last jobs meanwhile.
pub const MAX_PASS_BYTES: u64 = 1 << 20;

/// Directory entries looked at when listing the directory; past it the rest are not seen.
pub const MAX_LISTED: usize = 16_384;

/// An unchanged directory is listed again this often anyway (a file created within the
/// timestamp granularity of the last listing leaves the directory's time unchanged).
pub const RELIST_EVERY: Duration = Duration::from_secs(10);

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
    let (names, mut out) = list(dir)?;
    for name in names {
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

/// The mapping files' names, in order (at most [`MAX_FILES`]), and the problems of the
/// listing (files past the limit, entries past [`MAX_LISTED`]).
fn list(dir: &Path) -> io::Result<(Vec<String>, Listing)> {
    let mut names = Vec::new();
    let mut out = Listing::default();
    for (n, entry) in std::fs::read_dir(dir)?.enumerate() {
        if n == MAX_LISTED {
            out.problems.insert(
                String::new(),
                format!(
                    "the directory has more than {MAX_LISTED} entries; the rest are not looked at"
                ),
            );
            break;
        }
        let name = entry?.file_name();
        if let Some(key) = name.to_str().and_then(gpu_key) {
            names.push((key, name.to_string_lossy().into_owned()));
        }
    }
    names.sort();
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
    Ok((names.into_iter().map(|(_, n)| n).collect(), out))
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

/// A version of a file or directory: when any of these changes, it is read again.
type Version = (u64, u64, u64, i64, i64);

fn version(m: &std::fs::Metadata) -> Version {
    (m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec())
}

/// The directory's version when listed, when, the names, the listing's problems.
type Listed = (Version, Instant, Vec<String>, BTreeMap<String, String>);

/// What a file's last read gave: its jobs and a note, or why it was skipped.
type FileJobs = Result<(Vec<String>, Option<String>), String>;

/// The mapping directory, read before each collection, with its state and the problems of
/// its files logged once per change; see the [module docs](self) for what one read may cost.
#[derive(Debug)]
pub struct HpcJobs {
    dir: PathBuf,
    last_error: Option<String>,
    problems: BTreeMap<String, String>,
    /// The directory's version when listed, when, the names, the listing's problems.
    listing: Option<Listed>,
    files: HashMap<String, (Version, FileJobs)>,
    board: Option<SourceBoard>,
    failing_since: Option<Instant>,
    /// Files read since the start.
    reads: u64,
}

impl HpcJobs {
    /// Jobs from `dir`.
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            last_error: None,
            problems: BTreeMap::new(),
            listing: None,
            files: HashMap::new(),
            board: None,
            failing_since: None,
            reads: 0,
        }
    }

    /// Reports each read's state on `board` (for `/health`).
    pub fn with_board(mut self, board: SourceBoard) -> Self {
        self.board = Some(board);
        self
    }

    /// Mapping files read since the start (unchanged files are not read again).
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// The current jobs; none (and a log line when this is new) when the directory cannot be
    /// read. Metrics are still exported, without `hpc_job`. A file that cannot be used is
    /// logged by name when its problem is new or changes, and again when it is fine.
    pub fn read(&mut self) -> JobMap {
        let now = Instant::now();
        match self.read_cached(now) {
            Ok((jobs, problems, deferred)) => {
                if self.last_error.take().is_some() {
                    log::info!("HPC job mapping {} readable again", self.dir.display());
                }
                self.failing_since = None;
                let summary = format!(
                    "{} GPUs or MIG instances with jobs in {} ({} files read since the start){}",
                    jobs.0.len(),
                    self.dir.display(),
                    self.reads,
                    if deferred > 0 {
                        format!(
                            ", {deferred} changed files left for the next read (at most {} KiB \
                             read at once)",
                            MAX_PASS_BYTES >> 10
                        )
                    } else {
                        String::new()
                    }
                );
                self.publish(now, None, summary, problems.len());
                self.log_problems(problems);
                jobs
            }
            Err(e) => {
                let msg = e.to_string();
                if self.last_error.as_deref() != Some(&msg) {
                    log::warn!(
                        "HPC job mapping {}: {msg}; exporting without hpc_job labels",
                        self.dir.display()
                    );
                    self.last_error = Some(msg.clone());
                }
                self.failing_since.get_or_insert(now);
                self.listing = None;
                self.files.clear();
                self.publish(now, Some(msg), String::new(), 0);
                JobMap::default()
            }
        }
    }

    fn publish(&self, now: Instant, error: Option<String>, summary: String, problems: usize) {
        if let Some(b) = &self.board {
            *b.lock().unwrap_or_else(|p| p.into_inner()) = Some(SourceHealth {
                checked: now,
                error,
                failing_since: self.failing_since,
                summary,
                problems,
            });
        }
    }

    /// One read: the jobs, the problems by file name, and how many changed files wait.
    fn read_cached(
        &mut self,
        now: Instant,
    ) -> io::Result<(JobMap, BTreeMap<String, String>, usize)> {
        let dir_version = version(&std::fs::metadata(&self.dir)?);
        let fresh = self.listing.as_ref().is_some_and(|(v, at, ..)| {
            *v == dir_version && now.saturating_duration_since(*at) < RELIST_EVERY
        });
        if !fresh {
            let (names, listing) = list(&self.dir)?;
            self.listing = Some((dir_version, now, names, listing.problems));
        }
        let Some((_, _, names, listed_problems)) = &self.listing else {
            return Ok(Default::default());
        };
        let names = names.clone();
        let mut problems = listed_problems.clone();
        self.files.retain(|n, _| names.contains(n));
        let mut bytes = 0u64;
        let mut deferred = 0;
        let mut jobs = JobMap::default();
        for name in names {
            let path = self.dir.join(&name);
            let meta = match std::fs::metadata(&path) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    self.files.remove(&name);
                    continue;
                }
                Err(e) => {
                    self.files
                        .insert(name.clone(), (Default::default(), Err(e.to_string())));
                    problems.insert(name, format!("{e}; skipped"));
                    continue;
                }
            };
            let v = version(&meta);
            let known = self.files.get(&name).is_some_and(|(old, _)| *old == v);
            if !known {
                let size = meta.len().min(MAX_FILE_BYTES + 1);
                if bytes > 0 && bytes + size > MAX_PASS_BYTES {
                    // Past this read's budget: the last jobs stay until the next read.
                    deferred += 1;
                } else {
                    bytes += size;
                    self.reads += 1;
                    let read = read_file(&path);
                    self.files.insert(name.clone(), (v, read));
                }
            }
            match self.files.get(&name).map(|(_, r)| r) {
                Some(Ok((list, note))) => {
                    if let Some(n) = note {
                        problems.insert(name.clone(), n.clone());
                    }
                    if !list.is_empty() {
                        jobs.0.insert(name, list.clone());
                    }
                }
                Some(Err(why)) => {
                    problems.insert(name, format!("{why}; skipped"));
                }
                None => {}
            }
        }
        Ok((jobs, problems, deferred))
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
