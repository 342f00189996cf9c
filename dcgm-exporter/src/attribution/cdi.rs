//! Container Device Interface (CDI) spec files, as DRA drivers write them for the container
//! runtime (`/var/run/cdi`, `/etc/cdi`): JSON or YAML, one spec per file, each with a `kind`
//! (`vendor/class`) and named devices whose `containerEdits` (environment, device nodes) say
//! what a container given the device sees. Read here to learn which GPU or MIG instance a
//! DRA claim's CDI device is, without the Kubernetes API server.
//!
//! Only the parts of the spec the mapping needs are read (unknown keys are ignored, as CDI
//! allows newer versions to add them). A device is found by its fully qualified name,
//! `vendor/class=name` (what the kubelet's pod-resources API reports in `cdi_devices`).
//!
//! Whoever can write the directory can feed the exporter anything, so what a pass over it may
//! cost is bounded ([`SpecCache`]): a file is parsed only when its version (device, inode,
//! size, modification time) changed since the last pass, and only when its text passes
//! the crate's YAML guard (collections nested at most [`MAX_DEPTH`] deep, at most
//! [`MAX_TOKENS`] tokens; libyaml's cost grows with the square of the nesting, and every token
//! is held in memory while a file is parsed); a pass reads at most [`MAX_PASS_BYTES`] of
//! changed files and stops starting new ones after [`PASS_BUDGET`] (the rest keep their last
//! good parse and are read in the next passes); the specs kept hold at most
//! [`MAX_RETAINED_BYTES`]; the directory's listing is looked at for at most [`MAX_LISTED`]
//! entries and taken again only when the directory changed (or every [`RELIST_EVERY`]).

use std::collections::{BTreeMap, HashMap};
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::yaml_guard;

/// The default directory of dynamically generated specs (the NVIDIA DRA driver's `cdiRoot`).
pub const DEFAULT_DIR: &str = "/var/run/cdi";

/// The largest spec file read. A claim's spec lists the driver's libraries as mounts and is
/// tens of KiB; a file past this is skipped (and named in the log).
pub const MAX_SPEC_BYTES: u64 = 4 << 20;

/// The most spec files read from the directory (one per prepared claim, plus the drivers'
/// own): past it the rest are skipped, and the log and `/health` say how many.
pub const MAX_SPECS: usize = 4096;

/// The deepest nesting of collections (flow and block) a spec may have. A CDI spec nests
/// about 6 deep.
pub const MAX_DEPTH: usize = 64;

/// The most YAML tokens a spec may have (a claim's spec of 200 mounts has about 5,000).
pub const MAX_TOKENS: usize = 200_000;

/// The most bytes of changed spec files one pass reads; the rest wait for the next passes.
pub const MAX_PASS_BYTES: u64 = 16 << 20;

/// Time after which a pass starts reading no more changed files (the one being parsed is
/// finished); the rest wait for the next passes.
pub const PASS_BUDGET: Duration = Duration::from_millis(500);

/// What the specs kept may hold, in bytes (their strings and a share for each item); a spec
/// past it is not kept, and its devices are not mapped.
pub const MAX_RETAINED_BYTES: usize = 64 << 20;

/// Directory entries looked at when listing it; past it the rest are not seen.
pub const MAX_LISTED: usize = 65_536;

/// An unchanged directory is listed again this often anyway (a file created within the
/// timestamp granularity of the last listing leaves the directory's time unchanged).
pub const RELIST_EVERY: Duration = Duration::from_secs(10);

/// A CDI spec (the keys read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Spec {
    /// `vendor/class`, e.g. `k8s.gpu.nvidia.com/claim`.
    pub kind: String,
    /// Its devices.
    #[serde(default)]
    pub devices: Vec<Device>,
    /// Edits applied to a container given any device of the spec.
    #[serde(default, rename = "containerEdits")]
    pub container_edits: ContainerEdits,
    /// Free-form annotations of the spec.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// A device of a spec.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Device {
    /// Its name within the spec's kind.
    pub name: String,
    /// Free-form annotations of the device.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// Edits applied to a container given this device.
    #[serde(default, rename = "containerEdits")]
    pub container_edits: ContainerEdits,
}

