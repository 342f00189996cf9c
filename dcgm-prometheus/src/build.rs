//! The model builder: [`Renderer::build`] turns one collection (snapshots and event windows)
//! into an [`Exposition`], once; the text and OTLP encoders read it.

use std::collections::BTreeMap;
use std::sync::Arc;

use dcgm::{Entity, EntityGroup, FieldId, FieldValue, Value};
use dcgm_reader::Snapshot;

use crate::counters::{CounterField, ExporterCounter, MetricKind};
use crate::events::EventWindow;
use crate::exposition::{Exposition, MetricFamily, Sample};
use crate::identity::{LabelSet, labels};
use crate::label_sets::{decimal, refresh_row_labels};
use crate::metadata::FamilyMeta;
use crate::renderer::{InfoFamily, Renderer};
use crate::verdicts::{HEALTH_WATCHES, p2p_status_value};

/// Label for the window size of the windowed exporter rows (as dcgm-exporter).
pub const WINDOW_LABEL: &str = "window_size_in_ms";

/// The values of `entity` in the first snapshot that has it.
fn values_of<'a>(
    snaps: &[&'a Snapshot],
    entity: &Entity,
) -> Option<&'a BTreeMap<FieldId, FieldValue>> {
    snaps.iter().find_map(|s| s.get(entity))
}

/// The families of a build, in order, in the slots (and allocations) of the last build's.
struct Families<'a> {
    list: &'a mut Vec<MetricFamily>,
    len: usize,
}

impl Families<'_> {
    /// The next family's series, empty.
    fn next(&mut self) -> &mut Vec<Sample> {
        if self.len == self.list.len() {
            self.list.push(MetricFamily {
                name: String::new(),
                help: String::new(),
                kind: MetricKind::Gauge,
                field: None,
                samples: Vec::new(),
            });
        }
        let samples = &mut self.list[self.len].samples;
        samples.clear();
        samples
    }

    /// Keeps the family whose series [`Families::next`] gave, unless it has none (a family
    /// without series is left out, its HELP and TYPE too).
    fn keep(&mut self, name: &str, help: &str, kind: MetricKind, field: Option<CounterField>) {
        let f = &mut self.list[self.len];
        if f.samples.is_empty() {
            return;
        }
        f.name.clear();
        f.name.push_str(name);
        f.help.clear();
        f.help.push_str(help);
        f.kind = kind;
        f.field = field;
        self.len += 1;
    }

    fn finish(self) {
        self.list.truncate(self.len);
    }
}

/// Pushes a series of a number value (anything else is left out).
fn push(
    out: &mut Vec<Sample>,
    (base, row, workload): (&Arc<LabelSet>, &Arc<LabelSet>, &Arc<LabelSet>),
    own: LabelSet,
    value: &Value,
    entity: Option<Entity>,
) {
    if matches!(value, Value::Int(_) | Value::Double(_)) {
        out.push(Sample {
            base: base.clone(),
            row: row.clone(),
            workload: workload.clone(),
            own,
            value: value.clone(),
            entity,
        });
    }
}

impl Renderer {
    /// Builds the model of one collection into `exp` (what it held is replaced; its
    /// allocations are reused): the counters' families and those of
    /// [`Renderer::set_info_family`] in name order, each with its series, label sets shared
    /// between the series of an entity. An entity's values are taken from the first snapshot
    /// that has it. `windows` feed the `DCGM_EXP_XID_ERRORS_COUNT` /
    /// `DCGM_EXP_CLOCK_EVENTS_COUNT` rows; a windowed row without its window is left out.
    pub fn build(&mut self, snaps: &[&Snapshot], windows: &[EventWindow], exp: &mut Exposition) {
        for (i, id) in self.identities.iter().enumerate() {
            let values = values_of(snaps, &id.entity);
            refresh_row_labels(
                &mut self.row_labels[i],
                values,
                &self.label_rows,
                EntityGroup::Gpu,
            );
        }
        for (i, (_, e, g)) in self.others.iter().enumerate() {
            let values = values_of(snaps, e);
            refresh_row_labels(&mut self.other_row_labels[i], values, &self.label_rows, *g);
        }
        exp.simulated = self.simulated;
        exp.hostname_label.clone_from(&self.opts.hostname_label);
        exp.uuid_label.clone_from(&self.opts.uuid_label);
        exp.hostengine.clone_from(&self.opts.hostengine);
        let mut families = Families {
            list: &mut exp.families,
            len: 0,
        };
        let mut info = self.info_families.iter().peekable();
        let mut scratch = Vec::new();
        for f in &self.families {
            while let Some(i) = info.next_if(|i| i.name < f.name) {
                self.info_family(i, families.next());
                families.keep(&i.name, &i.help, MetricKind::Gauge, None);
            }
            self.family(f, snaps, windows, &mut scratch, families.next());
            families.keep(&f.name, &f.help, f.kind, Some(f.field));
        }
        for i in info {
            self.info_family(i, families.next());
            families.keep(&i.name, &i.help, MetricKind::Gauge, None);
        }
        families.finish();
    }

