//! DCGM's loadable modules: their load states, and keeping one from loading.

use std::fmt;

use dcgm_sys::*;

use crate::error::Result;
use crate::library::ffi;
use crate::system::System;

/// A DCGM module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Module {
    /// The core (always loaded).
    Core,
    /// NvSwitch support.
    NvSwitch,
    /// vGPU support.
    Vgpu,
    /// Host-engine introspection.
    Introspect,
    /// Health watches.
    Health,
    /// Policies.
    Policy,
    /// Configuration.
    Config,
    /// Diagnostics.
    Diag,
    /// Profiling (DCP) metrics.
    Profiling,
    /// CPU monitoring.
    Sysmon,
    /// Multi-node diagnostics.
    MnDiag,
    /// A module id this crate does not know.
    Other(u32),
}

impl Module {
    /// From the C id.
    #[allow(non_upper_case_globals)] // DCGM's C names
    pub(crate) fn from_raw(id: dcgmModuleId_t) -> Self {
        match id {
            DcgmModuleIdCore => Self::Core,
            DcgmModuleIdNvSwitch => Self::NvSwitch,
            DcgmModuleIdVGPU => Self::Vgpu,
            DcgmModuleIdIntrospect => Self::Introspect,
            DcgmModuleIdHealth => Self::Health,
            DcgmModuleIdPolicy => Self::Policy,
            DcgmModuleIdConfig => Self::Config,
            DcgmModuleIdDiag => Self::Diag,
            DcgmModuleIdProfiling => Self::Profiling,
            DcgmModuleIdSysmon => Self::Sysmon,
            DcgmModuleIdMnDiag => Self::MnDiag,
            o => Self::Other(o),
        }
    }

    /// The C id (for [`crate::HandleBuilder::deny_modules`], for example).
    pub(crate) fn raw(self) -> dcgmModuleId_t {
        match self {
            Self::Core => DcgmModuleIdCore,
            Self::NvSwitch => DcgmModuleIdNvSwitch,
            Self::Vgpu => DcgmModuleIdVGPU,
            Self::Introspect => DcgmModuleIdIntrospect,
            Self::Health => DcgmModuleIdHealth,
            Self::Policy => DcgmModuleIdPolicy,
            Self::Config => DcgmModuleIdConfig,
            Self::Diag => DcgmModuleIdDiag,
            Self::Profiling => DcgmModuleIdProfiling,
            Self::Sysmon => DcgmModuleIdSysmon,
            Self::MnDiag => DcgmModuleIdMnDiag,
            Self::Other(o) => o,
        }
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Other(o) => write!(f, "module {o}"),
            m => write!(f, "{m:?}"),
        }
    }
}

/// The load state of a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModuleStatus {
    /// Not loaded yet (modules load on first use).
    NotLoaded,
    /// On the deny list: it will not load, and its calls fail.
    Denylisted,
    /// Loading failed.
    Failed,
    /// Loaded.
    Loaded,
    /// Unloaded.
    Unloaded,
    /// Loaded but paused.
    Paused,
    /// Loaded, and may be unloaded and reloaded.
    Reloadable,
    /// A state this crate does not know.
    Other(u32),
}

impl ModuleStatus {
    #[allow(non_upper_case_globals)] // DCGM's C names
    fn from_raw(v: dcgmModuleStatus_t) -> Self {
        match v {
            DcgmModuleStatusNotLoaded => Self::NotLoaded,
            DcgmModuleStatusDenylisted => Self::Denylisted,
            DcgmModuleStatusFailed => Self::Failed,
            DcgmModuleStatusLoaded => Self::Loaded,
            DcgmModuleStatusUnloaded => Self::Unloaded,
            DcgmModuleStatusPaused => Self::Paused,
            DcgmModuleStatusReloadable => Self::Reloadable,
            o => Self::Other(o),
        }
    }
}

impl System {
    /// The state of every module.
    ///
    /// ```
    /// # fn main() -> dcgm::Result<()> {
    /// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
    /// for (module, status) in handle.system().module_statuses()? {
    ///     println!("{module}: {status:?}");
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmModuleGetStatuses")]
    pub fn module_statuses(&self) -> Result<Vec<(Module, ModuleStatus)>> {
        let mut s = dcgmModuleGetStatuses_v1::new_versioned();
        let lib = self.handle().lib();
        // SAFETY: a versioned struct valid for the call.
        unsafe { ffi!(lib, dcgmModuleGetStatuses(self.handle().raw(), &mut s)) }?;
        let n = (s.numStatuses as usize).min(s.statuses.len());
        Ok(s.statuses[..n]
            .iter()
            .map(|m| (Module::from_raw(m.id), ModuleStatus::from_raw(m.status)))
            .collect())
    }

    /// Keeps a module from loading; its calls then fail with `DCGM_ST_MODULE_NOT_LOADED`.
    /// Only works before the module has loaded.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_BADPARAM` for the core module, which cannot be denied; `ConnectionLost`.
    #[doc(alias = "dcgmModuleDenylist")]
    pub fn module_denylist(&self, module: Module) -> Result<()> {
        let lib = self.handle().lib();
        // SAFETY: plain arguments on a live handle.
        unsafe { ffi!(lib, dcgmModuleDenylist(self.handle().raw(), module.raw())) }
    }
}