/// The container edits read: environment and device nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ContainerEdits {
    /// `NAME=value` entries.
    #[serde(default)]
    pub env: Vec<String>,
    /// Device nodes made in the container.
    #[serde(default, rename = "deviceNodes")]
    pub device_nodes: Vec<DeviceNode>,
}

impl ContainerEdits {
    /// The value of environment variable `name`, if set.
    pub fn env_var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .filter_map(|e| e.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }
}

/// A device node of a container edit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct DeviceNode {
    /// The path in the container.
    pub path: String,
    /// The host's path, when it differs.
    #[serde(default, rename = "hostPath")]
    pub host_path: Option<String>,
}

impl DeviceNode {
    /// The host's path of the node (`hostPath`, or `path` when they are the same).
    pub fn host(&self) -> &str {
        self.host_path.as_deref().unwrap_or(&self.path)
    }
}

/// A spec file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The file could not be read (unreadable, too large, not a regular file).
    #[error("cannot read the CDI spec {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// JSON that does not parse as a CDI spec.
    #[error("the CDI spec {} is not valid JSON for a spec: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// YAML that does not parse as a CDI spec.
    #[error("the CDI spec {} is not valid YAML for a spec: {source}", path.display())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_yaml::Error,
    },
    /// Text whose nesting or size would make the YAML parser too costly (not parsed).
    #[error("the CDI spec {} is not parsed: {source}", path.display())]
    Refused {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: yaml_guard::Refused,
    },
    /// A spec without `kind`, or whose kind is not `vendor/class`.
    #[error("the CDI spec {} has no valid kind (\"vendor/class\"): {kind:?}", path.display())]
    Kind {
        /// The file.
        path: PathBuf,
        /// What it says.
        kind: String,
    },
}

/// Parses the text of a spec file (`.json` as JSON, anything else as YAML, of which JSON is
/// a subset).
///
/// ```
/// use dcgm_exporter::attribution::cdi::parse;
/// let spec = parse(std::path::Path::new("claim.yaml"), "cdiVersion: 0.6.0\n\
///     kind: k8s.gpu.nvidia.com/claim\n\
///     devices:\n- name: c1-gpu-0\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n").unwrap();
/// assert_eq!(spec.devices[0].container_edits.device_nodes[0].host(), "/dev/nvidia0");
/// ```
///
/// # Errors
///
/// The text does not parse, or the spec has no `vendor/class` kind.
pub fn parse(path: &Path, text: &str) -> Result<Spec, SpecError> {
    let limits = yaml_guard::Limits {
        depth: MAX_DEPTH,
        tokens: MAX_TOKENS,
    };
    yaml_guard::check(text, limits).map_err(|source| SpecError::Refused {
        path: path.to_path_buf(),
        source,
    })?;
    let spec: Spec = if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(text).map_err(|source| SpecError::Json {
            path: path.to_path_buf(),
            source,
        })?
    } else {
        serde_yaml::from_str(text).map_err(|source| SpecError::Yaml {
            path: path.to_path_buf(),
            source,
        })?
    };
    let valid = spec
        .kind
        .split_once('/')
        .is_some_and(|(v, c)| !v.is_empty() && !c.is_empty() && !c.contains('/'));
    if !valid {
        return Err(SpecError::Kind {
            path: path.to_path_buf(),
            kind: spec.kind,
        });
    }
    Ok(spec)
}

/// A device found in the registry, with its spec and file.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    /// The spec file.
    pub path: &'a Path,
    /// The spec.
    pub spec: &'a Spec,
    /// The device.
    pub device: &'a Device,
}

/// The specs of one directory.
#[derive(Debug, Default)]
pub struct Registry {
    specs: Vec<(PathBuf, Arc<Spec>)>,
    /// Fully qualified device name → (spec index, device index).
    by_name: HashMap<String, (usize, usize)>,
}

/// What reading a directory gave: the specs that parse, and the files that did not.
#[derive(Debug)]
pub struct Loaded {
    /// The specs.
    pub registry: Registry,
    /// The files that could not be used.
    pub errors: Vec<String>,
}