    /// The series of one family of the counters.
    fn family(
        &self,
        f: &FamilyMeta,
        snaps: &[&Snapshot],
        windows: &[EventWindow],
        scratch: &mut Vec<(i64, u64)>,
        out: &mut Vec<Sample>,
    ) {
        let empty = &self.empty;
        match f.field {
            CounterField::Dcgm(field) if f.group == EntityGroup::Gpu => {
                self.gpu_field(field, snaps, out);
            }
            CounterField::Dcgm(field) => {
                for (i, (_, e, g)) in self.others.iter().enumerate() {
                    if *g != f.group {
                        continue;
                    }
                    if let Some(v) = values_of(snaps, e).and_then(|m| m.get(&field)) {
                        let sets = (&self.other_labels[i], &self.other_row_labels[i], empty);
                        push(out, sets, Vec::new(), &v.value, Some(*e));
                    }
                }
            }
            CounterField::Exporter(ExporterCounter::GpuHealthStatus) => {
                let Some(h) = &self.health else {
                    return;
                };
                for g in &self.gpus {
                    let Some(verdicts) = h.verdicts(g.gpu) else {
                        continue;
                    };
                    for (v, (_, watch)) in verdicts.iter().zip(HEALTH_WATCHES) {
                        let own = vec![
                            (labels::HEALTH_WATCH.to_string(), watch.to_string()),
                            (labels::HEALTH_ERROR_CODE.to_string(), v.error_code_name()),
                        ];
                        let sets = (&g.labels, &self.row_labels[g.first], empty);
                        let value = Value::Int(i64::from(v.value()));
                        push(out, sets, own, &value, Some(Entity::gpu(g.gpu)));
                    }
                }
            }
            CounterField::Exporter(ExporterCounter::P2pStatus) => {
                let Some(p2p) = &self.p2p else {
                    return;
                };
                for g in &self.gpus {
                    let Some(st) = p2p.iter().find(|s| s.gpu == g.gpu) else {
                        continue;
                    };
                    for (peer, status) in &st.peers {
                        let (value, name) = p2p_status_value(*status);
                        let own = vec![
                            (labels::PEER_GPU.to_string(), decimal(peer)),
                            (labels::LINK_STATUS.to_string(), name.to_string()),
                        ];
                        let sets = (&g.labels, &self.row_labels[g.first], empty);
                        let value = Value::Int(i64::from(value));
                        push(out, sets, own, &value, Some(Entity::gpu(g.gpu)));
                    }
                }
            }
            CounterField::Exporter(ExporterCounter::GpuInfo) => {
                let Some(info) = &self.gpu_info else {
                    return;
                };
                for (i, id) in self.identities.iter().enumerate() {
                    if let Some(gi) = info.get(&id.gpu) {
                        let sets = (&self.identity_labels[i], empty, empty);
                        push(out, sets, gi.labels(), &Value::Int(1), Some(id.entity));
                    }
                }
            }
            CounterField::Exporter(
                kind @ (ExporterCounter::PodSmUtil | ExporterCounter::PodFbUsed),
            ) => {
                let rows = if kind == ExporterCounter::PodSmUtil {
                    &self.owner_sm_util
                } else {
                    &self.owner_memory
                };
                let Some(rows) = rows else {
                    return;
                };
                for (gpu, owner, v) in rows {
                    let Some(g) = self.gpus.iter().find(|g| g.gpu == *gpu) else {
                        continue;
                    };
                    let sets = (&g.labels, &self.row_labels[g.first], owner);
                    push(
                        out,
                        sets,
                        Vec::new(),
                        &Value::Double(*v),
                        Some(Entity::gpu(*gpu)),
                    );
                }
            }
            CounterField::Exporter(kind) => {
                if let Some(w) = windows.iter().find(|w| w.kind() == kind) {
                    self.windowed(w, scratch, out);
                }
            }
        }
    }

