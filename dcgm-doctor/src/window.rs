//! A stretch of time of every GPU's samples: what the doctor judges.

use std::collections::BTreeMap;

use crate::sample::Sample;

/// The samples of a stretch of time, per GPU, each GPU's in time order.
#[derive(Debug, Clone, Default)]
pub struct Window {
    gpus: BTreeMap<u32, Vec<Sample>>,
    /// The samples came from the simulator (the report says so).
    pub simulated: bool,
}

impl Window {
    /// A window of these samples, in any order.
    pub fn from_samples(samples: impl IntoIterator<Item = Sample>) -> Self {
        let mut gpus: BTreeMap<u32, Vec<Sample>> = BTreeMap::new();
        for s in samples {
            gpus.entry(s.gpu).or_default().push(s);
        }
        for v in gpus.values_mut() {
            v.sort_by_key(|s| s.timestamp_ms);
        }
        Window {
            gpus,
            simulated: false,
        }
    }

    /// Adds one sample (kept in time order).
    pub fn push(&mut self, sample: Sample) {
        let v = self.gpus.entry(sample.gpu).or_default();
        let at = v.partition_point(|s| s.timestamp_ms <= sample.timestamp_ms);
        v.insert(at, sample);
    }

    /// The GPUs and their samples, by GPU id.
    pub fn gpus(&self) -> impl Iterator<Item = (u32, &[Sample])> {
        self.gpus.iter().map(|(g, v)| (*g, v.as_slice()))
    }

    /// The samples of one GPU.
    pub fn gpu(&self, gpu: u32) -> &[Sample] {
        self.gpus.get(&gpu).map_or(&[], Vec::as_slice)
    }

    /// How many samples, of every GPU.
    pub fn len(&self) -> usize {
        self.gpus.values().map(Vec::len).sum()
    }

    /// Whether it holds no sample.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// First and last sample time, ms.
    pub fn span(&self) -> Option<(i64, i64)> {
        let first = self
            .gpus
            .values()
            .filter_map(|v| v.first())
            .map(|s| s.timestamp_ms)
            .min()?;
        let last = self
            .gpus
            .values()
            .filter_map(|v| v.last())
            .map(|s| s.timestamp_ms)
            .max()?;
        Some((first, last))
    }

    /// The samples from `from_ms` up to but not including `to_ms`.
    pub fn between(&self, from_ms: i64, to_ms: i64) -> Window {
        let gpus = self
            .gpus
            .iter()
            .map(|(g, v)| {
                let a = v.partition_point(|s| s.timestamp_ms < from_ms);
                let b = v.partition_point(|s| s.timestamp_ms < to_ms);
                (*g, v[a..b.max(a)].to_vec())
            })
            .filter(|(_, v)| !v.is_empty())
            .collect();
        Window {
            gpus,
            simulated: self.simulated,
        }
    }
}
