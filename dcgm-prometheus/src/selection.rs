//! Which entities to export: dcgm-exporter's `-d` ([`DeviceSelection`]) and `-s` / `-p`
//! ([`EntitySelection`]) syntax, one parser for both ([`SelectionError`]), and their discovery.

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

use dcgm::{Entity, EntityGroup, Error, FieldId, Handle, Result};

use crate::identity::{EntityIdentity, MigInstance, OtherEntity};

/// The start of the error for an `i` selection on a node without MIG instances.
pub(crate) const NO_MIG: &str = "no MIG GPU instances";
/// Which entities to export, in dcgm-exporter's `-d` syntax.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DeviceSelection {
    /// `f`: every GPU, except that a GPU in MIG mode is replaced by its GPU instances.
    #[default]
    Flex,
    /// `g` (every GPU) or `g:0,1`, `g:0-3` (these GPU ids).
    Gpus(Option<Vec<u32>>),
    /// `i` (every MIG GPU instance) or `i:0,2-4` (these GPU-instance entity ids).
    GpuInstances(Option<Vec<u32>>),
}

impl FromStr for DeviceSelection {
    type Err = SelectionError;

    /// ```
    /// use dcgm_prometheus::DeviceSelection;
    /// assert_eq!("f".parse(), Ok(DeviceSelection::Flex));
    /// assert_eq!("g:0,2-3".parse(), Ok(DeviceSelection::Gpus(Some(vec![0, 2, 3]))));
    /// assert_eq!("i".parse(), Ok(DeviceSelection::GpuInstances(None)));
    /// assert!("f:1".parse::<DeviceSelection>().is_err());
    /// ```
    fn from_str(s: &str) -> std::result::Result<Self, SelectionError> {
        Ok(match parse_selection(s, DEVICE_LIMITS)? {
            Selector::Flex => Self::Flex,
            Selector::G(ids) => Self::Gpus(ids),
            Selector::I(ids) => Self::GpuInstances(ids),
        })
    }
}

/// Which NvSwitches and NVLinks (`-s/--switch-devices`), or which CPUs and CPU cores
/// (`-p/--cpu-devices`), to export. dcgm-exporter's syntax for these flags: the letters of `-d`,
/// `g` naming the top-level entities and `i` the sub-level ones.
///
/// | | `-s` (NvSwitches) | `-p` (CPUs) |
/// |---|---|---|
/// | `f` (default) | every NvSwitch, and every link of every NvSwitch that is up | every CPU and every core |
/// | `g` / `g:0,2-3` | every NvSwitch / these NvSwitches; no links | every CPU / these CPUs; no cores |
/// | `i` / `i:0-7` | the links (up) with these indices on every NvSwitch; no switch | every core / these cores; no CPU |
///
/// The NVLinks of GPUs follow `-d` instead (the links of the exported GPUs; none with `i`).
///
/// ```
/// use dcgm_prometheus::EntitySelection;
/// assert_eq!("f".parse(), Ok(EntitySelection::Flex));
/// assert_eq!("g:0,2-3".parse(), Ok(EntitySelection::Major(Some(vec![0, 2, 3]))));
/// assert_eq!("i".parse(), Ok(EntitySelection::Minor(None)));
/// assert!("s:1".parse::<EntitySelection>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EntitySelection {
    /// `f`: every top-level entity and every sub-level entity.
    #[default]
    Flex,
    /// `g` (all) or `g:<ids>`: NvSwitches or CPUs.
    Major(Option<Vec<u32>>),
    /// `i` (all) or `i:<ids>`: NvSwitch link indices, or CPU cores.
    Minor(Option<Vec<u32>>),
}

impl FromStr for EntitySelection {
    type Err = SelectionError;

    fn from_str(s: &str) -> std::result::Result<Self, SelectionError> {
        Ok(match parse_selection(s, ENTITY_LIMITS)? {
            Selector::Flex => Self::Flex,
            Selector::G(ids) => Self::Major(ids),
            Selector::I(ids) => Self::Minor(ids),
        })
    }
}

