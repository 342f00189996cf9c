//! Hardware errors during the window: XID, ECC, PCIe replays, NVLink CRC errors.

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::sample::Sample;
use crate::stats;

/// The error counters, what their growth means, and how much it matters: a double-bit ECC
/// error loses data; single-bit ones are corrected but foretell a failing page; replays and
/// CRC errors are retried, and cost bandwidth, pointing at a link or riser.
const COUNTERS: [(Field, &str, Severity); 4] = [
    (Field::EccDbe, "ecc_dbe_new", Severity::Problem),
    (Field::EccSbe, "ecc_sbe_new", Severity::Warning),
    (Field::PcieReplays, "pcie_replays_new", Severity::Warning),
    (
        Field::NvlinkCrcErrors,
        "nvlink_crc_errors_new",
        Severity::Warning,
    ),
];

pub(super) fn judge(gpu: u32, samples: &[Sample]) -> Vec<Finding> {
    let mut ev = Vec::new();
    let mut what = Vec::new();
    let mut severity = None;
    let mut first: Option<i64> = None;
    let mut last: Option<i64> = None;
    let mut mark = |t: i64| {
        first = Some(first.map_or(t, |f: i64| f.min(t)));
        last = Some(last.map_or(t, |l: i64| l.max(t)));
    };
    // An XID latched before the window is the first sample's value: only a change to a new
    // non-zero code is an error in the window. DCGM leaves the field blank until an XID
    // happens, so a code after blanks is new.
    let mut xids: Vec<f64> = Vec::new();
    let mut prev = samples.first().and_then(|s| s.get(Field::Xid));
    for s in samples {
        if let Some(x) = s.get(Field::Xid) {
            if x != 0.0 && Some(x) != prev {
                xids.push(x);
                mark(s.timestamp_ms);
            }
            prev = Some(x);
        }
    }
    if !xids.is_empty() {
        ev.push(Evidence::new("xid_events", xids.len() as f64, "count"));
        ev.push(Evidence::new(
            "xid_last",
            *xids.last().unwrap_or(&0.0),
            "count",
        ));
        what.push(format!(
            "XID {}",
            xids.iter()
                .map(|x| format!("{x:.0}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        severity = Some(Severity::Problem);
    }
    for (field, name, sev) in COUNTERS {
        let Some(grew) = stats::growth(samples, field).filter(|&g| g > 0.0) else {
            continue;
        };
        ev.push(Evidence::new(name, grew, "count"));
        what.push(format!("{grew:.0} {}", field.tag()));
        severity = severity.max(Some(sev));
        let mut prev = None;
        for s in samples {
            if let Some(v) = s.get(field) {
                if prev.is_some_and(|p| v > p) {
                    mark(s.timestamp_ms);
                }
                prev = Some(v);
            }
        }
    }
    let (Some(severity), Some(start), Some(end)) = (severity, first, last) else {
        return Vec::new();
    };
    vec![Finding {
        kind: Kind::HardwareErrors,
        severity,
        gpus: vec![gpu],
        start_ms: start,
        end_ms: end,
        evidence: ev,
        explanation: format!("hardware errors during the window: {}", what.join("; ")),
        advice:
            "look the XID up in NVIDIA's XID catalogue; drain the GPU and run dcgmi diag -r 3; \
                 repeated ECC or link errors mean a card, riser or cable to replace"
                .into(),
    }]
}
