//! `--config-file`: the flags in a YAML file, as dcgm-exporter 4.8.3 added.
//!
//! The file is a mapping from a flag's long name (or a long alias: `rbmn`,
//! `web-read-timeout`, `fake-gpus`) to its value, for example:
//!
//! ```yaml
//! collect-interval: 10000
//! kubernetes: true
//! remote-hostengine-info: [localhost:5555, node-2:5555]
//! web-read-timeout: 5s
//! ```
//!
//! A value given on the command line wins over its environment variable, which wins over the
//! file, which wins over the default. A key that names no flag, a flag that cannot be set from
//! a file (`config-file` itself, `help`, `version`), a value that is not a scalar (or a list
//! for a flag that takes several) is a [`ConfigFileError`] (exit status 2). Values are then
//! checked as the command line's are: a bad one is reported by the flag's own parser, with the
//! file named.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, CommandFactory, FromArgMatches};

use crate::cli::Cli;

/// The largest configuration file read.
pub const MAX_BYTES: u64 = 1 << 20;

/// Why the configuration file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// The file cannot be read.
    #[error("--config-file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_BYTES`].
    #[error("--config-file {}: {size} bytes, more than the {MAX_BYTES} a configuration file may have", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// Not YAML, or nested beyond reason.
    #[error("--config-file {}: not valid YAML: {why}", path.display())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        why: String,
    },
    /// The document is not a mapping of flag names.
    #[error("--config-file {}: expected a mapping of flag names to values (like `collect-interval: 10000`), found {found}", path.display())]
    NotMapping {
        /// The file.
        path: PathBuf,
        /// What it holds.
        found: &'static str,
    },
    /// A key that names no flag.
    #[error("--config-file {}: unknown key {key:?}{}", path.display(), suggestion.as_ref().map(|s| format!(" (did you mean {s:?}?)")).unwrap_or_default())]
    UnknownKey {
        /// The file.
        path: PathBuf,
        /// The key.
        key: String,
        /// The closest flag name, when one is close.
        suggestion: Option<String>,
    },
    /// A flag that a file cannot set.
    #[error("--config-file {}: {key:?} cannot be set in a configuration file", path.display())]
    NotSettable {
        /// The file.
        path: PathBuf,
        /// The key.
        key: String,
    },
    /// A value of the wrong shape.
    #[error("--config-file {}: {key}: {why}", path.display())]
    BadValue {
        /// The file.
        path: PathBuf,
        /// The key.
        key: String,
        /// What is wrong.
        why: String,
    },
    /// The flags' own check refused the file's values.
    #[error("--config-file {}: {message}", path.display())]
    Flags {
        /// The file.
        path: PathBuf,
        /// clap's message.
        message: String,
    },
}

/// Keys a file may not set.
const NOT_SETTABLE: &[&str] = &["config-file", "help", "version"];

/// Parses `args` (the program name first) with the configuration file they name, if any (see
/// the [module docs](self)). A malformed command line exits as clap does (status 2, or 0 for
/// `--help`).
///
/// # Errors
///
/// [`ConfigFileError`] when the file cannot be used.
pub fn parse(args: Vec<OsString>) -> Result<Cli, ConfigFileError> {
    let cmd = Cli::command();
    let first = cmd.clone().get_matches_from(args.clone());
    let Some(path) = first.get_one::<PathBuf>("config_file").cloned() else {
        return Ok(Cli::from_arg_matches(&first).unwrap_or_else(|e| e.exit()));
    };
    let extra = file_args(&path, &cmd, &first)?;
    if extra.is_empty() {
        return Ok(Cli::from_arg_matches(&first).unwrap_or_else(|e| e.exit()));
    }
    // The file's values go first: what the command line gives comes after them. Only flags
    // that neither the command line nor the environment set are taken from the file, so no
    // flag is given twice.
    let mut all = Vec::with_capacity(args.len() + extra.len());
    let mut it = args.into_iter();
    all.extend(it.next());
    all.extend(extra);
    all.extend(it);
    let matches = cmd
        .try_get_matches_from(all)
        .map_err(|e| ConfigFileError::Flags {
            path: path.clone(),
            message: e.to_string().trim().to_string(),
        })?;
    Cli::from_arg_matches(&matches).map_err(|e| ConfigFileError::Flags {
        path,
        message: e.to_string().trim().to_string(),
    })
}