impl Registry {
    /// Reads the `.json`, `.yaml` and `.yml` files of `dir` (not its subdirectories), in name
    /// order, once and without a pass's budget (see [`SpecCache`] for the bounded, cached
    /// reading a running exporter does). A file that cannot be used is reported in
    /// [`Loaded::errors`] and the others are kept. When two specs name the same device, the
    /// first (by file name) wins, as in CDI's own registry within one directory.
    ///
    /// # Errors
    ///
    /// The directory cannot be listed (missing, not a directory, not readable).
    pub fn load(dir: &Path) -> std::io::Result<Loaded> {
        let mut cache = SpecCache::new(dir.to_path_buf());
        cache.budget = Budget {
            bytes: u64::MAX,
            time: Duration::MAX,
        };
        let pass = cache.pass()?;
        let registry = Registry::build(cache.files.iter().filter_map(|(p, f)| match &f.entry {
            Entry::Spec(s, _) => Some((p.clone(), s.clone())),
            Entry::Bad(_) => None,
        }));
        Ok(Loaded {
            registry,
            errors: pass.rejected.into_iter().map(|(_, why)| why).collect(),
        })
    }

    /// A registry of `specs`, taken in path order.
    fn build(specs: impl Iterator<Item = (PathBuf, Arc<Spec>)>) -> Self {
        let mut all: Vec<(PathBuf, Arc<Spec>)> = specs.collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        let mut me = Registry::default();
        for (path, spec) in all {
            let i = me.specs.len();
            for (j, d) in spec.devices.iter().enumerate() {
                me.by_name
                    .entry(format!("{}={}", spec.kind, d.name))
                    .or_insert((i, j));
            }
            me.specs.push((path, spec));
        }
        me
    }

    /// The device of a fully qualified name (`vendor/class=name`).
    pub fn device(&self, qualified: &str) -> Option<Found<'_>> {
        let &(i, j) = self.by_name.get(qualified)?;
        let (path, spec) = &self.specs[i];
        Some(Found {
            path,
            spec,
            device: &spec.devices[j],
        })
    }

    /// How many specs were read.
    pub fn len(&self) -> usize {
        self.specs.len()
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }
}

/// A version of a file: when any of these changes, it is read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Version {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
}

impl Version {
    fn of(m: &std::fs::Metadata) -> Self {
        Self {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
        }
    }
}

/// What a file's last read gave.
#[derive(Debug, Clone)]
enum Entry {
    /// A spec, and what keeping it holds (bytes).
    Spec(Arc<Spec>, usize),
    /// Why it cannot be used.
    Bad(String),
}

#[derive(Debug, Clone)]
struct File {
    version: Version,
    entry: Entry,
}

/// What a pass may read of changed files.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Bytes of changed files.
    pub bytes: u64,
    /// Time after which no more changed files are started.
    pub time: Duration,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            bytes: MAX_PASS_BYTES,
            time: PASS_BUDGET,
        }
    }
}

/// What one pass over the directory did and found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Spec files in the directory (`.json`, `.yaml`, `.yml`), as far as it was listed.
    pub files: usize,
    /// Of them, past [`MAX_SPECS`] by name: not read.
    pub over_limit: usize,
    /// Whether the listing stopped at [`MAX_LISTED`] entries.
    pub listing_cut: bool,
    /// Specs usable now.
    pub specs: usize,
    /// Files that cannot be used (file name → why), newest reading.
    pub rejected: Vec<(PathBuf, String)>,
    /// Changed files this pass left for the next ones (past its budget); those read before
    /// keep their last good spec meanwhile.
    pub deferred: usize,
    /// Files read (and parsed) in this pass.
    pub read: usize,
    /// Bytes read in this pass.
    pub bytes: u64,
    /// How long the pass took.
    pub took: Duration,
}