/// Why a [`DeviceSelection`] or an [`EntitySelection`] does not parse. The syntax is
/// `<letter>[:<ids>]`: `f`, `g`, `g:0,1`, `g:0-3`, `i`, `i:0,2-4` (surrounding blanks allowed).
///
/// Ids are bounded by DCGM's own limits, so that a range such as `g:0-4294967295` is refused
/// before anything is allocated: GPU ids (`-d g`) are below `DCGM_MAX_NUM_DEVICES` (32), GPU
/// instance ids (`-d i`) below `DCGM_MAX_INSTANCES` (256), NvSwitch link indices and CPU cores
/// (`-s i`, `-p i`) below `DCGM_MAX_NUM_CPU_CORES` (1024), and no list names more ids than a
/// DCGM group holds (`DCGM_GROUP_MAX_ENTITIES_V2`, 1024).
///
/// ```
/// use dcgm_prometheus::{DeviceSelection, SelectionError};
/// assert_eq!(
///     "x".parse::<DeviceSelection>(),
///     Err(SelectionError::UnknownSelection { given: "x".into() })
/// );
/// assert_eq!(
///     "g:0,3-1".parse::<DeviceSelection>().unwrap_err().to_string(),
///     "empty range \"3-1\" (in \"0,3-1\"): expected <first>-<last> with first <= last, like 0-3"
/// );
/// assert_eq!(
///     "g:0-4294967295".parse::<DeviceSelection>().unwrap_err().to_string(),
///     "id 4294967295 is out of range (in \"0-4294967295\"): DCGM numbers these entities \
///      from 0 to 31"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectionError {
    /// The letter is not `f`, `g` or `i` (or nothing was given).
    #[error(
        "invalid device option {given:?}: expected f, g, g:<ids>, i or i:<ids> (ids like 0,2-4)"
    )]
    UnknownSelection {
        /// The whole selection, trimmed.
        given: String,
    },
    /// `f` with an id list (`f:0`): `f` takes none.
    #[error("no id list can follow 'f' (in {given:?}): expected f alone, or g:<ids> or i:<ids>")]
    IdsAfterFlex {
        /// The whole selection, trimmed.
        given: String,
    },
    /// An element of the id list that is not an id (a non-negative integer): `a` in `g:a`,
    /// `2-3` in `i:1-2-3`, the empty text in `g:`.
    #[error("{id:?} is not an id (in {list:?}): expected ids like 0,2-4")]
    InvalidId {
        /// The text that is not an id.
        id: String,
        /// The id list it is in (what follows the `:`).
        list: String,
    },
    /// A range whose first id is greater than its last (`3-1`).
    #[error(
        "empty range {range:?} (in {list:?}): expected <first>-<last> with first <= last, like 0-3"
    )]
    EmptyRange {
        /// The range.
        range: String,
        /// The id list it is in (what follows the `:`).
        list: String,
    },
    /// An id above the largest DCGM has for its kind (`g:32`: DCGM numbers at most 32 GPUs).
    #[error("id {id} is out of range (in {list:?}): DCGM numbers these entities from 0 to {max}")]
    IdOutOfRange {
        /// The id.
        id: u32,
        /// The largest id of its kind.
        max: u32,
        /// The id list it is in (what follows the `:`).
        list: String,
    },
    /// More ids than a DCGM group holds.
    #[error("{list:?} names {count} ids: a DCGM group holds at most {max} entities")]
    TooManyIds {
        /// How many ids the list names (its ranges counted in full).
        count: u64,
        /// The most a group holds (`DCGM_GROUP_MAX_ENTITIES_V2`).
        max: usize,
        /// The id list (what follows the `:`).
        list: String,
    },
}

