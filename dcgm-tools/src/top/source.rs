//! The DCGM side of the view: the groups and watches, and the reads of one refresh (values,
//! health, processes with their statistics and what `/proc` says of them).

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use dcgm::{
    Entity, EntityGroup, FieldGroup, FieldId, Group, Handle, HealthSystems, SinceCursor, Value,
    Watch, WatchOptions,
};

use super::fields::Fields;
use super::host;
use super::state::{GpuRow, HISTORY, Kind, Process, State};
use crate::ConnectArgs;

/// The DCGM side: groups, watches and the reads of one refresh.
pub struct Source {
    handle: Handle,
    fields: Fields,
    group: Group,
    gpus: Group,
    fg: FieldGroup,
    pid_fg: FieldGroup,
    graphics_pids: FieldId,
    watches: Vec<Watch>,
    pid_cursor: SinceCursor,
    /// Each host process's CPU time at the last refresh, for its CPU % over the interval.
    cpu_before: HashMap<u32, (Instant, Duration)>,
}

impl Source {
    /// Opens the engine `conn` names, and the groups and field groups of every GPU and MIG
    /// instance; the rows of the view, a GPU followed by its instances.
    pub fn open(conn: &ConnectArgs) -> dcgm::Result<(Self, Vec<GpuRow>)> {
        let handle = conn.open()?;
        let sys = handle.system();
        let mut rows = Vec::new();
        let mut entities = Vec::new();
        let mig = sys.mig_hierarchy().unwrap_or_default();
        for gpu in sys.gpu_ids()? {
            let a = sys.device_attributes(gpu)?;
            rows.push(GpuRow {
                entity: Entity::gpu(gpu),
                label: format!("GPU {gpu}"),
                name: a.name.clone(),
                power_limit_w: a.power_limit_w,
                gpu,
                mig: None,
            });
            entities.push(Entity::gpu(gpu));
            for gi in mig
                .iter()
                .filter(|m| m.gpu == gpu)
                .flat_map(|m| &m.instances)
            {
                let e = Entity::new(EntityGroup::GpuInstance, gi.entity_id);
                rows.push(GpuRow {
                    entity: e,
                    label: format!(" └ GI {}", gi.entity_id),
                    name: gi
                        .slices
                        .map_or_else(|| "MIG".to_string(), |s| format!("MIG {s} slice(s)")),
                    power_limit_w: None,
                    gpu,
                    mig: mig
                        .iter()
                        .find(|m| m.gpu == gpu)
                        .map(|m| m.uuid.clone())
                        .zip(gi.nvml_instance_id),
                });
                entities.push(e);
            }
        }
        let fields = Fields::new();
        let id = std::process::id();
        let group = Group::with_entities(&handle, &format!("top-{id}"), &entities)?;
        let gpus = Group::all_gpus(&handle);
        let fg = FieldGroup::create(&handle, &format!("top-{id}"), &fields.all())?;
        let pid_fg = FieldGroup::create(
            &handle,
            &format!("top-pids-{id}"),
            &[
                FieldId::parse("DCGM_FI_DEV_COMPUTE_PIDS")?,
                FieldId::parse("DCGM_FI_DEV_GRAPHICS_PIDS")?,
            ],
        )?;
        // Health is best effort: a library without the health module still shows the rest.
        let _ = gpus.health_set(HealthSystems::ALL);
        let source = Self {
            handle,
            fields,
            group,
            gpus,
            fg,
            pid_fg,
            graphics_pids: FieldId::parse("DCGM_FI_DEV_GRAPHICS_PIDS")?,
            watches: Vec::new(),
            pid_cursor: SinceCursor::default(),
            cpu_before: HashMap::new(),
        };
        Ok((source, rows))
    }

    /// (Re)watches everything at `interval`.
    pub fn watch(&mut self, interval: Duration) -> dcgm::Result<()> {
        self.watches.clear();
        let o = WatchOptions {
            update_interval: interval,
            max_keep_age: Duration::from_secs(60).max(interval * 4),
            max_keep_samples: 0,
        };
        self.watches.push(self.group.watch(&self.fg, o)?);
        self.watches.push(self.gpus.watch(&self.pid_fg, o)?);
        // Per-process utilisation is best effort: on a real node it needs root (accounting
        // mode); without it the SM% and MEM% columns say N/A.
        let _ = self.gpus.watch_pid_fields(WatchOptions {
            max_keep_age: Duration::from_secs(60),
            ..o
        });
        self.handle.update_all_fields(true)
    }

    /// What was used, not what was asked for (the automatic choice may have found an
    /// nv-hostengine): `dcgm-sim`, `host ADDRESS` or `embedded`, for the header.
    pub fn label(&self) -> String {
        match (self.handle.kind(), self.handle.is_simulated()) {
            (_, true) => "dcgm-sim".into(),
            (dcgm::ConnectionKind::Standalone(h), false) => format!("host {h}"),
            (dcgm::ConnectionKind::Embedded, false) => "embedded".into(),
        }
    }

    /// The fields the rows show.
    pub fn fields(&self) -> &Fields {
        &self.fields
    }

    /// Reads a refresh into `s`; what failed goes into the header.
    pub fn refresh(&mut self, s: &mut State) {
        s.error = self.read(s).err().map(|e| e.to_string());
    }

    /// Watches at the interval `s` has now (changed by a key); a failure goes into the header.
    pub fn rewatch(&mut self, s: &mut State) {
        if let Err(e) = self.watch(s.interval) {
            s.error = Some(e.to_string());
        }
    }