impl PassReport {
    /// `(3 skipped: 1 rejected, 2 deferred to the next pass)`, or nothing when none was.
    pub fn skipped(&self) -> String {
        let mut parts = Vec::new();
        if !self.rejected.is_empty() {
            parts.push(format!("{} rejected", self.rejected.len()));
        }
        if self.deferred > 0 {
            parts.push(format!("{} deferred to the next pass", self.deferred));
        }
        if self.over_limit > 0 {
            parts.push(format!(
                "{} past the {MAX_SPECS}-file limit",
                self.over_limit
            ));
        }
        if self.listing_cut {
            parts.push(format!(
                "the directory has more than {MAX_LISTED} entries, the rest were not looked at"
            ));
        }
        let n = self.rejected.len() + self.deferred + self.over_limit;
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({n} skipped: {})", parts.join(", "))
        }
    }
}

/// The directory's specs kept across passes: each pass looks at what changed and reads only
/// that, within a [`Budget`]; see the [module docs](self).
#[derive(Debug)]
pub struct SpecCache {
    dir: PathBuf,
    /// The directory's version and the spec files listed then (sorted, at most
    /// [`MAX_SPECS`]), with the count of all and whether the listing was cut.
    listing: Option<(Version, Instant, Vec<PathBuf>, usize, bool)>,
    files: HashMap<PathBuf, File>,
    retained: usize,
    registry: Arc<Registry>,
    dirty: bool,
    /// What a pass may read.
    pub budget: Budget,
    /// Files read since the start.
    reads: u64,
}

/// What a spec keeps in memory, roughly: its strings and a share for each item.
fn retained(spec: &Spec) -> usize {
    let edits = |e: &ContainerEdits| {
        e.env.iter().map(|v| v.len() + 32).sum::<usize>()
            + e.device_nodes
                .iter()
                .map(|n| n.path.len() + n.host_path.as_ref().map_or(0, String::len) + 64)
                .sum::<usize>()
    };
    let ann =
        |a: &BTreeMap<String, String>| a.iter().map(|(k, v)| k.len() + v.len() + 64).sum::<usize>();
    let devices: usize = spec
        .devices
        .iter()
        .map(|d| d.name.len() + 128 + edits(&d.container_edits) + ann(&d.annotations))
        .sum();
    256 + spec.kind.len() + devices + edits(&spec.container_edits) + ann(&spec.annotations)
}

fn is_spec_file(p: &Path) -> bool {
    p.extension()
        .is_some_and(|e| e == "json" || e == "yaml" || e == "yml")
}

