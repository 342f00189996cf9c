//! The health engine: what libdcgm 4.6.0's health module decides from the field values it
//! samples or that a client injects, watch system by watch system.
//!
//! A check first makes the node-wide checks (IMEX, with NVLink: [`imex`]), then looks at
//! each entity of the group, in the group's order: first the XIDs that fail
//! a GPU whatever is watched ([`xid`]), then each watched system in the order of its bit
//! (PCIe, NVLink, memory, InfoROM, thermal, power, driver). Counters are compared over the
//! last minute (the first and the last sample since then), state fields by their latest
//! sample. The values come from the field cache (samples of watched fields, injected values)
//! or, for fields nothing watches, from the simulated GPU itself ([`samples`]). Setting a
//! health watch adds the cache watches of its systems ([`watches`]).

pub mod imex;
pub mod inforom;
pub mod mem;
pub mod messages;
pub mod nvlink;
pub mod nvlink5;
pub mod nvswitch;
pub mod pcie;
pub mod recovery;
pub mod samples;
pub mod violation;
pub mod watches;
pub mod xid;

use dcgm_sys::*;

use crate::cache::Cache;
use crate::machine::Machine;
use crate::model::Dynamics;

/// One incident of a health check.
#[derive(Debug, Clone, PartialEq)]
pub struct Incident {
    /// The watch system (`DCGM_HEALTH_WATCH_ALL` for XIDs that fail a GPU whatever is watched).
    pub system: dcgmHealthSystems_t,
    /// `DCGM_HEALTH_RESULT_WARN` or `DCGM_HEALTH_RESULT_FAIL`.
    pub health: dcgmHealthWatchResults_t,
    /// The `DCGM_FR_*` code.
    pub code: dcgmError_t,
    /// The entity it is about.
    pub entity: dcgmGroupEntityPair_t,
    /// The message, with DCGM's next steps.
    pub message: String,
}

/// The length of the window counters are compared over, in microseconds.
pub const WINDOW_US: i64 = 60_000_000;

/// What the health engine keeps between calls: the XIDs each GPU reported and which GPUs have
/// their XIDs watched.
#[derive(Debug, Default)]
pub struct HealthState {
    pub xids: xid::History,
}

/// What the health checks read: the field cache (samples of watched fields, injected values)
/// and the simulated node (its machine, and the dynamics its values and XIDs follow).
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    pub cache: &'a Cache,
    pub machine: &'a Machine,
    pub dynamics: &'a Dynamics,
}

impl HealthState {
    /// Runs every watched system's checks for the entities of a group at `now`, over the last
    /// minute, after taking in the XIDs that arrived (`watching`: the systems some group
    /// watches).
    pub fn check(
        &mut self,
        src: Sources,
        watching: u32,
        entities: &[dcgmGroupEntityPair_t],
        systems: u32,
        now: i64,
    ) -> Vec<Incident> {
        self.xids.absorb(&src.dynamics.events, watching, now);
        run(
            src,
            &self.xids,
            entities,
            systems,
            now - WINDOW_US,
            now,
            true,
        )
    }

    /// Runs the checks of `systems` over the samples of `[start, end]` (a job's time, for job
    /// statistics), with the XIDs heard so far.
    pub fn evaluate(
        &self,
        src: Sources,
        entities: &[dcgmGroupEntityPair_t],
        systems: u32,
        start: i64,
        end: i64,
    ) -> Vec<Incident> {
        run(src, &self.xids, entities, systems, start, end, false)
    }

    /// Records that a group now watches `systems` on its entities (the memory and InfoROM
    /// systems watch the GPUs' XIDs from then on, for the rest of the engine's life);
    /// `watching` is what the groups watched before.
    pub fn watch(
        &mut self,
        dynamics: &Dynamics,
        watching: u32,
        entities: &[dcgmGroupEntityPair_t],
        systems: u32,
        now: i64,
    ) {
        self.xids.absorb(&dynamics.events, watching, now);
        if systems & (DCGM_HEALTH_WATCH_MEM | DCGM_HEALTH_WATCH_INFOROM) != 0 {
            for p in entities {
                if p.entityGroupId == DCGM_FE_GPU {
                    self.xids.watch(p.entityId);
                }
            }
        }
    }
}

