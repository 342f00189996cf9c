//! Finding and opening libdcgm at run time, and the table of its functions.

use std::ffi::{CStr, OsStr, OsString};
use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};

use crate::DcgmApi;

/// Environment variable naming the library file, or a directory holding `libdcgm.so.4`.
pub const DCGM_LIB_PATH_ENV: &str = "DCGM_LIB_PATH";

/// Sonames searched through the dynamic linker, newest first.
pub const SONAMES: &[&str] = &["libdcgm.so.4", "libdcgm.so.3"];

/// Directories where the DCGM packages install the library.
pub const DISTRIBUTION_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib/sbsa-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/dcgm/lib64",
];

/// The package that provides `libdcgm.so.4`.
pub const DCGM_PACKAGE: &str = "datacenter-gpu-manager-4-core";

/// One place the loader tried, and what the dynamic loader said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadAttempt {
    /// A path, or a bare soname handed to the dynamic linker.
    pub candidate: String,
    /// Where the candidate came from (`DCGM_LIB_PATH`, `explicit path`, `soname search`, ...).
    pub source: &'static str,
    /// The loader's message.
    pub error: String,
}

/// No libdcgm could be opened. Lists every place that was tried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// Every attempt, in order.
    pub attempts: Vec<LoadAttempt>,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "could not load the DCGM library (libdcgm); tried:")?;
        for a in &self.attempts {
            writeln!(f, "  - {} [{}]: {}", a.candidate, a.source, a.error)?;
        }
        write!(
            f,
            "Install the `{DCGM_PACKAGE}` package (DCGM 4), or set {DCGM_LIB_PATH_ENV} to the \
             library file or its directory. To run without a GPU, point {DCGM_LIB_PATH_ENV} at \
             the dcgm-sim library."
        )
    }
}

impl std::error::Error for LoadError {}

/// A function the loaded libdcgm does not export (an older DCGM, or a 3.x library).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolError {
    /// The C name of the missing function.
    pub symbol: &'static str,
}

impl fmt::Display for SymbolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not available in this libdcgm (the library is older than the API that \
             needs it: upgrade DCGM)",
            self.symbol
        )
    }
}

impl std::error::Error for SymbolError {}

/// Where to look for libdcgm. [`DcgmLibrary::open`] uses the defaults.
///
/// ```no_run
/// let lib = dcgm_sys::LibraryLoader::new()
///     .path("/opt/dcgm/lib/libdcgm.so.4")
///     .open()?;
/// println!("loaded {} (DCGM {:?})", lib.path().display(), lib.major_version());
/// # Ok::<(), dcgm_sys::LoadError>(())
/// ```
#[derive(Debug, Clone)]
pub struct LibraryLoader {
    explicit: Option<PathBuf>,
    use_env: bool,
    default_search: bool,
}

impl Default for LibraryLoader {
    fn default() -> Self {
        Self::new()
    }
}

impl LibraryLoader {
    /// The default search: `DCGM_LIB_PATH`, then the sonames, then the distribution directories.
    pub fn new() -> Self {
        Self {
            explicit: None,
            use_env: true,
            default_search: true,
        }
    }

    /// Try this file (or directory holding `libdcgm.so.4`) after `DCGM_LIB_PATH`. When a path
    /// is given, the soname and distribution-directory search is skipped: a library you named
    /// is never silently replaced by another one.
    pub fn path(mut self, path: impl Into<PathBuf>) -> Self {
        self.explicit = Some(path.into());
        self
    }

    /// Whether to honour `DCGM_LIB_PATH` (default: yes).
    pub fn use_env(mut self, yes: bool) -> Self {
        self.use_env = yes;
        self
    }

    /// The ordered list of `(candidate, source)` this loader would try.
    pub fn candidates(&self) -> Vec<(OsString, &'static str)> {
        let mut out = Vec::new();
        let mut configured = false;
        if self.use_env
            && let Some(v) = std::env::var_os(DCGM_LIB_PATH_ENV).filter(|v| !v.is_empty())
        {
            configured = true;
            push_path(&mut out, Path::new(&v), DCGM_LIB_PATH_ENV);
        }
        if let Some(p) = &self.explicit {
            configured = true;
            push_path(&mut out, p, "explicit path");
        }
        if self.default_search && !configured {
            for s in SONAMES {
                out.push((OsString::from(s), "soname search"));
            }
            for d in DISTRIBUTION_DIRS {
                for s in SONAMES {
                    out.push((
                        Path::new(d).join(s).into_os_string(),
                        "distribution directory",
                    ));
                }
            }
        }
        out
    }