impl SpecCache {
    /// An empty cache of `dir`, with the default [`Budget`].
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            listing: None,
            files: HashMap::new(),
            retained: 0,
            registry: Arc::default(),
            dirty: false,
            budget: Budget::default(),
            reads: 0,
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The specs usable now (as of the last pass).
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.clone()
    }

    /// Spec files read (and parsed) since the cache was made.
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// Lists the directory again if it changed (or every [`RELIST_EVERY`]).
    fn list(&mut self, now: Instant) -> std::io::Result<()> {
        let meta = std::fs::metadata(&self.dir)?;
        if !meta.is_dir() {
            return Err(std::io::Error::new(
                ErrorKind::NotADirectory,
                "it is not a directory",
            ));
        }
        let version = Version::of(&meta);
        if let Some((v, at, ..)) = &self.listing
            && *v == version
            && now.saturating_duration_since(*at) < RELIST_EVERY
        {
            return Ok(());
        }
        let mut files = Vec::new();
        let mut cut = false;
        for (n, e) in std::fs::read_dir(&self.dir)?.enumerate() {
            if n == MAX_LISTED {
                cut = true;
                break;
            }
            let Ok(e) = e else { continue };
            let p = e.path();
            if is_spec_file(&p) {
                files.push(p);
            }
        }
        files.sort();
        let all = files.len();
        files.truncate(MAX_SPECS);
        self.listing = Some((version, now, files, all, cut));
        Ok(())
    }

    /// One pass: lists the directory if it changed, reads the files that changed (within the
    /// budget), and keeps the specs; the registry is [`SpecCache::registry`] afterwards.
    ///
    /// # Errors
    ///
    /// The directory cannot be listed; the cache is emptied then.
    pub fn pass(&mut self) -> std::io::Result<PassReport> {
        let t0 = Instant::now();
        if let Err(e) = self.list(t0) {
            self.listing = None;
            if !self.files.is_empty() || !self.registry.is_empty() {
                self.files.clear();
                self.retained = 0;
                self.registry = Arc::default();
            }
            return Err(e);
        }
        let Some((_, _, listed, all, cut)) = &self.listing else {
            return Ok(PassReport::default());
        };
        let listed = listed.clone();
        let mut report = PassReport {
            files: *all,
            over_limit: all.saturating_sub(listed.len()),
            listing_cut: *cut,
            ..PassReport::default()
        };
        // Files gone from the listing are forgotten.
        let keep: std::collections::HashSet<&PathBuf> = listed.iter().collect();
        if self.files.keys().any(|p| !keep.contains(p)) {
            self.files.retain(|p, _| keep.contains(p));
            self.dirty = true;
            self.retained = self
                .files
                .values()
                .map(|f| match f.entry {
                    Entry::Spec(_, n) => n,
                    Entry::Bad(_) => 0,
                })
                .sum();
        }
        for path in &listed {
            let meta = match std::fs::metadata(path) {
                Ok(m) => m,
                // Deleted since the listing: its claim is gone.
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    if self.files.remove(path).is_some() {
                        self.dirty = true;
                    }
                    continue;
                }
                Err(e) => {
                    let why = SpecError::Read {
                        path: path.clone(),
                        source: e,
                    }
                    .to_string();
                    let same = self
                        .files
                        .get(path)
                        .is_some_and(|f| matches!(&f.entry, Entry::Bad(w) if *w == why));
                    if !same {
                        self.set(path, Version::unknown(), Entry::Bad(why));
                    }
                    continue;
                }
            };
            let version = Version::of(&meta);
            if self.files.get(path).is_some_and(|f| f.version == version) {
                continue;
            }
            // Changed or new: read within the budget; past it, the last good spec stays.
            let over_time = t0.elapsed() >= self.budget.time;
            let over_bytes = report
                .bytes
                .saturating_add(meta.len().min(MAX_SPEC_BYTES + 1))
                > self.budget.bytes;
            if report.read > 0 && (over_time || over_bytes) {
                report.deferred += 1;
                continue;
            }
            report.read += 1;
            self.reads += 1;
            let (version, entry, bytes) = self.read(path, version, meta.len());
            report.bytes += bytes;
            self.set(path, version, entry);
        }
        report.specs = self
            .files
            .values()
            .filter(|f| matches!(f.entry, Entry::Spec(..)))
            .count();
        let mut rejected: Vec<(PathBuf, String)> = self
            .files
            .iter()
            .filter_map(|(p, f)| match &f.entry {
                Entry::Bad(why) => Some((p.clone(), why.clone())),
                Entry::Spec(..) => None,
            })
            .collect();
        rejected.sort();
        report.rejected = rejected;
        if self.dirty {
            self.registry =
                Arc::new(Registry::build(self.files.iter().filter_map(
                    |(p, f)| match &f.entry {
                        Entry::Spec(s, _) => Some((p.clone(), s.clone())),
                        Entry::Bad(_) => None,
                    },
                )));
            self.dirty = false;
        }
        report.took = t0.elapsed();
        Ok(report)
    }

    fn set(&mut self, path: &Path, version: Version, entry: Entry) {
        if let Some(old) = self.files.get(path)
            && let Entry::Spec(_, n) = old.entry
        {
            self.retained -= n;
        }
        if let Entry::Spec(_, n) = entry {
            self.retained += n;
        }
        self.files
            .insert(path.to_path_buf(), File { version, entry });
        self.dirty = true;
    }

    /// Reads and parses one file: its version as read, what it gave, and the bytes read.
    fn read(&self, path: &Path, seen: Version, size: u64) -> (Version, Entry, u64) {
        let bad = |e: SpecError| Entry::Bad(e.to_string());
        if size > MAX_SPEC_BYTES {
            let e = std::io::Error::new(
                ErrorKind::FileTooLarge,
                format!("it is larger than {MAX_SPEC_BYTES} bytes"),
            );
            return (
                seen,
                bad(SpecError::Read {
                    path: path.to_path_buf(),
                    source: e,
                }),
                0,
            );
        }
        let (bytes, version) =
            match crate::regular_file::read_capped_versioned(path, MAX_SPEC_BYTES) {
                Ok((b, m)) => (b, Version::of(&m)),
                Err(source) => {
                    return (
                        seen,
                        bad(SpecError::Read {
                            path: path.to_path_buf(),
                            source,
                        }),
                        0,
                    );
                }
            };
        let n = bytes.len() as u64;
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                return (
                    version,
                    bad(SpecError::Read {
                        path: path.to_path_buf(),
                        source: std::io::Error::new(ErrorKind::InvalidData, e),
                    }),
                    n,
                );
            }
        };
        let entry = match parse(path, &text) {
            Ok(spec) => {
                let size = retained(&spec);
                if self.retained + size > MAX_RETAINED_BYTES {
                    Entry::Bad(format!(
                        "the CDI spec {} is not kept: the specs kept already hold {} MiB, the \
                         most kept is {} MiB",
                        path.display(),
                        self.retained >> 20,
                        MAX_RETAINED_BYTES >> 20
                    ))
                } else {
                    Entry::Spec(Arc::new(spec), size)
                }
            }
            Err(e) => bad(e),
        };
        (version, entry, n)
    }
}

