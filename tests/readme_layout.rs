//! The README's Layout section names every top-level folder of the repository and every script
//! in `scripts/`, so that a reader who has never seen the project finds each of them there.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The text of the README from its `## Layout` heading up to the next `## ` heading.
fn layout_section() -> String {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let mut lines = readme.lines().skip_while(|l| l.trim_end() != "## Layout");
    assert!(
        lines.next().is_some(),
        "README.md has no `## Layout` section"
    );
    lines
        .take_while(|l| !l.starts_with("## "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Top-level folders: those holding a file tracked by git, or, where git cannot answer (a
/// source archive), the folders on disk but `target/` and dot-folders other than `.ci/`.
fn top_level_folders() -> BTreeSet<String> {
    let tracked = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(ROOT)
        .output()
        .ok()
        .filter(|o| o.status.success() && !o.stdout.is_empty());
    if let Some(out) = tracked {
        return out
            .stdout
            .split(|&b| b == 0)
            .filter_map(|path| {
                let path = std::str::from_utf8(path).ok()?;
                let (first, _) = path.split_once('/')?;
                Some(first.to_string())
            })
            .collect();
    }
    std::fs::read_dir(ROOT)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            let name = e.file_name().into_string().ok()?;
            let skip = name == "target" || (name.starts_with('.') && name != ".ci");
            (e.file_type().unwrap().is_dir() && !skip).then_some(name)
        })
        .collect()
}

fn scripts() -> BTreeSet<String> {
    std::fs::read_dir(Path::new(ROOT).join("scripts"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|n| n.ends_with(".sh"))
        .collect()
}

/// The folders a Layout line starts with (`dcgm/    the safe layer` names `dcgm`).
fn folders_named(layout: &str) -> BTreeSet<String> {
    layout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|w| w.strip_suffix('/'))
        .map(str::to_string)
        .collect()
}

/// Every word of the section, so a script counts as named as `test.sh` or `scripts/test.sh`.
fn words(layout: &str) -> BTreeSet<String> {
    layout
        .split(|c: char| c.is_whitespace() || "`,;()".contains(c))
        .map(|w| w.trim_start_matches("scripts/").to_string())
        .collect()
}

#[test]
fn readme_layout_names_every_top_level_folder() {
    let layout = layout_section();
    let named = folders_named(&layout);
    let missing: Vec<_> = top_level_folders()
        .into_iter()
        .filter(|f| !named.contains(f))
        .collect();
    assert!(
        missing.is_empty(),
        "README.md's Layout section has no line starting with these folders: {missing:?}"
    );
}

#[test]
fn readme_layout_names_every_script() {
    let layout = layout_section();
    let named = words(&layout);
    let found = scripts();
    assert!(!found.is_empty(), "no scripts/*.sh found");
    let missing: Vec<_> = found.into_iter().filter(|s| !named.contains(s)).collect();
    assert!(
        missing.is_empty(),
        "README.md's Layout section does not name these scripts: {missing:?}"
    );
}