    /// Opens the first candidate that loads.
    pub fn open(&self) -> Result<DcgmLibrary, LoadError> {
        let mut attempts = Vec::new();
        for (cand, source) in self.candidates() {
            match open_one(&cand) {
                Ok(lib) if source_is_search(source) && exports_simulator(&lib) => {
                    attempts.push(LoadAttempt {
                        candidate: cand.to_string_lossy().into_owned(),
                        source,
                        error: "this is the dcgm-sim simulator, which is only used when asked for \
                                (DCGM_LIB_PATH or an explicit path)"
                            .into(),
                    });
                }
                Ok(lib) => {
                    let path = resolved_path(&cand);
                    // SAFETY: `lib` stays alive inside the returned DcgmLibrary for as long as
                    // the function pointers resolved from it.
                    let api = unsafe { DcgmApi::load(&lib) };
                    let is_simulator = exports_simulator(&lib);
                    return Ok(DcgmLibrary {
                        api,
                        path,
                        requested: cand,
                        is_simulator,
                        _lib: lib,
                    });
                }
                Err(e) => attempts.push(LoadAttempt {
                    candidate: cand.to_string_lossy().into_owned(),
                    source,
                    error: e,
                }),
            }
        }
        if attempts.is_empty() {
            attempts.push(LoadAttempt {
                candidate: "(none)".into(),
                source: "configuration",
                error: "no candidate paths were configured".into(),
            });
        }
        Err(LoadError { attempts })
    }
}

fn source_is_search(source: &str) -> bool {
    source == "soname search" || source == "distribution directory"
}

fn exports_simulator(lib: &libloading::Library) -> bool {
    // SAFETY: only the symbol's presence is tested; it is never called through this type.
    unsafe { lib.get::<unsafe extern "C" fn() -> i32>(b"dcgmSimIsSimulator\0") }.is_ok()
}

fn push_path(out: &mut Vec<(OsString, &'static str)>, p: &Path, source: &'static str) {
    if p.is_dir() {
        for s in SONAMES {
            out.push((p.join(s).into_os_string(), source));
        }
    } else {
        out.push((p.as_os_str().to_owned(), source));
    }
}

fn open_one(cand: &OsStr) -> Result<libloading::Library, String> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    let is_path = cand.to_string_lossy().contains('/');
    if is_path && !Path::new(cand).exists() {
        return Err("no such file".into());
    }
    // SAFETY: loading a shared library runs its initialisers; libdcgm (and dcgm-sim) have no
    // initialisers with preconditions. RTLD_NOW makes unresolvable dependencies fail here
    // instead of at call time.
    unsafe { Library::open(Some(cand), RTLD_NOW | RTLD_LOCAL) }
        .map(libloading::Library::from)
        .map_err(|e| e.to_string())
}

fn resolved_path(cand: &OsStr) -> PathBuf {
    let p = Path::new(cand);
    if p.components().count() > 1 {
        p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
    } else {
        p.to_path_buf()
    }
}

/// An opened libdcgm and its function table. Dereferences to [`DcgmApi`]: each
/// `lib.dcgmXxx()` returns the function pointer, or a [`SymbolError`] if the library lacks it.
///
/// The library stays loaded as long as this value lives; keep it in an `Arc` and hand clones
/// to whatever calls into it.
pub struct DcgmLibrary {
    api: DcgmApi,
    path: PathBuf,
    requested: OsString,
    is_simulator: bool,
    _lib: libloading::Library,
}

impl fmt::Debug for DcgmLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DcgmLibrary")
            .field("path", &self.path)
            .field("major_version", &self.major_version())
            .field("is_simulator", &self.is_simulator)
            .field("missing_symbols", &self.api.missing_symbols().len())
            .finish()
    }
}

impl DcgmLibrary {
    /// Opens libdcgm with the default search ([`LibraryLoader::new`]).
    pub fn open() -> Result<Self, LoadError> {
        LibraryLoader::new().open()
    }

    /// Opens exactly this file (no environment, no search).
    pub fn open_path(path: impl Into<PathBuf>) -> Result<Self, LoadError> {
        LibraryLoader::new().use_env(false).path(path).open()
    }