impl Version {
    /// The version of a file whose metadata could not be read: read again at the next pass.
    fn unknown() -> Self {
        Self {
            dev: u64::MAX,
            ino: u64::MAX,
            size: u64::MAX,
            mtime: (i64::MIN, 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_yaml_specs_are_read_and_bad_ones_reported() {
        let dir = std::env::temp_dir().join(format!("dcgm-rs-cdi-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("a.json"),
            r#"{"cdiVersion":"0.6.0","kind":"k8s.gpu.nvidia.com/claim","containerEdits":{"env":["NVIDIA_VISIBLE_DEVICES=void"]},
               "devices":[{"name":"u-gpu-1","containerEdits":{"deviceNodes":[{"path":"/dev/nvidia1"}]},"extra":1}]}"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("b.yaml"),
            "kind: vendor.com/x\ndevices: [{name: d}]\n",
        )
        .unwrap();
        std::fs::write(dir.join("c.yaml"), "kind: [not, a, string\n").unwrap();
        std::fs::write(dir.join("d.yaml"), "kind: noclass\n").unwrap();
        std::fs::write(dir.join("notes.txt"), "not a spec").unwrap();
        let loaded = Registry::load(&dir).unwrap();
        assert_eq!(loaded.registry.len(), 2);
        let f = loaded
            .registry
            .device("k8s.gpu.nvidia.com/claim=u-gpu-1")
            .unwrap();
        assert_eq!(
            f.spec.container_edits.env_var("NVIDIA_VISIBLE_DEVICES"),
            Some("void")
        );
        assert_eq!(
            f.device.container_edits.device_nodes[0].host(),
            "/dev/nvidia1"
        );
        assert!(loaded.registry.device("vendor.com/x=d").is_some());
        assert!(loaded.registry.device("vendor.com/x=e").is_none());
        let errors: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].contains("c.yaml") && errors[0].contains("not valid YAML"));
        assert!(errors[1].contains("d.yaml") && errors[1].contains("no valid kind"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            Registry::load(&dir).unwrap_err().kind(),
            ErrorKind::NotFound
        );
    }

    fn spec(name: &str) -> String {
        format!("kind: k8s.gpu.nvidia.com/claim\ndevices:\n- name: {name}\n")
    }

    #[test]
    fn a_pass_reads_only_what_changed_within_its_budget_and_keeps_the_last_good_specs() {
        let dir = std::env::temp_dir().join(format!("dcgm-rs-cdi-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..5 {
            std::fs::write(dir.join(format!("s{i}.yaml")), spec(&format!("d{i}"))).unwrap();
        }
        std::fs::write(
            dir.join("deep.yaml"),
            format!(
                "kind: a/b\nx: {}{}\n",
                "[".repeat(100_000),
                "]".repeat(100_000)
            ),
        )
        .unwrap();
        let mut cache = SpecCache::new(dir.clone());
        let t = std::time::Instant::now();
        let p = cache.pass().unwrap();
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        assert_eq!((p.files, p.specs, p.read, p.deferred), (6, 5, 6, 0));
        assert_eq!(p.rejected.len(), 1);
        assert!(
            p.rejected[0].1.contains("deep.yaml") && p.rejected[0].1.contains("nest deeper"),
            "{:?}",
            p.rejected
        );
        assert!(p.skipped().contains("1 rejected"), "{}", p.skipped());
        assert!(
            cache
                .registry()
                .device("k8s.gpu.nvidia.com/claim=d3")
                .is_some()
        );
        // Nothing changed: nothing is read.
        let p = cache.pass().unwrap();
        assert_eq!((p.read, p.specs, cache.reads()), (0, 5, 6));
        // A budget of one file a pass: changed files wait, keeping their last good spec.
        cache.budget = Budget {
            bytes: 1,
            time: Duration::MAX,
        };
        for i in 0..3 {
            std::fs::write(dir.join(format!("s{i}.yaml")), spec(&format!("e{i}"))).unwrap();
        }
        let p = cache.pass().unwrap();
        assert_eq!((p.read, p.deferred), (1, 2));
        let r = cache.registry();
        assert!(r.device("k8s.gpu.nvidia.com/claim=e0").is_some());
        assert!(r.device("k8s.gpu.nvidia.com/claim=d1").is_some(), "kept");
        let p = cache.pass().unwrap();
        assert_eq!((p.read, p.deferred), (1, 1));
        let p = cache.pass().unwrap();
        assert_eq!((p.read, p.deferred), (1, 0));
        assert!(
            cache
                .registry()
                .device("k8s.gpu.nvidia.com/claim=e2")
                .is_some()
        );
        assert!(
            cache
                .registry()
                .device("k8s.gpu.nvidia.com/claim=d2")
                .is_none()
        );
        // A deleted spec goes with its devices.
        std::fs::remove_file(dir.join("s4.yaml")).unwrap();
        let p = cache.pass().unwrap();
        assert_eq!(p.specs, 4);
        assert!(
            cache
                .registry()
                .device("k8s.gpu.nvidia.com/claim=d4")
                .is_none()
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(cache.pass().is_err());
        assert!(cache.registry().is_empty());
    }

    /// A claim's spec as the NVIDIA DRA driver writes it (Go's YAML: hooks, 200 library
    /// mounts, device nodes) is far inside the limits.
    #[test]
    fn a_driver_written_spec_passes_the_check_with_room() {
        let mut text = String::from(
            "---\ncdiVersion: 0.5.0\ncontainerEdits:\n  deviceNodes:\n  - path: /dev/nvidia-uvm\n  \
             env:\n  - NVIDIA_VISIBLE_DEVICES=void\n  hooks:\n  - args:\n    - nvidia-cdi-hook\n    \
             - create-symlinks\n    - --link\n    - libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so\n    \
             env:\n    - NVIDIA_CTK_DEBUG=false\n    hookName: createContainer\n    path: \
             /usr/bin/nvidia-cdi-hook\n  mounts:\n",
        );
        for i in 0..200 {
            text.push_str(&format!(
                "  - containerPath: /usr/lib/x86_64-linux-gnu/libnv{i}.so.570.86.15\n    hostPath: \
                 /usr/lib/x86_64-linux-gnu/libnv{i}.so.570.86.15\n    options:\n    - ro\n    - \
                 nosuid\n    - nodev\n    - bind\n"
            ));
        }
        text.push_str(
            "devices:\n- containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n    - path: \
             /dev/dri/card1\n  name: \"aaaa-gpu-0\"\nkind: k8s.gpu.nvidia.com/claim\n",
        );
        let shape = yaml_guard::check(
            &text,
            yaml_guard::Limits {
                depth: MAX_DEPTH,
                tokens: MAX_TOKENS,
            },
        )
        .unwrap();
        assert!(shape.depth <= 6, "{shape:?}");
        assert!(shape.tokens < MAX_TOKENS / 20, "{shape:?}");
        let spec = parse(Path::new("claim.yaml"), &text).unwrap();
        assert_eq!(
            spec.devices[0].container_edits.device_nodes[0].host(),
            "/dev/nvidia0"
        );
        println!("a driver's claim spec of {} bytes: {shape:?}", text.len());
    }
}