fn run(
    src: Sources,
    xids: &xid::History,
    entities: &[dcgmGroupEntityPair_t],
    systems: u32,
    start: i64,
    end: i64,
    open_end: bool,
) -> Vec<Incident> {
    let mut out = Vec::new();
    if systems == 0 {
        return out;
    }
    // The node-wide checks come first.
    if systems & DCGM_HEALTH_WATCH_NVLINK != 0 && imex::has_nvlinks(src.machine, entities) {
        let node = Ctx {
            src,
            xids,
            entity: dcgmGroupEntityPair_t {
                entityGroupId: DCGM_FE_NONE,
                entityId: 0,
            },
            start,
            end,
            open_end,
        };
        imex::check(&node, &mut out);
    }
    for p in entities {
        let gpu_like = matches!(
            p.entityGroupId,
            DCGM_FE_GPU | DCGM_FE_GPU_I | DCGM_FE_GPU_CI
        );
        let c = Ctx {
            src,
            xids,
            entity: *p,
            start,
            end,
            open_end,
        };
        // libdcgm looks the XIDs up by entity id alone, for every kind of entity.
        xid::devastating(&c, &mut out);
        if p.entityGroupId == DCGM_FE_SWITCH {
            for fatal in [false, true] {
                let system = if fatal {
                    DCGM_HEALTH_WATCH_NVSWITCH_FATAL
                } else {
                    DCGM_HEALTH_WATCH_NVSWITCH_NONFATAL
                };
                if systems & system != 0 {
                    nvswitch::check(&c, fatal, &mut out);
                }
            }
        }
        if !gpu_like {
            continue;
        }
        for bit in 0..32 {
            let system = 1u32 << bit;
            if systems & system == 0 {
                continue;
            }
            // NVLink takes its XIDs after its counters (in `nvlink::check`), the others first.
            if system != DCGM_HEALTH_WATCH_NVLINK {
                xid::subsystem(&c, system, &mut out);
            }
            match system {
                DCGM_HEALTH_WATCH_PCIE => pcie::check(&c, &mut out),
                DCGM_HEALTH_WATCH_NVLINK => nvlink::check(&c, &mut out),
                DCGM_HEALTH_WATCH_MEM => mem::check(&c, &mut out),
                DCGM_HEALTH_WATCH_INFOROM => inforom::check(&c, &mut out),
                DCGM_HEALTH_WATCH_THERMAL => violation::thermal(&c, &mut out),
                DCGM_HEALTH_WATCH_POWER => violation::power(&c, &mut out),
                DCGM_HEALTH_WATCH_DRIVER => recovery::check(&c, &mut out),
                _ => {}
            }
        }
    }
    out
}

/// One entity's check: what it reads (the cache and the node, the XIDs heard), the entity and
/// the window of samples it reads (counters compare its first and last sample; the end is the
/// time of the check).
pub struct Ctx<'a> {
    pub src: Sources<'a>,
    pub xids: &'a xid::History,
    pub entity: dcgmGroupEntityPair_t,
    pub start: i64,
    pub end: i64,
    /// Samples after `end` count too (a health check reads samples timestamped in the
    /// future, as libdcgm does).
    pub open_end: bool,
}

impl Ctx<'_> {
    /// Adds an incident about this entity.
    pub fn report(
        &self,
        out: &mut Vec<Incident>,
        system: u32,
        health: dcgmHealthWatchResults_t,
        code: dcgmError_t,
        message: String,
    ) {
        out.push(Incident {
            system,
            health,
            code,
            entity: self.entity,
            message,
        });
    }

    /// The length of the window in seconds.
    pub fn window_s(&self) -> f64 {
        (self.end - self.start) as f64 / 1e6
    }
}
