//! Per-GPU state: whether DCGM can use a GPU, and its chip architecture.

use std::fmt;

use dcgm_sys::*;

use crate::error::Result;
use crate::library::ffi;
use crate::system::System;

/// Whether DCGM can use a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GpuStatus {
    /// DCGM does not know (also used for values this crate does not know).
    Unknown,
    /// Usable.
    Ok,
    /// DCGM does not support this GPU.
    Unsupported,
    /// The driver cannot reach it.
    Inaccessible,
    /// It fell off the bus or stopped answering.
    Lost,
    /// A fake GPU injected for tests.
    Fake,
    /// Disabled (excluded by the administrator).
    Disabled,
    /// The driver was detached from it.
    Detached,
}

impl GpuStatus {
    #[allow(non_upper_case_globals)] // DCGM's C names
    fn from_raw(v: DcgmEntityStatus_t) -> Self {
        match v {
            DcgmEntityStatusOk => Self::Ok,
            DcgmEntityStatusUnsupported => Self::Unsupported,
            DcgmEntityStatusInaccessible => Self::Inaccessible,
            DcgmEntityStatusLost => Self::Lost,
            DcgmEntityStatusFake => Self::Fake,
            DcgmEntityStatusDisabled => Self::Disabled,
            DcgmEntityStatusDetached => Self::Detached,
            _ => Self::Unknown,
        }
    }
}

/// A GPU's chip architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChipArchitecture {
    /// Older than Kepler.
    Older,
    /// Kepler.
    Kepler,
    /// Maxwell.
    Maxwell,
    /// Pascal.
    Pascal,
    /// Volta.
    Volta,
    /// Turing.
    Turing,
    /// Ampere.
    Ampere,
    /// Ada.
    Ada,
    /// Hopper.
    Hopper,
    /// Blackwell.
    Blackwell,
    /// Not known (also used for values this crate does not know).
    Unknown,
}

impl ChipArchitecture {
    #[allow(non_upper_case_globals)] // DCGM's C names
    fn from_raw(v: dcgmChipArchitecture_t) -> Self {
        match v {
            DCGM_CHIP_ARCH_OLDER => Self::Older,
            DCGM_CHIP_ARCH_KEPLER => Self::Kepler,
            DCGM_CHIP_ARCH_MAXWELL => Self::Maxwell,
            DCGM_CHIP_ARCH_PASCAL => Self::Pascal,
            DCGM_CHIP_ARCH_VOLTA => Self::Volta,
            DCGM_CHIP_ARCH_TURING => Self::Turing,
            DCGM_CHIP_ARCH_AMPERE => Self::Ampere,
            DCGM_CHIP_ARCH_ADA => Self::Ada,
            DCGM_CHIP_ARCH_HOPPER => Self::Hopper,
            DCGM_CHIP_ARCH_BLACKWELL => Self::Blackwell,
            _ => Self::Unknown,
        }
    }
}

impl fmt::Display for ChipArchitecture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl System {
    /// Whether DCGM can use a GPU.
    ///
    /// ```
    /// # fn main() -> dcgm::Result<()> {
    /// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
    /// use dcgm::GpuStatus;
    /// let sys = handle.system();
    /// assert_eq!(sys.gpu_status(0)?, GpuStatus::Ok);
    /// println!("GPU 0 is a {} part", sys.chip_architecture(0)?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away. A GPU id the node does not have is not an
    /// error: libdcgm 4.6.0 reports it as [`GpuStatus::Unknown`].
    #[doc(alias = "dcgmGetGpuStatus")]
    pub fn gpu_status(&self, gpu: u32) -> Result<GpuStatus> {
        let mut s: DcgmEntityStatus_t = DcgmEntityStatusUnknown;
        let lib = self.handle().lib();
        // SAFETY: a valid out-pointer.
        unsafe { ffi!(lib, dcgmGetGpuStatus(self.handle().raw(), gpu, &mut s)) }?;
        Ok(GpuStatus::from_raw(s))
    }

    /// A GPU's chip architecture.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_BADPARAM` for a GPU id the node does not have; `ConnectionLost`;
    /// `NotInRelease` before DCGM 4.2 (also from an older connected nv-hostengine).
    #[doc(alias = "dcgmGetGpuChipArchitecture")]
    pub fn chip_architecture(&self, gpu: u32) -> Result<ChipArchitecture> {
        let mut a: dcgmChipArchitecture_t = DCGM_CHIP_ARCH_UNKNOWN;
        let lib = self.handle().lib();
        // SAFETY: a valid out-pointer.
        let r = unsafe {
            ffi!(
                lib,
                dcgmGetGpuChipArchitecture(self.handle().raw(), gpu, &mut a)
            )
        };
        self.handle()
            .in_release(crate::Capability::ChipArchitecture, r)?;
        Ok(ChipArchitecture::from_raw(a))
    }
}