    /// The file that was loaded (a bare soname if the dynamic linker found it).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this is the dcgm-sim stand-in (it exports `dcgmSimIsSimulator`) rather than
    /// NVIDIA's libdcgm: data read through it is simulated and must be labelled so.
    pub fn is_simulator(&self) -> bool {
        self.is_simulator
    }

    /// Why the simulator's last `dcgmInit` failed on its configuration (a `DCGM_SIM_CONFIG`
    /// file that does not parse, an unknown key, a bad `DCGM_SIM_FAULTS`), from dcgm-sim's
    /// `dcgmSimInitError`; `None` for NVIDIA's libdcgm, or when it did not fail that way.
    pub fn simulator_init_error(&self) -> Option<String> {
        if !self.is_simulator {
            return None;
        }
        type InitErrorFn = unsafe extern "C" fn() -> *const std::ffi::c_char;
        // SAFETY: dcgm-sim exports dcgmSimInitError with this signature.
        let f = unsafe { self._lib.get::<InitErrorFn>(b"dcgmSimInitError\0") }.ok()?;
        // SAFETY: it takes no arguments and returns NULL or a NUL-terminated string that stays
        // valid until the next dcgmInit; it is copied at once.
        let p = unsafe { f() };
        if p.is_null() {
            return None;
        }
        // SAFETY: non-null and NUL-terminated (above).
        let reason = unsafe { std::ffi::CStr::from_ptr(p) };
        Some(reason.to_string_lossy().into_owned())
    }

    /// DCGM 3.x's `dcgmPolicyRegister` (before `dcgmPolicyRegister_v2`), outside the
    /// function table because its callback differs from every later release's; `None` where
    /// the library does not export it (every 4.x).
    pub fn policy_register_v1(&self) -> Option<crate::dcgmPolicyRegister_v1_t> {
        // SAFETY: the libraries that export this name (DCGM 3.x) declare it with this
        // signature in their dcgm_agent.h.
        unsafe {
            self._lib
                .get::<crate::dcgmPolicyRegister_v1_t>(b"dcgmPolicyRegister\0")
        }
        .ok()
        .map(|s| *s)
    }

    /// The function table.
    pub fn api(&self) -> &DcgmApi {
        &self.api
    }

    /// The library's major version: from a `libdcgm.so.N` file name, otherwise from the
    /// `version:` key of `dcgmVersionInfo`.
    pub fn major_version(&self) -> Option<u32> {
        if let Some(v) =
            soname_major(&self.requested).or_else(|| soname_major(self.path.as_os_str()))
        {
            return Some(v);
        }
        let full = self.version_string()?;
        full.split('.').next()?.parse().ok()
    }

    /// The `version:` value of `dcgmVersionInfo` (e.g. `4.6.0`), if the library reports one.
    pub fn version_string(&self) -> Option<String> {
        let f = self.api.dcgmVersionInfo?;
        let mut info = <crate::dcgmVersionInfo_v2 as crate::Versioned>::new_versioned();
        // SAFETY: `info` is a correctly versioned dcgmVersionInfo_v2 that outlives the call.
        let rc = unsafe { f(&mut info) };
        if rc != crate::DCGM_ST_OK {
            return None;
        }
        // SAFETY: the library NUL-terminates the build string; the buffer is zeroed otherwise.
        let raw = unsafe { CStr::from_ptr(info.rawBuildInfoString.as_ptr()) };
        let raw = raw.to_string_lossy();
        raw.split(';')
            .find_map(|kv| kv.strip_prefix("version:"))
            .map(str::to_owned)
    }
}

fn soname_major(name: &OsStr) -> Option<u32> {
    let name = Path::new(name).file_name()?.to_str()?;
    let rest = name.strip_prefix("libdcgm.so.")?;
    rest.split('.').next()?.parse().ok()
}

impl Deref for DcgmLibrary {
    type Target = DcgmApi;
    fn deref(&self) -> &DcgmApi {
        &self.api
    }
}