/// The largest id each letter of a selection may name (`None`: any `u32`).
#[derive(Clone, Copy)]
struct IdLimits {
    g: Option<u32>,
    i: Option<u32>,
}

/// `-d`: GPU ids and GPU-instance entity ids.
const DEVICE_LIMITS: IdLimits = IdLimits {
    g: Some(dcgm::raw::sys::DCGM_MAX_NUM_DEVICES as u32 - 1),
    i: Some(dcgm::raw::sys::DCGM_MAX_INSTANCES as u32 - 1),
};

/// `-s` and `-p`: NvSwitch and CPU ids are DCGM's physical ids (NvSwitches are numbered from 8
/// on some baseboards), bounded only by the size of a group; link indices (below
/// `DCGM_NVLINK_MAX_LINKS_PER_NVSWITCH`) and CPU cores (below `DCGM_MAX_NUM_CPU_CORES`) by the
/// larger of the two.
const ENTITY_LIMITS: IdLimits = IdLimits {
    g: None,
    i: Some(dcgm::raw::sys::DCGM_MAX_NUM_CPU_CORES as u32 - 1),
};

/// No id list may name more ids than a DCGM group holds.
const MAX_IDS: usize = dcgm::raw::sys::DCGM_GROUP_MAX_ENTITIES_V2;

/// The letter of a selection (`f`, `g` or `i`) with its ids; [`DeviceSelection`] and
/// [`EntitySelection`] name `g` and `i` after what they select.
enum Selector {
    Flex,
    G(Option<Vec<u32>>),
    I(Option<Vec<u32>>),
}

/// Parses the `<letter>[:<ids>]` syntax of `-d`, `-s` and `-p`: `f`, `g`, `g:<ids>`, `i`,
/// `i:<ids>`, the ids a comma-separated list of ids and ranges (`0,2-4`).
fn parse_selection(s: &str, limits: IdLimits) -> std::result::Result<Selector, SelectionError> {
    let s = s.trim();
    let (letter, range) = match s.split_once(':') {
        Some((l, r)) => (l, Some(r)),
        None => (s, None),
    };
    let max = match letter {
        "g" => limits.g,
        "i" => limits.i,
        _ => None,
    };
    let ids = match range {
        None => None,
        Some(r) => Some(parse_id_list(r, max)?),
    };
    match (letter, ids) {
        ("f", None) => Ok(Selector::Flex),
        ("f", Some(_)) => Err(SelectionError::IdsAfterFlex { given: s.into() }),
        ("g", ids) => Ok(Selector::G(ids)),
        ("i", ids) => Ok(Selector::I(ids)),
        _ => Err(SelectionError::UnknownSelection { given: s.into() }),
    }
}

/// The ids of a list, each at most `max`; counted before any range is expanded, so that a
/// huge range costs nothing.
fn parse_id_list(r: &str, max: Option<u32>) -> std::result::Result<Vec<u32>, SelectionError> {
    let mut out = Vec::new();
    let mut count: u64 = 0;
    for part in r.split(',') {
        let part = part.trim();
        let num = |t: &str| {
            let id = t
                .trim()
                .parse::<u32>()
                .map_err(|_| SelectionError::InvalidId {
                    id: t.into(),
                    list: r.into(),
                })?;
            match max {
                Some(max) if id > max => Err(SelectionError::IdOutOfRange {
                    id,
                    max,
                    list: r.into(),
                }),
                _ => Ok(id),
            }
        };
        let too_many = |count: u64| SelectionError::TooManyIds {
            count,
            max: MAX_IDS,
            list: r.into(),
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(SelectionError::EmptyRange {
                        range: part.into(),
                        list: r.into(),
                    });
                }
                count += u64::from(b - a) + 1;
                if count > MAX_IDS as u64 {
                    return Err(too_many(count));
                }
                out.extend(a..=b);
            }
            None => {
                out.push(num(part)?);
                count += 1;
                if count > MAX_IDS as u64 {
                    return Err(too_many(count));
                }
            }
        }
    }
    out.dedup();
    Ok(out)
}

