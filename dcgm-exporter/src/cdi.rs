//! Container Device Interface (CDI) spec files, as DRA drivers write them for the container
//! runtime (`/var/run/cdi`, `/etc/cdi`): JSON or YAML, one spec per file, each with a `kind`
//! (`vendor/class`) and named devices whose `containerEdits` (environment, device nodes) say
//! what a container given the device sees. Read here to learn which GPU or MIG instance a
//! DRA claim's CDI device is, without the Kubernetes API server.
//!
//! Only the parts of the spec the mapping needs are read (unknown keys are ignored, as CDI
//! allows newer versions to add them). A device is found by its fully qualified name,
//! `vendor/class=name` (what the kubelet's pod-resources API reports in `cdi_devices`).

use std::collections::{BTreeMap, HashMap};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The default directory of dynamically generated specs (the NVIDIA DRA driver's `cdiRoot`).
pub const DEFAULT_DIR: &str = "/var/run/cdi";

/// The largest spec file read. A claim's spec lists the driver's libraries as mounts and is
/// tens of KiB; a file past this is skipped (and named in the log).
pub const MAX_SPEC_BYTES: u64 = 4 << 20;

/// The most spec files read from the directory (one per prepared claim, plus the drivers'
/// own): past it the rest are skipped.
pub const MAX_SPECS: usize = 4096;

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
/// use dcgm_exporter::cdi::parse;
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

/// The specs of one directory, read once (a refresh reads them again).
#[derive(Debug, Default)]
pub struct Registry {
    specs: Vec<(PathBuf, Spec)>,
    /// Fully qualified device name → (spec index, device index).
    by_name: HashMap<String, (usize, usize)>,
}

/// What reading a directory gave: the specs that parse, and the files that did not.
#[derive(Debug)]
pub struct Loaded {
    /// The specs.
    pub registry: Registry,
    /// The files that could not be used.
    pub errors: Vec<SpecError>,
}

impl Registry {
    /// Reads the `.json`, `.yaml` and `.yml` files of `dir` (not its subdirectories), in name
    /// order. A file that cannot be used is reported in [`Loaded::errors`] and the others are
    /// kept. When two specs name the same device, the first (by file name) wins, as in CDI's
    /// own registry within one directory.
    ///
    /// # Errors
    ///
    /// The directory cannot be listed (missing, not a directory, not readable).
    pub fn load(dir: &Path) -> std::io::Result<Loaded> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .is_some_and(|e| e == "json" || e == "yaml" || e == "yml")
            })
            .collect();
        files.sort();
        files.truncate(MAX_SPECS);
        let mut registry = Registry::default();
        let mut errors = Vec::new();
        for path in files {
            let text = match crate::regular_file::read_capped(&path, MAX_SPEC_BYTES) {
                Ok(bytes) => String::from_utf8(bytes)
                    .map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e)),
                Err(e) => Err(e),
            };
            let spec = match text {
                Ok(t) => parse(&path, &t),
                // A claim's spec deleted between listing and reading: its claim is gone.
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(source) => Err(SpecError::Read {
                    path: path.clone(),
                    source,
                }),
            };
            match spec {
                Ok(s) => registry.add(path, s),
                Err(e) => errors.push(e),
            }
        }
        Ok(Loaded { registry, errors })
    }

    fn add(&mut self, path: PathBuf, spec: Spec) {
        let i = self.specs.len();
        for (j, d) in spec.devices.iter().enumerate() {
            self.by_name
                .entry(format!("{}={}", spec.kind, d.name))
                .or_insert((i, j));
        }
        self.specs.push((path, spec));
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
}