    fn read(&mut self, s: &mut State) -> dcgm::Result<()> {
        for v in self.group.latest_values(&self.fg)? {
            s.values.insert((v.entity, v.field), v.value);
        }
        for r in &s.rows {
            let util = s
                .values
                .get(&(r.entity, self.fields.util))
                .and_then(Value::as_f64);
            let get = |f| s.values.get(&(r.entity, f)).and_then(Value::as_f64);
            let mem = get(self.fields.fb_used)
                .zip(get(self.fields.fb_total))
                .filter(|(_, t)| *t > 0.0)
                .map(|(u, t)| u / t * 100.0);
            for (history, v) in [(&mut s.util_history, util), (&mut s.mem_history, mem)] {
                let h = history.entry(r.entity).or_default();
                h.push_back(v.map_or(0, |u| u.clamp(0.0, 100.0) as u64));
                while h.len() > HISTORY {
                    h.pop_front();
                }
            }
        }
        if let Ok(report) = self.gpus.health_check() {
            for i in &report.incidents {
                let worst = s.health.entry(i.entity.id).or_default();
                *worst = (*worst).max(i.result);
            }
            for r in s.rows.iter().filter(|r| r.entity.group == EntityGroup::Gpu) {
                s.health.entry(r.gpu).or_default();
            }
        }
        // The processes are the samples of each GPU's latest update of its PID list. A library
        // may refuse that read (libdcgm 4.6.0 on DCGM's injected GPUs answers BADPARAM): the
        // rest of the view still refreshes, and the process table says why it is empty.
        let samples = match self.gpus.values_since(&self.pid_fg, &mut self.pid_cursor) {
            Ok(v) => {
                s.proc_error = None;
                v
            }
            Err(e) => {
                s.proc_error = Some(e.to_string());
                return Ok(());
            }
        };
        // Every sample of the latest update of each list (compute, graphics) of each GPU
        // (libdcgm stores an update's processes at consecutive microseconds).
        let latest = dcgm::latest_update(&samples);
        if !latest.is_empty() {
            self.merge_processes(s, &latest);
        }
        self.per_process(&mut s.processes);
        Ok(())
    }

    /// Replaces the processes of each GPU in `latest` (the latest update of its lists) with
    /// those it lists: a process on both lists is one row of type C+G.
    fn merge_processes(&self, s: &mut State, latest: &[dcgm::FieldValue]) {
        let updated: BTreeSet<u32> = latest.iter().map(|v| v.entity.id).collect();
        s.processes.retain(|p| !updated.contains(&p.gpu));
        let simulated = self.handle.is_simulated();
        for v in latest {
            let Some(p) = v.value.running_process() else {
                continue;
            };
            let graphics = v.field == self.graphics_pids;
            let gpu = v.entity.id;
            if let Some(known) = s
                .processes
                .iter_mut()
                .find(|q| (q.pid, q.gpu) == (p.pid, gpu))
            {
                known.kind.graphics |= graphics;
                known.kind.compute |= !graphics;
                known.mem_mib = known.mem_mib.max(p.memory_used_bytes >> 20);
                continue;
            }
            let who = crate::process::owner(p.pid, simulated);
            let name = who.name.unwrap_or_else(|| "N/A".into());
            let host = host::start_time(p.pid, simulated.then_some(name.as_str()));
            s.processes.push(Process {
                pid: p.pid,
                user: who.user.unwrap_or_else(|| "N/A".into()),
                instance: host.and_then(|_| host::mig_instance(p.pid, gpu, &s.rows)),
                host,
                name,
                gpu,
                mem_mib: p.memory_used_bytes >> 20,
                kind: Kind {
                    compute: !graphics,
                    graphics,
                },
                sm_util: None,
                mem_util: None,
                cpu_percent: None,
                host_mem_mib: None,
                container: None,
            });
        }
    }

    /// Fills what DCGM's process statistics and `/proc` say of each process.
    fn per_process(&mut self, processes: &mut [Process]) {
        let mut stats: HashMap<u32, Option<dcgm::PidInfo>> = HashMap::new();
        let now = Instant::now();
        let mut cpu_now = HashMap::new();
        for p in processes.iter_mut() {
            let info = stats
                .entry(p.pid)
                .or_insert_with(|| self.gpus.pid_info(p.pid).ok());
            let on_gpu = info
                .as_ref()
                .and_then(|i| i.gpus.iter().find(|g| g.gpu == Some(p.gpu)));
            p.sm_util = on_gpu.and_then(|g| g.process_sm_util);
            p.mem_util = on_gpu.and_then(|g| g.process_mem_util);
            if p.host.is_none() {
                continue;
            }
            p.host_mem_mib = crate::host_process::rss_bytes(p.pid).map(|b| b >> 20);
            p.container = Some(
                crate::container::of_pid(p.pid).map_or_else(|| "(none)".into(), |c| c.short()),
            );
            if let Some(t) = crate::host_process::cpu_time(p.pid) {
                cpu_now.insert(p.pid, (now, t));
                if let Some((then, before)) = self.cpu_before.get(&p.pid) {
                    let wall = now.duration_since(*then).as_secs_f64();
                    if wall > 0.0 {
                        let used = t.saturating_sub(*before).as_secs_f64();
                        p.cpu_percent = Some(used / wall * 100.0);
                    }
                }
            }
        }
        self.cpu_before = cpu_now;
    }
}