    /// The series of a field of GPUs and MIG instances: one per workload label set of the
    /// identity (or one without), or the device's and the workloads' own values.
    fn gpu_field(&self, field: FieldId, snaps: &[&Snapshot], out: &mut Vec<Sample>) {
        let empty = &self.empty;
        for (i, id) in self.identities.iter().enumerate() {
            let Some(v) = values_of(snaps, &id.entity).and_then(|m| m.get(&field)) else {
                continue;
            };
            if !matches!(v.value, Value::Int(_) | Value::Double(_)) {
                continue;
            }
            let (base, row) = (&self.identity_labels[i], &self.row_labels[i]);
            let mut own_values = self
                .workload_values
                .iter()
                .filter(|(wf, _)| *wf == field)
                .flat_map(|(_, rows)| rows.iter().filter(|r| r.0 == id.entity))
                .peekable();
            if own_values.peek().is_some() {
                // The device's series, then each workload's own value.
                push(
                    out,
                    (base, row, empty),
                    Vec::new(),
                    &v.value,
                    Some(id.entity),
                );
                for (_, set, value) in own_values {
                    let value = Value::Double(*value);
                    push(out, (base, row, set), Vec::new(), &value, Some(id.entity));
                }
                continue;
            }
            let own = || -> LabelSet {
                match v.value {
                    Value::Int(x) if Some(field) == self.xid_field => {
                        vec![("err_code".to_string(), decimal(x))]
                    }
                    _ => Vec::new(),
                }
            };
            if self.workload[i].is_empty() {
                push(out, (base, row, empty), own(), &v.value, Some(id.entity));
            }
            for w in &self.workload[i] {
                push(out, (base, row, w), own(), &v.value, Some(id.entity));
            }
        }
    }

    /// The series of a windowed row: per identity (and workload label set), one per key
    /// counted in the window, or one of value 0 when none is.
    fn windowed(&self, w: &EventWindow, scratch: &mut Vec<(i64, u64)>, out: &mut Vec<Sample>) {
        let window = (WINDOW_LABEL.to_string(), decimal(w.window().as_millis()));
        for (i, id) in self.identities.iter().enumerate() {
            w.counts_into(id.gpu, scratch);
            let (base, row) = (&self.identity_labels[i], &self.row_labels[i]);
            let plain = self.workload[i].is_empty().then_some(&self.empty);
            for wl in self.workload[i].iter().chain(plain) {
                if scratch.is_empty() {
                    push(
                        out,
                        (base, row, wl),
                        vec![window.clone()],
                        &Value::Int(0),
                        Some(id.entity),
                    );
                }
                for &(key, n) in scratch.iter() {
                    let own = vec![w.key_label(key), window.clone()];
                    let value = Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
                    push(out, (base, row, wl), own, &value, Some(id.entity));
                }
            }
        }
    }

    /// The series of a family of [`Renderer::set_info_family`].
    fn info_family(&self, fam: &InfoFamily, out: &mut Vec<Sample>) {
        for (i, id) in self.identities.iter().enumerate() {
            let Some((_, sets)) = fam.sets.iter().find(|(e, _)| *e == id.entity) else {
                continue;
            };
            for set in sets {
                let sets = (&self.identity_labels[i], &self.empty, &self.empty);
                push(out, sets, set.clone(), &Value::Int(1), Some(id.entity));
            }
        }
    }
}