/// Declares the function table: one `Option<fn>` field per C function, a function-pointer type
/// per function in [`pfn`](crate::pfn), and an accessor returning `Result<fn, SymbolError>`.
macro_rules! dcgm_api {
    ($( $(#[$meta:meta])* fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty ; )*) => {
        /// Function-pointer types of every libdcgm function, named after the function.
        pub mod pfn {
            #[allow(unused_imports)]
            use super::*;
            $(
                $(#[$meta])*
                pub type $name = unsafe extern "C" fn($($arg: $ty),*) -> $ret;
            )*
        }

        /// Every libdcgm function this crate knows, resolved once when the library is opened.
        /// A field is `None` when the loaded library does not export that symbol.
        #[derive(Clone, Copy)]
        pub struct DcgmApi {
            $( $(#[$meta])* pub $name: Option<pfn::$name>, )*
        }

        impl DcgmApi {
            /// Names of every function in the table.
            pub const SYMBOLS: &'static [&'static str] = &[$(stringify!($name)),*];

            /// Resolves every symbol of the table in `lib`.
            ///
            /// # Safety
            ///
            /// The function pointers are only valid while `lib` stays loaded, and `lib` must
            /// export these names with the signatures declared here (as libdcgm 4.x does).
            pub unsafe fn load(lib: &libloading::Library) -> Self {
                Self {
                    $(
                        // SAFETY: the caller guarantees the library's signature matches.
                        $name: unsafe {
                            lib.get::<pfn::$name>(concat!(stringify!($name), "\0").as_bytes())
                        }
                        .ok()
                        .map(|s| *s),
                    )*
                }
            }

            /// The position of the function named `name` in [`SYMBOLS`](Self::SYMBOLS).
            pub fn index_of(name: &str) -> Option<usize> {
                Self::SYMBOLS.iter().position(|s| *s == name)
            }

            /// The parameter count of the function at `index`.
            pub fn arity(index: usize) -> Option<usize> {
                const ARITIES: &[usize] = &[$(<[&str]>::len(&[$(stringify!($arg)),*])),*];
                ARITIES.get(index).copied()
            }

            /// Calls the function at `index` with `args`, each converted to its parameter's C
            /// type (see [`RawArg`](crate::RawArg)); answers the return value as an integer.
            ///
            /// # Safety
            ///
            /// The arguments must be what the C function expects: every address must point at
            /// live memory of the parameter's type (with its version word set where it has
            /// one), large enough and writable where the function writes, every callback
            /// address a C function of the callback's signature, and each handle one the
            /// library gave out.
            pub unsafe fn call_raw(
                &self,
                index: usize,
                args: &[crate::RawArg],
            ) -> Result<i128, crate::RawCallError> {
                #[allow(unused_imports)]
                use crate::{FromRawArg as _, IntoRawReturn as _};
                let mut position = 0usize;
                $(
                    if index == position {
                        let function = stringify!($name);
                        let f = self.$name.ok_or(crate::RawCallError::Missing(
                            crate::SymbolError { symbol: function },
                        ))?;
                        let expected = <[&str]>::len(&[$(stringify!($arg)),*]);
                        if args.len() != expected {
                            return Err(crate::RawCallError::Arity { function, expected, given: args.len() });
                        }
                        #[allow(unused_mut, unused_variables)]
                        let mut next = args.iter().copied();
                        $(
                            let $arg = <$ty as crate::FromRawArg>::from_raw_arg(
                                next.next().expect("the count was checked"),
                            )
                            .map_err(|reason| crate::RawCallError::Argument {
                                function,
                                parameter: stringify!($arg),
                                reason,
                            })?;
                        )*
                        // SAFETY: the caller guarantees the arguments are valid for the C
                        // function; each has its declared C type.
                        let r = unsafe { f($($arg),*) };
                        return Ok(crate::IntoRawReturn::into_raw_return(r));
                    }
                    position += 1;
                )*
                let _ = position;
                Err(crate::RawCallError::UnknownFunction(index))
            }

            /// The symbols the loaded library lacks.
            pub fn missing_symbols(&self) -> Vec<&'static str> {
                let mut v = Vec::new();
                $( if self.$name.is_none() { v.push(stringify!($name)); } )*
                v
            }

            $(
                $(#[$meta])*
                #[doc = concat!("\n\nReturns the `", stringify!($name), "` function pointer, or a [`SymbolError`] if the library lacks it.")]
                pub fn $name(&self) -> Result<pfn::$name, SymbolError> {
                    self.$name.ok_or(crate::SymbolError { symbol: stringify!($name) })
                }
            )*
        }
    };
}

pub(crate) use dcgm_api;
