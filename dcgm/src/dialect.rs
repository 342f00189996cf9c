//! Asking each DCGM release in its own dialect: for a struct whose version changed between
//! releases, send the newest version the answering release accepts (chosen from the version
//! facts in [`crate::release`]), retry once with the next older version on `VER_MISMATCH`,
//! and remember per handle which version was accepted.

use std::sync::OnceLock;

use dcgm_sys::DCGM_ST_VER_MISMATCH;

use crate::error::{Error, Result};
use crate::release::DcgmVersion;

/// A struct whose version is chosen per handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    /// `dcgmGroupGetInfo`: `dcgmGroupInfo_v3` from 4.0, `_v2` before.
    GroupInfo,
    /// `dcgmHealthCheck`: `dcgmHealthResponse_v5` from 4.0, `_v4` before.
    HealthResponse,
    /// `dcgmConfigGet`/`dcgmConfigSet`: `dcgmConfig_v2` from 4.0, `_v1` before.
    Config,
    /// `dcgmRunDiagnostic`: `dcgmDiagResponse_v12` from 4.2, `_v11` from 4.0, `_v10` before.
    DiagResponse,
    /// `dcgmActionValidate_v2`: the run parameters and the response as a pair (RunDiag v10
    /// with response v12 from 4.2, v10 with v11 in 4.1, v9 with v11 in 4.0, v8 with v10 in
    /// 3.3.9).
    RunDiag,
    /// `dcgmGetNvLinkLinkStatus`: `dcgmNvLinkStatus_v5` from 4.6, `_v4` from 4.0, `_v3`
    /// before.
    NvLinkStatus,
}

impl Asked {
    const COUNT: usize = 6;

    fn index(self) -> usize {
        match self {
            Asked::GroupInfo => 0,
            Asked::HealthResponse => 1,
            Asked::Config => 2,
            Asked::DiagResponse => 3,
            Asked::RunDiag => 4,
            Asked::NvLinkStatus => 5,
        }
    }
}

/// One version of a struct (or of the structs a call sends together): what is sent, a
/// version word by default, and the first release that accepts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Offer<W = u32> {
    pub word: W,
    pub since: DcgmVersion,
}

impl<W> Offer<W> {
    pub(crate) const fn new(word: W, since: DcgmVersion) -> Self {
        Self { word, since }
    }
}

/// The versions a handle's release accepted, one slot per [`Asked`] holding the position of
/// the accepted offer in that call's offers (each [`Asked`] has one list): set on the first
/// successful call and kept for the handle's life (a raw handle is bound to one library and
/// one engine process).
#[derive(Debug, Default)]
pub(crate) struct Dialect {
    accepted: [OnceLock<usize>; Asked::COUNT],
}

/// Whether `e` says the library refused the struct version (also when `crate::library`
/// already turned it into `NotInRelease`). A layout that could not be decoded is not.
pub(crate) fn is_version_refusal(e: &Error) -> bool {
    match e {
        Error::Dcgm { code, .. } => code.raw() == DCGM_ST_VER_MISMATCH,
        Error::NotInRelease { .. } => true,
        _ => false,
    }
}

/// The index of the first offer (newest first) that `release` accepts; the newest where the
/// release is unknown, the oldest where it is older than every offer.
pub(crate) fn first_offer<W>(offers: &[Offer<W>], release: Option<DcgmVersion>) -> usize {
    match release {
        None => 0,
        Some(r) => offers
            .iter()
            .position(|o| r >= o.since)
            .unwrap_or(offers.len().saturating_sub(1)),
    }
}

impl Dialect {
    /// Calls `ask` with a version word of `offers` (newest first): the remembered one, or the
    /// newest that `release` (the answering release, where known) accepts, and on a version
    /// refusal once more with the next older one. The offer of a successful call is
    /// remembered.
    pub(crate) fn ask<W: Copy, T>(
        &self,
        release: Option<DcgmVersion>,
        what: Asked,
        offers: &[Offer<W>],
        mut ask: impl FnMut(W) -> Result<T>,
    ) -> Result<T> {
        let slot = &self.accepted[what.index()];
        if let Some(offer) = slot.get().and_then(|&i| offers.get(i)) {
            return ask(offer.word);
        }
        let start = first_offer(offers, release);
        let mut refused = None;
        for (i, offer) in offers.iter().enumerate().skip(start).take(2) {
            match ask(offer.word) {
                Ok(v) => {
                    let _ = slot.set(i);
                    return Ok(v);
                }
                Err(e) if is_version_refusal(&e) => refused = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(refused.unwrap_or_else(|| {
            Error::InvalidArgument(format!("no struct version to offer for {what:?}"))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: [Offer; 2] = [
        Offer::new(0x0300_0000, DcgmVersion::new(4, 0, 0)),
        Offer::new(0x0200_0000, DcgmVersion::new(3, 0, 0)),
    ];

    #[test]
    fn the_newest_offer_the_release_accepts_comes_first() {
        assert_eq!(first_offer(&V, None), 0);
        assert_eq!(first_offer(&V, Some(DcgmVersion::new(4, 6, 0))), 0);
        assert_eq!(first_offer(&V, Some(DcgmVersion::new(4, 0, 0))), 0);
        assert_eq!(first_offer(&V, Some(DcgmVersion::new(3, 3, 9))), 1);
        assert_eq!(first_offer(&V, Some(DcgmVersion::new(2, 4, 7))), 1);
    }

    #[test]
    fn only_a_version_refusal_is_retried() {
        let refusal = Error::Dcgm {
            code: crate::ReturnCode::from_raw(DCGM_ST_VER_MISMATCH),
            call: "dcgmGroupGetInfo",
            message: None,
        };
        assert!(is_version_refusal(&refusal));
        let layout = Error::UnknownLayout {
            call: "dcgmGroupGetInfo",
            version: 7,
        };
        assert!(!is_version_refusal(&layout));
        assert!(!is_version_refusal(&Error::InvalidArgument("x".into())));
    }
}