/// `DCGM_FI_DEV_UUID`: for a GPU instance, its MIG device UUID.
pub(super) const MIG_UUID_FIELD: FieldId = FieldId(54);

/// The entities a [`DeviceSelection`] names, with their identities, in export order.
///
/// A MIG instance's profile starts as `<slices>g`; [`Collector`](super::Collector) replaces it
/// with the name DCGM reports for the instance (`DCGM_FI_DEV_NAME` of the GPU instance, as
/// dcgm-exporter does), when DCGM reports one.
pub fn discover_entities(
    handle: &Handle,
    selection: &DeviceSelection,
) -> Result<Vec<EntityIdentity>> {
    let sys = handle.system();
    let mut gpus = BTreeMap::new();
    for gpu in sys.gpu_ids()? {
        let a = sys.device_attributes(gpu)?;
        gpus.insert(
            gpu,
            EntityIdentity::gpu(gpu, &a.uuid, &a.pci_bus_id, &a.name),
        );
    }
    let needs_mig = !matches!(selection, DeviceSelection::Gpus(_));
    let mig = if needs_mig {
        match sys.mig_hierarchy() {
            Ok(m) => m,
            Err(e) if *selection == DeviceSelection::Flex => {
                log::warn!("MIG hierarchy unavailable ({e}); exporting whole GPUs");
                Vec::new()
            }
            Err(e) => return Err(e),
        }
    } else {
        Vec::new()
    };
    let mut instances = Vec::new();
    for m in &mig {
        let Some(parent) = gpus.get(&m.gpu) else {
            continue;
        };
        for gi in &m.instances {
            let entity = Entity::new(EntityGroup::GpuInstance, gi.entity_id);
            instances.push(EntityIdentity {
                entity,
                mig: Some(MigInstance {
                    instance_id: gi.nvml_instance_id,
                    profile: gi.slices.map(|s| format!("{s}g")).unwrap_or_default(),
                    slices: gi.slices,
                    uuid: None,
                }),
                ..parent.clone()
            });
        }
    }
    let mut out: Vec<EntityIdentity> = match selection {
        DeviceSelection::Flex => gpus
            .values()
            .flat_map(|g| {
                let mine: Vec<_> = instances
                    .iter()
                    .filter(|i| i.gpu == g.gpu)
                    .cloned()
                    .collect();
                if mine.is_empty() {
                    vec![g.clone()]
                } else {
                    mine
                }
            })
            .collect(),
        DeviceSelection::Gpus(None) => gpus.values().cloned().collect(),
        DeviceSelection::Gpus(Some(ids)) => ids
            .iter()
            .map(|id| {
                gpus.get(id)
                    .cloned()
                    .ok_or_else(|| Error::InvalidArgument(format!("GPU {id} does not exist")))
            })
            .collect::<Result<_>>()?,
        DeviceSelection::GpuInstances(None) => {
            if instances.is_empty() {
                return Err(Error::InvalidArgument(format!(
                    "{NO_MIG}: 'i' needs a GPU in MIG mode"
                )));
            }
            instances
        }
        DeviceSelection::GpuInstances(Some(ids)) => ids
            .iter()
            .map(|id| {
                instances
                    .iter()
                    .find(|i| i.entity.id == *id)
                    .cloned()
                    .ok_or_else(|| {
                        Error::InvalidArgument(format!("GPU instance {id} does not exist"))
                    })
            })
            .collect::<Result<_>>()?,
    };
    out.sort_by_key(EntityIdentity::sort_key);
    Ok(out)
}

