//! Where cuBLAS is: `--cublas PATH`, the system loader's path, CUDA's install directories, and
//! the `nvidia-cublas` wheel that PyTorch installs in the site-packages of any `python3` on
//! `PATH`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// cuBLAS's file names (sonames) for CUDA 13 and CUDA 12, the newest first: what CUDA's
/// packages and NVIDIA's wheels install.
pub const CUBLAS_SONAMES: [&str; 2] = ["libcublas.so.13", "libcublas.so.12"];

/// The directories searched after the loader's own path, in order: `$CUDA_HOME/lib64`,
/// `$CUDA_PATH/lib64`, `/usr/local/cuda/lib64`, each `/usr/local/cuda-*/lib64` (newest name
/// first), and the distributions' library directories.
pub fn cuda_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            dirs.push(Path::new(&v).join("lib64"));
        }
    }
    dirs.push("/usr/local/cuda/lib64".into());
    if let Ok(rd) = std::fs::read_dir("/usr/local") {
        let mut versions: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("cuda-"))
            })
            .map(|p| p.join("lib64"))
            .collect();
        versions.sort();
        versions.reverse();
        dirs.extend(versions);
    }
    for d in [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib/sbsa-linux-gnu",
        "/usr/lib64",
    ] {
        dirs.push(d.into());
    }
    dirs
}

/// The directories of the site-packages of each `python3` (and `python`) on `PATH` where
/// PyTorch's CUDA wheels put cuBLAS: `nvidia/cublas/lib` (CUDA 12's `nvidia-cublas-cu12`),
/// `nvidia/cu13/lib` and `nvidia/cu12/lib` (CUDA 13's wheels).
pub fn wheel_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut seen = Vec::new();
    for dir in std::env::split_paths(&path) {
        for name in ["python3", "python"] {
            let exe = dir.join(name);
            let Ok(real) = std::fs::canonicalize(&exe) else {
                continue;
            };
            if seen.contains(&real) {
                continue;
            }
            seen.push(real);
            out.extend(
                site_packages(&exe)
                    .into_iter()
                    .map(|sp| sp.join("nvidia").join("cublas").join("lib")),
            );
        }
    }
    out
}

/// The site-packages directories of one interpreter (none when it does not run).
fn site_packages(python: &Path) -> Vec<PathBuf> {
    let script = "import site, sys\n\
                  dirs = list(getattr(site, 'getsitepackages', lambda: [])())\n\
                  dirs.append(site.getusersitepackages())\n\
                  dirs.extend(p for p in sys.path if p.endswith('-packages'))\n\
                  print('\\n'.join(dirs))";
    match Command::new(python).args(["-I", "-c", script]).output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(PathBuf::from)
            .collect(),
        _ => Vec::new(),
    }
}

/// Every place cuBLAS is looked for, in order, as file paths: an explicit file, or the
/// sonames in an explicit directory; else the sonames through the system loader, then in
/// [`cuda_dirs`] and [`wheel_dirs`] where they exist.
pub fn candidates(explicit: Option<&Path>) -> Vec<PathBuf> {
    if let Some(p) = explicit {
        if !p.is_dir() {
            return vec![p.to_path_buf()];
        }
        let found: Vec<PathBuf> = CUBLAS_SONAMES
            .iter()
            .map(|n| p.join(n))
            .filter(|f| f.exists())
            .collect();
        // None there: the newest name, so that the error names what was looked for.
        return if found.is_empty() {
            vec![p.join(CUBLAS_SONAMES[0])]
        } else {
            found
        };
    }
    let mut out: Vec<PathBuf> = CUBLAS_SONAMES.iter().map(PathBuf::from).collect();
    for d in cuda_dirs().into_iter().chain(wheel_dirs()) {
        out.extend(
            CUBLAS_SONAMES
                .iter()
                .map(|n| d.join(n))
                .filter(|p| p.exists()),
        );
    }
    let mut seen = Vec::new();
    out.retain(|p| {
        let new = !seen.contains(p);
        seen.push(p.clone());
        new
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_path_is_the_only_candidate_and_a_directory_names_the_file_in_it() {
        let dir = std::env::temp_dir().join(format!("burn-explicit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(candidates(Some(&dir)), [dir.join("libcublas.so.13")]);
        std::fs::write(dir.join("libcublas.so.12"), "").unwrap();
        assert_eq!(candidates(Some(&dir)), [dir.join("libcublas.so.12")]);
        let _ = std::fs::remove_dir_all(&dir);
        let file = Path::new("/opt/x/libcublas.so.12.8");
        assert_eq!(candidates(Some(file)), [file.to_path_buf()]);
    }

    #[test]
    fn the_loader_is_asked_first_and_only_existing_files_follow() {
        let c = candidates(None);
        assert_eq!(
            c[..2],
            [PathBuf::from("libcublas.so.13"), "libcublas.so.12".into()]
        );
        assert!(c[2..].iter().all(|p| p.exists()));
    }

    #[test]
    fn a_wheel_directory_is_found_in_a_fake_pythons_site_packages() {
        // A `python3` on PATH whose site-packages holds nvidia/cublas/lib.
        let root = std::env::temp_dir().join(format!("burn-find-{}", std::process::id()));
        let bin = root.join("bin");
        let sp = root.join("site-packages");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(sp.join("nvidia/cublas/lib")).unwrap();
        let py = bin.join("python3");
        std::fs::write(&py, format!("#!/bin/sh\necho {}\n", sp.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
        let found = site_packages(&py);
        assert_eq!(found, std::slice::from_ref(&sp));
        let _ = std::fs::remove_dir_all(&root);
    }
}