/// The command-line words for the file's flags that `given` leaves unset.
fn file_args(
    path: &Path,
    cmd: &clap::Command,
    given: &ArgMatches,
) -> Result<Vec<OsString>, ConfigFileError> {
    let p = || path.to_path_buf();
    let size = std::fs::metadata(path)
        .map_err(|source| ConfigFileError::Read { path: p(), source })?
        .len();
    if size > MAX_BYTES {
        return Err(ConfigFileError::TooLarge { path: p(), size });
    }
    let bytes = crate::regular_file::read_capped(path, MAX_BYTES)
        .map_err(|source| ConfigFileError::Read { path: p(), source })?;
    let text = String::from_utf8(bytes).map_err(|_| ConfigFileError::Yaml {
        path: p(),
        why: "not UTF-8".into(),
    })?;
    let limits = crate::yaml_guard::Limits {
        depth: 16,
        tokens: 100_000,
    };
    crate::yaml_guard::check(&text, limits).map_err(|e| ConfigFileError::Yaml {
        path: p(),
        why: e.to_string(),
    })?;
    let doc: serde_yaml::Value = if text.trim().is_empty() {
        serde_yaml::Value::Mapping(Default::default())
    } else {
        serde_yaml::from_str(&text).map_err(|e| ConfigFileError::Yaml {
            path: p(),
            why: e.to_string(),
        })?
    };
    let map = match doc {
        serde_yaml::Value::Mapping(m) => m,
        serde_yaml::Value::Null => Default::default(),
        other => {
            return Err(ConfigFileError::NotMapping {
                path: p(),
                found: kind(&other),
            });
        }
    };
    let mut out = Vec::new();
    for (k, v) in map {
        let key = match k {
            serde_yaml::Value::String(s) => s,
            other => {
                return Err(ConfigFileError::BadValue {
                    path: p(),
                    key: format!("{other:?}"),
                    why: "a key must be a flag's name".into(),
                });
            }
        };
        if NOT_SETTABLE.contains(&key.as_str()) {
            return Err(ConfigFileError::NotSettable { path: p(), key });
        }
        let Some(arg) = cmd.get_arguments().find(|a| {
            a.get_long() == Some(key.as_str())
                || a.get_all_aliases()
                    .is_some_and(|al| al.contains(&key.as_str()))
        }) else {
            let suggestion = closest(&key, cmd);
            return Err(ConfigFileError::UnknownKey {
                path: p(),
                key,
                suggestion,
            });
        };
        let long = arg.get_long().unwrap_or(key.as_str()).to_string();
        let set_already = matches!(
            given.value_source(arg.get_id().as_str()),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        );
        let bad = |why: String| ConfigFileError::BadValue {
            path: p(),
            key: key.clone(),
            why,
        };
        let switch = matches!(arg.get_action(), ArgAction::SetTrue);
        let many = matches!(arg.get_action(), ArgAction::Append);
        let values: Vec<String> = match v {
            serde_yaml::Value::Sequence(items) if many => items
                .into_iter()
                .map(|i| scalar(&i).ok_or_else(|| bad(format!("a list of {}", kind(&i)))))
                .collect::<Result<_, _>>()?,
            serde_yaml::Value::Sequence(_) => {
                return Err(bad("takes one value, not a list".into()));
            }
            serde_yaml::Value::Bool(b) if switch => {
                if b && !set_already {
                    out.push(OsString::from(format!("--{long}")));
                }
                continue;
            }
            _ if switch => return Err(bad("takes true or false".into())),
            other => vec![scalar(&other).ok_or_else(|| bad(format!("a {}", kind(&other))))?],
        };
        if set_already {
            continue;
        }
        for v in values {
            out.push(OsString::from(format!("--{long}={v}")));
        }
    }
    Ok(out)
}

/// A scalar's text.
fn scalar(v: &serde_yaml::Value) -> Option<String> {
    match v {
        serde_yaml::Value::String(s) => Some(s.clone()),
        serde_yaml::Value::Number(n) => Some(n.to_string()),
        serde_yaml::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn kind(v: &serde_yaml::Value) -> &'static str {
    match v {
        serde_yaml::Value::Null => "null",
        serde_yaml::Value::Bool(_) => "boolean",
        serde_yaml::Value::Number(_) => "number",
        serde_yaml::Value::String(_) => "string",
        serde_yaml::Value::Sequence(_) => "list",
        serde_yaml::Value::Mapping(_) => "mapping",
        serde_yaml::Value::Tagged(_) => "tagged value",
    }
}

/// The flag name closest to `key` (`_` read as `-`, or within two edits).
fn closest(key: &str, cmd: &clap::Command) -> Option<String> {
    let dashed = key.replace('_', "-").to_ascii_lowercase();
    cmd.get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|l| !NOT_SETTABLE.contains(l))
        .map(|l| (edits(&dashed, l), l))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, l)| l.to_string())
}

/// Levenshtein distance.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(file: &str, args: &[&str]) -> Result<Cli, ConfigFileError> {
        // A file of its own per call: the tests run in parallel, and two files of one length
        // once shared a name (one test read the other's file).
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("dcgm-exporter-config-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.yaml");
        std::fs::write(&path, file).unwrap();
        let mut all: Vec<OsString> = vec!["dcgm-exporter".into(), "--config-file".into()];
        all.push(path.into());
        all.extend(args.iter().map(OsString::from));
        parse(all)
    }

    #[test]
    fn file_values_apply_and_the_command_line_wins() {
        let c = with(
            "collect-interval: 1234\nno-hostname: true\nremote-hostengine-info: [a:1, b:2]\nrbmn: true\n",
            &[],
        )
        .unwrap();
        assert_eq!(c.collect_interval_ms, 1234);
        assert!(c.no_hostname && c.replace_blanks);
        assert_eq!(c.remote, ["a:1", "b:2"]);
        let c = with("collect-interval: 1234\n", &["-c", "99"]).unwrap();
        assert_eq!(c.collect_interval_ms, 99);
    }

    #[test]
    fn unknown_keys_and_wrong_shapes_are_errors() {
        let e = with("collect_interval: 5\n", &[]).unwrap_err();
        assert!(
            e.to_string()
                .contains("unknown key \"collect_interval\" (did you mean \"collect-interval\"?)"),
            "{e}"
        );
        assert!(matches!(
            with("- a\n", &[]),
            Err(ConfigFileError::NotMapping { .. })
        ));
        assert!(matches!(
            with("kubernetes: yes please\n", &[]),
            Err(ConfigFileError::BadValue { .. })
        ));
        assert!(matches!(
            with("collect-interval: [1, 2]\n", &[]),
            Err(ConfigFileError::BadValue { .. })
        ));
        assert!(matches!(
            with("config-file: other.yaml\n", &[]),
            Err(ConfigFileError::NotSettable { .. })
        ));
        let e = with("collect-interval: 0\n", &[]).unwrap_err();
        assert!(matches!(e, ConfigFileError::Flags { .. }), "{e}");
        assert!(e.to_string().contains("collect-interval"), "{e}");
    }
}
