//! One GPU's values and attributes, and how the report's lines read them: a whole number with
//! its unit, watts, Yes/No, Enabled/Disabled, `N/A` where DCGM has no value.

use std::collections::BTreeMap;

use dcgm::Value;
use dcgm::raw::sys::DCGM_FI_DEV_CLOCKS_EVENT_REASONS;

use super::samples::{SampleStats, sample_section};
use super::text::{NA, Report};

/// One GPU's values and attributes, and how its lines read them.
pub(super) struct Gpu<'a> {
    pub(super) id: u32,
    pub(super) values: &'a BTreeMap<(u32, u16), Value>,
    /// The sample statistics, when the report prints the sample sections.
    pub(super) samples: Option<&'a BTreeMap<(u32, u16), SampleStats>>,
    pub(super) attrs: &'a dcgm::DeviceAttributes,
}

impl Gpu<'_> {
    pub(super) fn num(&self, field: u16) -> Option<f64> {
        self.values.get(&(self.id, field)).and_then(Value::as_f64)
    }

    pub(super) fn int(&self, field: u16) -> Option<i64> {
        self.num(field).map(|v| v.round() as i64)
    }

    /// A whole number with its unit (`62 C`), or `N/A`.
    pub(super) fn with(&self, field: u16, unit: &str) -> String {
        self.int(field)
            .map(|v| {
                if unit.is_empty() {
                    v.to_string()
                } else {
                    format!("{v} {unit}")
                }
            })
            .unwrap_or_else(|| NA.into())
    }

    pub(super) fn plain(&self, field: u16) -> String {
        self.with(field, "")
    }

    pub(super) fn watts(&self, field: u16) -> String {
        self.num(field)
            .map(|w| format!("{w:.2} W"))
            .unwrap_or_else(|| NA.into())
    }

    pub(super) fn yes_no(&self, field: u16) -> String {
        self.int(field)
            .map(|v| if v != 0 { "Yes" } else { "No" }.to_string())
            .unwrap_or_else(|| NA.into())
    }

    pub(super) fn enabled(&self, field: u16) -> String {
        self.int(field)
            .map(|v| if v != 0 { "Enabled" } else { "Disabled" }.to_string())
            .unwrap_or_else(|| NA.into())
    }

    pub(super) fn reason(&self, bit: i64) -> &'static str {
        match self.int(DCGM_FI_DEV_CLOCKS_EVENT_REASONS) {
            Some(mask) if mask & bit != 0 => "Active",
            Some(_) => "Not Active",
            None => NA,
        }
    }

    /// A counter of nanoseconds, in microseconds as nvidia-smi prints it.
    pub(super) fn ns_as_us(&self, field: u16) -> String {
        self.int(field)
            .map(|ns| format!("{} us", ns / 1000))
            .unwrap_or_else(|| NA.into())
    }

    /// nvidia-smi's sample section `heading` of `field`, when the report prints them (see
    /// [`sample_section`]).
    pub(super) fn samples(
        &self,
        r: &mut Report,
        heading: &str,
        field: u16,
        value: impl Fn(f64) -> String,
    ) {
        if let Some(samples) = self.samples {
            sample_section(r, heading, samples.get(&(self.id, field)), value);
        }
    }
}
