//! `--query-gpu=...`: nvidia-smi's GPU properties as CSV, read from DCGM's fields.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use dcgm::raw::sys::*;
use dcgm::{
    FieldGroup, FieldId, Group, Handle, MAX_FIELDS_PER_FIELD_GROUP, Value, Watch, WatchOptions,
};

use super::format::{Format, cell};
use super::out::Out;
use crate::nvsmi_properties::{self as nvsmi, Property, Source};

/// The `--query-gpu` properties, with the DCGM watches their fields need.
pub(crate) struct GpuQuery {
    props: Vec<&'static Property>,
    /// The GPUs to print, and how many the node has (`count`).
    gpus: Vec<u32>,
    count: usize,
    groups: Vec<FieldGroup>,
    _watches: Vec<Watch>,
}

impl GpuQuery {
    /// Watches the fields of `props` on `group` (of `gpus`, of `count` on the node), as often
    /// as `period` when looping.
    pub(crate) fn watch(
        handle: &Handle,
        group: &Group,
        (gpus, count): (Vec<u32>, usize),
        props: Vec<&'static Property>,
        period: Option<Duration>,
    ) -> dcgm::Result<Self> {
        let mut ids: Vec<FieldId> = props.iter().filter_map(|p| p.field()).collect();
        if props.iter().any(|p| matches!(p.source, Source::Fabric(..))) {
            ids.push(FieldId(DCGM_FI_DEV_FABRIC_MANAGER_STATUS));
        }
        ids.sort();
        ids.dedup();
        let mut options = WatchOptions::default();
        if let Some(p) = period {
            options.update_interval = options.update_interval.min(p);
        }
        let (mut groups, mut watches) = (Vec::new(), Vec::new());
        for (n, chunk) in ids.chunks(MAX_FIELDS_PER_FIELD_GROUP).enumerate() {
            let fg = FieldGroup::create(
                handle,
                &format!("query-gpu-{}-{n}", std::process::id()),
                chunk,
            )?;
            watches.push(group.watch(&fg, options)?);
            groups.push(fg);
        }
        Ok(Self {
            props,
            gpus,
            count,
            groups,
            _watches: watches,
        })
    }

    /// Prints the header (when `header`) and a line per GPU.
    pub(crate) fn print(
        &self,
        handle: &Handle,
        group: &Group,
        fmt: &Format,
        header: bool,
        out: &mut Out,
    ) -> crate::Result<()> {
        let mut values: BTreeMap<(u32, FieldId), Value> = BTreeMap::new();
        let mut global: BTreeMap<FieldId, Value> = BTreeMap::new();
        if !self.groups.is_empty() {
            handle.update_all_fields(true)?;
        }
        for fg in &self.groups {
            for v in group.latest_values(fg)? {
                if v.field.is_global() {
                    global.insert(v.field, v.value.clone());
                }
                values.insert((v.entity.id, v.field), v.value);
            }
        }
        if header && fmt.header {
            let cols: Vec<String> = self.props.iter().map(|p| p.header()).collect();
            out.line(&cols.join(", "))?;
        }
        for &gpu in &self.gpus {
            let get = |f: FieldId| values.get(&(gpu, f)).or_else(|| global.get(&f));
            let now = nvsmi::timestamp(SystemTime::now());
            let cells: Vec<String> = self
                .props
                .iter()
                .map(|p| match p.source {
                    Source::Index => gpu.to_string(),
                    Source::Count => self.count.to_string(),
                    Source::Timestamp => now.clone(),
                    Source::None(text) => text.to_string(),
                    Source::Field(_, how) => cell(p, get, how, fmt),
                    Source::Fabric(_, how) => {
                        let state = get(FieldId(DCGM_FI_DEV_FABRIC_MANAGER_STATUS));
                        if state.and_then(Value::as_i64) == Some(nvsmi::FABRIC_COMPLETED) {
                            cell(p, get, how, fmt)
                        } else {
                            "N/A".into()
                        }
                    }
                })
                .collect();
            out.line(&cells.join(", "))?;
        }
        Ok(())
    }
}