/// The NvSwitches, NVLinks, CPUs and CPU cores to export, in export order, for the entity
/// groups in `groups` (only those are looked up, so a counters file without NvSwitch or CPU
/// rows costs nothing).
///
/// * NvSwitches and their links follow `switches`, CPUs and their cores follow `cpus` (see
///   [`EntitySelection`]); only links that are up are exported, as dcgm-exporter does.
/// * GPU links are those (up) of the GPUs of `gpus` (pass the identities of the `-d`
///   selection, or none for dcgm-exporter's `-d i`).
/// * Ids that do not exist are an [`Error::InvalidArgument`]. A machine without NvSwitches or
///   CPUs DCGM knows about simply has none (logged), unless ids were asked for.
pub fn discover_other_entities(
    handle: &Handle,
    groups: &[EntityGroup],
    gpus: &[EntityIdentity],
    switches: &EntitySelection,
    cpus: &EntitySelection,
) -> Result<Vec<OtherEntity>> {
    let sys = handle.system();
    let want = |g: EntityGroup| groups.contains(&g);
    let mut out = Vec::new();
    let explicit = |s: &EntitySelection| {
        matches!(
            s,
            EntitySelection::Major(Some(_)) | EntitySelection::Minor(Some(_))
        )
    };

    if want(EntityGroup::Switch) {
        let all: Vec<u32> = match sys.entities(EntityGroup::Switch, false) {
            Ok(e) => e.into_iter().map(|e| e.id).collect(),
            Err(e) if !explicit(switches) => {
                log::info!("cannot list the NvSwitches ({e}); not exporting NvSwitch rows");
                Vec::new()
            }
            Err(e) => return Err(e),
        };
        if all.is_empty() && !explicit(switches) {
            log::info!("no NvSwitch found; NvSwitch rows have nothing to export");
        }
        match switches {
            EntitySelection::Flex | EntitySelection::Major(None) => {
                out.extend(all.iter().map(|&id| OtherEntity::Switch { id }));
            }
            EntitySelection::Major(Some(ids)) => {
                for &id in ids {
                    if !all.contains(&id) {
                        return Err(Error::InvalidArgument(format!(
                            "NvSwitch {id} does not exist"
                        )));
                    }
                    out.push(OtherEntity::Switch { id });
                }
            }
            EntitySelection::Minor(_) => {}
        }
    }

    if want(EntityGroup::Link) {
        let status = match sys.nvlink_status() {
            Ok(s) => Some(s),
            Err(e) if !explicit(switches) => {
                log::info!("cannot read the NVLink states ({e}); not exporting NVLink rows");
                None
            }
            Err(e) => return Err(e),
        };
        if let Some(status) = status {
            let up = |links: &[dcgm::LinkState]| -> Vec<u32> {
                (0..links.len() as u32)
                    .filter(|&i| links[i as usize] == dcgm::LinkState::Up)
                    .collect()
            };
            let wanted: Option<Option<&[u32]>> = match switches {
                EntitySelection::Flex | EntitySelection::Minor(None) => Some(None),
                EntitySelection::Minor(Some(ids)) => Some(Some(ids)),
                EntitySelection::Major(_) => None,
            };
            if let Some(Some(ids)) = wanted {
                for &i in ids {
                    if !status.switches.iter().any(|(_, l)| (i as usize) < l.len()) {
                        return Err(Error::InvalidArgument(format!(
                            "no NvSwitch has a link {i}"
                        )));
                    }
                }
            }
            if let Some(ids) = wanted {
                for (switch, links) in &status.switches {
                    for link in up(links) {
                        if ids.is_none_or(|ids| ids.contains(&link)) {
                            out.push(OtherEntity::SwitchLink {
                                switch: *switch,
                                link,
                            });
                        }
                    }
                }
            }
            let mut seen = BTreeSet::new();
            for id in gpus {
                if !seen.insert(id.gpu) {
                    continue;
                }
                if let Some((_, links)) = status.gpus.iter().find(|(g, _)| *g == id.gpu) {
                    out.extend(up(links).into_iter().map(|l| OtherEntity::gpu_link(id, l)));
                }
            }
        }
    }

    if want(EntityGroup::Cpu) || want(EntityGroup::CpuCore) {
        let hierarchy = match sys.cpu_hierarchy() {
            Ok(h) => h,
            Err(e) if !explicit(cpus) => {
                log::info!("cannot read the CPU hierarchy ({e}); not exporting CPU rows");
                Vec::new()
            }
            Err(e) => return Err(e),
        };
        if hierarchy.is_empty() && !explicit(cpus) {
            log::info!("no CPU found; CPU rows have nothing to export");
        }
        let check = |ids: &[u32], exists: &dyn Fn(u32) -> bool, what: &str| -> Result<()> {
            match ids.iter().find(|&&id| !exists(id)) {
                Some(id) => Err(Error::InvalidArgument(format!(
                    "{what} {id} does not exist"
                ))),
                None => Ok(()),
            }
        };
        let (cpu_ids, core_ids): (Option<&[u32]>, Option<&[u32]>) = match cpus {
            EntitySelection::Major(Some(ids)) => {
                check(ids, &|id| hierarchy.iter().any(|c| c.id == id), "CPU")?;
                (Some(ids), Some(&[]))
            }
            EntitySelection::Minor(Some(ids)) => {
                check(
                    ids,
                    &|id| hierarchy.iter().any(|c| c.cores.contains(&id)),
                    "CPU core",
                )?;
                (Some(&[]), Some(ids))
            }
            EntitySelection::Major(None) => (None, Some(&[])),
            EntitySelection::Minor(None) => (Some(&[]), None),
            EntitySelection::Flex => (None, None),
        };
        for cpu in &hierarchy {
            if want(EntityGroup::Cpu) && cpu_ids.is_none_or(|ids| ids.contains(&cpu.id)) {
                out.push(OtherEntity::Cpu { id: cpu.id });
            }
            if want(EntityGroup::CpuCore) {
                for &core in &cpu.cores {
                    if core_ids.is_none_or(|ids| ids.contains(&core)) {
                        out.push(OtherEntity::CpuCore { cpu: cpu.id, core });
                    }
                }
            }
        }
    }
    out.sort_by_key(OtherEntity::sort_key);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_past_dcgms_limits_are_refused_before_anything_is_allocated() {
        let err = |s: &str| s.parse::<DeviceSelection>().unwrap_err();
        assert_eq!(
            err("g:0-4294967295"),
            SelectionError::IdOutOfRange {
                id: 4294967295,
                max: 31,
                list: "0-4294967295".into()
            }
        );
        assert_eq!(
            err("g:32"),
            SelectionError::IdOutOfRange {
                id: 32,
                max: 31,
                list: "32".into()
            }
        );
        assert_eq!(
            "g:0-31".parse::<DeviceSelection>(),
            Ok(DeviceSelection::Gpus(Some((0..32).collect())))
        );
        assert!(matches!(
            err("i:256"),
            SelectionError::IdOutOfRange { max: 255, .. }
        ));
        // NvSwitch and CPU ids have no per-id limit, but a list holds at most a group's worth.
        assert_eq!(
            "g:0-4294967295".parse::<EntitySelection>(),
            Err(SelectionError::TooManyIds {
                count: 4294967296,
                max: 1024,
                list: "0-4294967295".into()
            })
        );
        assert_eq!(
            "g:4294967295".parse::<EntitySelection>(),
            Ok(EntitySelection::Major(Some(vec![4294967295])))
        );
        assert!(matches!(
            "i:0-1023,2000".parse::<EntitySelection>(),
            Err(SelectionError::IdOutOfRange {
                id: 2000,
                max: 1023,
                ..
            })
        ));
        assert!(matches!(
            "g:0-1023,5000".parse::<EntitySelection>(),
            Err(SelectionError::TooManyIds { count: 1025, .. })
        ));
    }
}
