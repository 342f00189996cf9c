//! Failure-reason metadata: the messages, suggestions, severities and categories of the
//! `DCGM_FR_*` codes, as libdcgm 4.6.0 answers them (recorded from it in `data/`). The C
//! functions that answer them are in `ffi/failure_reasons.rs`.

use std::ffi::CString;
use std::sync::OnceLock;

use dcgm_sys::*;

/// What libdcgm 4.6.0 says about a failure reason: its printf-style message format and its
/// suggestion (recorded in `data/failure-messages.tsv`).
#[derive(Debug, Clone)]
pub struct ErrorInfo {
    /// The `DCGM_FR_*` code.
    pub code: dcgmError_t,
    /// printf-style template (empty for the codes libdcgm gives none).
    pub format: CString,
    /// What to do about it (empty for the codes libdcgm gives none).
    pub suggestion: CString,
}

/// Every failure reason libdcgm 4.6.0 describes, in code order.
pub fn errors() -> &'static [ErrorInfo] {
    static T: OnceLock<Vec<ErrorInfo>> = OnceLock::new();
    T.get_or_init(|| {
        include_str!("../data/failure-messages.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut it = l.splitn(3, '\t');
                let code = it.next()?.trim().parse().ok()?;
                let format = CString::new(it.next().unwrap_or("")).ok()?;
                let suggestion = CString::new(it.next().unwrap_or("")).ok()?;
                Some(ErrorInfo {
                    code,
                    format,
                    suggestion,
                })
            })
            .collect()
    })
}

/// libdcgm's description of a failure reason, if it has one.
pub fn error_info(code: dcgmError_t) -> Option<&'static ErrorInfo> {
    errors().iter().find(|e| e.code == code)
}

/// Severity and category of a failure reason as libdcgm 4.6.0 reports them (recorded in
/// `data/failure-reasons.tsv`); unknown codes answer (3, 3) there too.
pub fn recorded_class(code: u32) -> (dcgmErrorSeverity_t, dcgmErrorCategory_t) {
    static T: OnceLock<Vec<(u32, u32, u32)>> = OnceLock::new();
    T.get_or_init(|| {
        include_str!("../data/failure-reasons.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut it = l.split('\t').map(|v| v.trim().parse::<u32>());
                Some((it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?))
            })
            .collect()
    })
    .iter()
    .find(|r| r.0 == code)
    .map_or((3, 3), |r| (r.1 as _, r.2 as _))
}
