//! Watching while the load runs: DCGM sampled in the same process every `-d` ms, through a
//! `dcgm-reader` [`Reader`] of the fields `dcgm-doctor` judges (SM clock and its maximum,
//! clock-event reasons, power and its limit, temperature, the power and thermal violation
//! counters, volatile ECC counts, XID, PCIe replays, ...) and the memory temperature.

use std::collections::BTreeMap;
use std::time::Duration;

use dcgm::{EntityGroup, FieldId};
use dcgm_doctor::{Field, Sample};
use dcgm_reader::{Reader, ReaderBuilder, Snapshot};

/// DCGM's memory (HBM) temperature, °C (`DCGM_FI_DEV_MEMORY_TEMP`).
pub const MEMORY_TEMP: FieldId = FieldId(140);

/// A reader builder of the doctor's fields and the memory temperature of every GPU (the
/// burned ones are picked from its readings: a GPU id DCGM does not know is then an error of
/// burn's, not a refused group), sampled every `interval`; blanks kept (unknown, never 0). Add
/// the connection, then build.
pub fn reader_builder(interval: Duration) -> ReaderBuilder {
    let mut fields: Vec<FieldId> = Field::ALL.iter().map(|f| FieldId(f.id())).collect();
    fields.push(MEMORY_TEMP);
    Reader::builder()
        .fields(&fields)
        .update_frequency(interval)
        .max_keep_age(Duration::from_secs(60))
        .ignore_blank(false)
}

/// One reading of a GPU: the doctor's sample, and the memory temperature.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The doctor's fields.
    pub sample: Sample,
    /// Memory temperature, °C, where DCGM has it.
    pub memory_temp_c: Option<f64>,
}

/// Samples a connected reader.
pub struct Sampler {
    reader: Reader,
    snap: Snapshot,
}

impl Sampler {
    /// Samples through `reader` (connected).
    pub fn new(reader: Reader) -> Self {
        Self {
            reader,
            snap: Snapshot::new(),
        }
    }

    /// Whether the reader reads the simulator.
    pub fn simulated(&self) -> bool {
        self.reader.is_simulated().unwrap_or(false)
    }

    /// The reader's handle (for the GPUs' attributes).
    pub fn handle(&self) -> Option<&dcgm::Handle> {
        self.reader.handle()
    }

    /// The latest reading of each GPU that has one, stamped `now_ms`.
    pub fn read(&mut self, now_ms: i64) -> dcgm::Result<BTreeMap<u32, Reading>> {
        self.reader.latest_into(&mut self.snap)?;
        let mut out = BTreeMap::new();
        for (entity, values) in &self.snap {
            if entity.group != EntityGroup::Gpu {
                continue;
            }
            let mut s = Sample::new(now_ms, entity.id);
            let mut any = false;
            for f in Field::ALL {
                let v = values.get(&FieldId(f.id())).and_then(|v| v.value.as_f64());
                any |= v.is_some();
                s.set(f, v);
            }
            if !any {
                continue;
            }
            let memory_temp_c = values.get(&MEMORY_TEMP).and_then(|v| v.value.as_f64());
            out.insert(
                entity.id,
                Reading {
                    sample: s,
                    memory_temp_c,
                },
            );
        }
        Ok(out)
    }
}

/// Wall-clock milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
