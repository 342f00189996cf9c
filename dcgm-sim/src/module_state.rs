//! The load state of an engine's modules, as libdcgm 4.6.0 keeps it: modules load lazily on
//! the first request they serve, can be denylisted until they load, are paused with the
//! telemetry for a diagnostic, and can be marked reloadable (the test framework's way of
//! returning an engine to its state at start between tests).
//!
//! Measured on libdcgm 4.6.0 (embedded engine, H200 node): at start only the core and the
//! NvSwitch modules are loaded; a module that is loaded cannot be denylisted (`IN_USE`); the
//! NvSwitch module is never paused (it has no NvSwitch library to pause here), the other
//! loaded modules and the core are; the VGPU, profiling and multi-node diagnostic modules do
//! not ship with the library, so loading them fails (profiling on Hopper is served by the
//! core through GPM).

#![allow(non_upper_case_globals)] // DCGM's C constant names, matched as patterns.

use dcgm_sys::*;

/// Number of modules.
const COUNT: usize = DcgmModuleIdCount as usize;

/// The modules that cannot load (not shipped with the library the simulator stands for).
const NOT_SHIPPED: [dcgmModuleId_t; 3] =
    [DcgmModuleIdVGPU, DcgmModuleIdProfiling, DcgmModuleIdMnDiag];

/// Per module: its status, and whether an instance of it exists (it was loaded once; a
/// reloadable or denylisted module may still have one).
#[derive(Debug, Clone)]
pub struct ModuleTable {
    status: [dcgmModuleStatus_t; COUNT],
    instance: [bool; COUNT],
}

impl Default for ModuleTable {
    fn default() -> Self {
        let mut t = Self {
            status: [DcgmModuleStatusNotLoaded; COUNT],
            instance: [false; COUNT],
        };
        for id in [DcgmModuleIdCore, DcgmModuleIdNvSwitch] {
            t.status[id as usize] = DcgmModuleStatusLoaded;
            t.instance[id as usize] = true;
        }
        t
    }
}

impl ModuleTable {
    /// The status of every module, indexed by module id.
    pub fn statuses(&self) -> &[dcgmModuleStatus_t] {
        &self.status
    }

    /// Whether the telemetry is paused (the core module is).
    pub fn paused(&self) -> bool {
        self.status[DcgmModuleIdCore as usize] == DcgmModuleStatusPaused
    }

    /// Makes a module ready to serve a request, loading it if needed: `MODULE_NOT_LOADED`
    /// when it is denylisted or cannot load, `BADPARAM` for an unknown id.
    pub fn load(&mut self, id: dcgmModuleId_t) -> Result<(), dcgmReturn_t> {
        let i = id as usize;
        if i >= COUNT {
            return Err(DCGM_ST_BADPARAM);
        }
        if id == DcgmModuleIdCore {
            return Ok(());
        }
        match self.status[i] {
            DcgmModuleStatusDenylisted | DcgmModuleStatusFailed | DcgmModuleStatusUnloaded => {
                return Err(DCGM_ST_MODULE_NOT_LOADED);
            }
            DcgmModuleStatusReloadable => {
                self.status[i] = DcgmModuleStatusLoaded;
            }
            _ => {}
        }
        if self.instance[i] {
            return Ok(());
        }
        if NOT_SHIPPED.contains(&id) {
            self.status[i] = DcgmModuleStatusFailed;
            return Err(DCGM_ST_MODULE_NOT_LOADED);
        }
        self.instance[i] = true;
        self.status[i] = DcgmModuleStatusLoaded;
        // A module loaded while the telemetry is paused starts paused.
        if self.paused() {
            self.pause_one(id);
        }
        Ok(())
    }

    /// Puts a module on the deny list: `IN_USE` once it is loaded, `BADPARAM` for the core or
    /// an unknown id. A reloadable module can be denylisted (it cannot be used again).
    pub fn denylist(&mut self, id: dcgmModuleId_t) -> Result<(), dcgmReturn_t> {
        let i = id as usize;
        if id == DcgmModuleIdCore || i >= COUNT {
            return Err(DCGM_ST_BADPARAM);
        }
        match self.status[i] {
            DcgmModuleStatusLoaded | DcgmModuleStatusPaused => Err(DCGM_ST_IN_USE),
            _ => {
                self.status[i] = DcgmModuleStatusDenylisted;
                Ok(())
            }
        }
    }

    fn pause_one(&mut self, id: dcgmModuleId_t) {
        let i = id as usize;
        if !matches!(
            self.status[i],
            DcgmModuleStatusLoaded | DcgmModuleStatusReloadable
        ) {
            return;
        }
        self.status[i] = if id == DcgmModuleIdNvSwitch {
            DcgmModuleStatusLoaded
        } else {
            DcgmModuleStatusPaused
        };
    }

    /// Pauses every loaded module, the core last (`dcgmPauseTelemetryForDiag`).
    pub fn pause(&mut self) {
        for id in 1..DcgmModuleIdCount {
            self.pause_one(id);
        }
        self.pause_one(DcgmModuleIdCore);
    }

    /// Resumes every paused module (`dcgmResumeTelemetryForDiag`).
    pub fn resume(&mut self) {
        for s in &mut self.status {
            if *s == DcgmModuleStatusPaused {
                *s = DcgmModuleStatusLoaded;
            }
        }
    }

    /// Marks the modules of `mask` (bit `1 << id`; never the core) reloadable: a module that
    /// never loaded becomes not loaded again (which lifts its deny list entry), a loaded or
    /// denylisted one reloadable, a paused one is resumed first (and the core with it).
    /// Returns the mask of the modules that were loaded before.
    pub fn mark_reloadable(&mut self, mask: u32) -> u32 {
        let mask = mask & !(1 << DcgmModuleIdCore);
        let mut loaded = 0;
        let mut resume_core = false;
        for i in 0..COUNT {
            let bit = 1u32 << i;
            if self.status[i] == DcgmModuleStatusLoaded {
                loaded |= bit;
            }
            if mask & bit == 0 {
                continue;
            }
            if !self.instance[i] {
                self.status[i] = DcgmModuleStatusNotLoaded;
                continue;
            }
            match self.status[i] {
                DcgmModuleStatusLoaded | DcgmModuleStatusDenylisted => {
                    self.status[i] = DcgmModuleStatusReloadable;
                }
                DcgmModuleStatusPaused => {
                    self.status[i] = DcgmModuleStatusReloadable;
                    resume_core = true;
                }
                _ => {}
            }
        }
        let core = DcgmModuleIdCore as usize;
        if resume_core && self.status[core] == DcgmModuleStatusPaused {
            self.status[core] = DcgmModuleStatusLoaded;
        }
        loaded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(t: &ModuleTable) -> Vec<u32> {
        t.statuses().to_vec()
    }

    // The sequences below are the ones measured on libdcgm 4.6.0 (see the module docs).
    #[test]
    fn lazy_load_denylist_and_pause() {
        let mut t = ModuleTable::default();
        assert_eq!(st(&t), [3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        t.load(DcgmModuleIdIntrospect).unwrap();
        t.load(DcgmModuleIdHealth).unwrap();
        assert_eq!(t.denylist(DcgmModuleIdHealth), Err(DCGM_ST_IN_USE));
        assert_eq!(t.denylist(DcgmModuleIdNvSwitch), Err(DCGM_ST_IN_USE));
        assert_eq!(t.denylist(DcgmModuleIdCore), Err(DCGM_ST_BADPARAM));
        assert_eq!(t.denylist(DcgmModuleIdCount), Err(DCGM_ST_BADPARAM));
        t.denylist(DcgmModuleIdDiag).unwrap();
        assert_eq!(t.load(DcgmModuleIdDiag), Err(DCGM_ST_MODULE_NOT_LOADED));
        assert_eq!(
            t.load(DcgmModuleIdProfiling),
            Err(DCGM_ST_MODULE_NOT_LOADED)
        );
        assert_eq!(st(&t), [3, 3, 0, 3, 3, 0, 0, 1, 2, 0, 0]);
        t.pause();
        assert_eq!(st(&t), [5, 3, 0, 5, 5, 0, 0, 1, 2, 0, 0]);
        t.load(DcgmModuleIdPolicy).unwrap();
        assert_eq!(t.statuses()[DcgmModuleIdPolicy as usize], 5);
        t.resume();
        assert_eq!(st(&t), [3, 3, 0, 3, 3, 3, 0, 1, 2, 0, 0]);
    }

    #[test]
    fn reloadable() {
        let mut t = ModuleTable::default();
        let _ = t.load(DcgmModuleIdProfiling);
        assert_eq!(t.mark_reloadable(0), 0b11);
        assert_eq!(t.mark_reloadable(u32::MAX), 0b11);
        assert_eq!(st(&t), [3, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        t.load(DcgmModuleIdHealth).unwrap();
        assert_eq!(t.mark_reloadable(!0b11), 0b1_0001);
        t.denylist(DcgmModuleIdHealth).unwrap();
        assert_eq!(t.load(DcgmModuleIdHealth), Err(DCGM_ST_MODULE_NOT_LOADED));
        assert_eq!(t.mark_reloadable(!0b11), 1);
        t.load(DcgmModuleIdHealth).unwrap();
        assert_eq!(st(&t), [3, 6, 0, 0, 3, 0, 0, 0, 0, 0, 0]);
        t.pause();
        t.load(DcgmModuleIdIntrospect).unwrap();
        assert_eq!(st(&t), [5, 3, 0, 5, 5, 0, 0, 0, 0, 0, 0]);
        assert_eq!(t.mark_reloadable(!0b11), 0b10);
        assert_eq!(st(&t), [3, 3, 0, 6, 6, 0, 0, 0, 0, 0, 0]);
        assert!(!t.paused());
    }
}
