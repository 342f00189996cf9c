//! Entity groups and field groups.

use std::ffi::{c_char, c_int};

use dcgm_sys::*;

use super::{c_str, guard, out, version_word, versioned, write_str};
use crate::engine::{Engine, FieldGroup, Group};
use crate::personality::{self, Struct};
use crate::sim::with_engine;

fn user_group(e: &mut Engine, g: dcgmGpuGrp_t) -> Result<&mut Group, dcgmReturn_t> {
    e.groups.get_mut(&g).ok_or(DCGM_ST_NOT_CONFIGURED)
}

/// # Safety
///
/// `groupName` must be a C string and `pDcgmGrpId` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGroupCreate(
    pDcgmHandle: dcgmHandle_t,
    type_: dcgmGroupType_t,
    groupName: *const c_char,
    pDcgmGrpId: *mut dcgmGpuGrp_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let (name, id) = unsafe { (c_str(groupName)?, out(pDcgmGrpId)?) };
        // libdcgm 4.6.0 accepts an empty name (and an unknown type, as an empty group).
        if name.len() >= DCGM_MAX_STR_LENGTH {
            return Err(DCGM_ST_BADPARAM);
        }
        with_engine(pDcgmHandle, |e| {
            // libdcgm 4.6.0 keeps its two default groups (all GPUs, all NvSwitches) among the
            // 64: a client can create 62 (64 before 4.2).
            if e.groups.len() >= personality::client_group_limit() {
                return Err(DCGM_ST_MAX_LIMIT);
            }
            let special = match type_ {
                DCGM_GROUP_EMPTY => None,
                DCGM_GROUP_DEFAULT => Some(DCGM_GROUP_ALL_GPUS),
                DCGM_GROUP_DEFAULT_NVSWITCHES => Some(DCGM_GROUP_ALL_NVSWITCHES),
                DCGM_GROUP_DEFAULT_INSTANCES => Some(DCGM_GROUP_ALL_INSTANCES),
                DCGM_GROUP_DEFAULT_COMPUTE_INSTANCES => Some(DCGM_GROUP_ALL_COMPUTE_INSTANCES),
                DCGM_GROUP_DEFAULT_EVERYTHING => Some(DCGM_GROUP_ALL_ENTITIES),
                _ => None,
            };
            let entities = match special {
                Some(s) => e.group_entities(s)?,
                None => Vec::new(),
            };
            let gid = e.add_group(Group {
                name: name.to_string(),
                entities,
            });
            *id = gid;
            Ok(())
        })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmGroupDestroy(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
) -> dcgmReturn_t {
    guard(|| {
        with_engine(pDcgmHandle, |e| {
            if !e.groups.contains_key(&groupId) {
                return Err(DCGM_ST_NOT_CONFIGURED);
            }
            e.remove_group(groupId);
            Ok(())
        })
    })
}

fn add_entity(handle: dcgmHandle_t, g: dcgmGpuGrp_t, eg: u32, id: u32) -> Result<(), dcgmReturn_t> {
    with_engine(handle, |e| {
        let known = if eg == DCGM_FE_LINK {
            e.machine.link_parent_exists(id)
        } else {
            e.machine.exists(eg, id)
        };
        if !known || eg == DCGM_FE_NONE {
            return Err(DCGM_ST_BADPARAM);
        }
        let grp = user_group(e, g)?;
        let p = dcgmGroupEntityPair_t {
            entityGroupId: eg,
            entityId: id,
        };
        if grp.entities.contains(&p) {
            return Err(DCGM_ST_BADPARAM);
        }
        if grp.entities.len() >= DCGM_GROUP_MAX_ENTITIES_V2 {
            return Err(DCGM_ST_MAX_LIMIT);
        }
        grp.entities.push(p);
        Ok(())
    })
}

fn remove_entity(
    handle: dcgmHandle_t,
    g: dcgmGpuGrp_t,
    eg: u32,
    id: u32,
) -> Result<(), dcgmReturn_t> {
    with_engine(handle, |e| {
        let grp = user_group(e, g)?;
        let before = grp.entities.len();
        grp.entities
            .retain(|p| !(p.entityGroupId == eg && p.entityId == id));
        if grp.entities.len() == before {
            return Err(DCGM_ST_BADPARAM);
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmGroupAddDevice(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    gpuId: u32,
) -> dcgmReturn_t {
    guard(|| add_entity(pDcgmHandle, groupId, DCGM_FE_GPU, gpuId))
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmGroupAddEntity(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    entityGroupId: dcgm_field_entity_group_t,
    entityId: dcgm_field_eid_t,
) -> dcgmReturn_t {
    guard(|| add_entity(pDcgmHandle, groupId, entityGroupId, entityId))
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmGroupRemoveDevice(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    gpuId: u32,
) -> dcgmReturn_t {
    guard(|| remove_entity(pDcgmHandle, groupId, DCGM_FE_GPU, gpuId))
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmGroupRemoveEntity(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    entityGroupId: dcgm_field_entity_group_t,
    entityId: dcgm_field_eid_t,
) -> dcgmReturn_t {
    guard(|| remove_entity(pDcgmHandle, groupId, entityGroupId, entityId))
}

/// Fills a group's information in either layout (they differ in the room for entities only).
macro_rules! fill_group_info {
    ($info:expr, $name:expr, $entities:expr) => {{
        let (info, entities) = ($info, $entities);
        write_str(&mut info.groupName, $name);
        let n = entities.len().min(info.entityList.len());
        info.entityList[..n].copy_from_slice(&entities[..n]);
        info.count = n as u32;
    }};
}

/// # Safety
///
/// `pDcgmGroupInfo` must be NULL or a versioned `dcgmGroupInfo_v3`, or (for DCGM 3.3.9, when
/// the simulator speaks it) `_v2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGroupGetInfo(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    pDcgmGroupInfo: *mut dcgmGroupInfo_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let version = unsafe { version_word(pDcgmGroupInfo, Struct::GroupInfo) }?;
        let (name, entities) = with_engine(pDcgmHandle, |e| {
            Ok(match e.groups.get(&groupId) {
                Some(g) => (g.name.clone(), g.entities.clone()),
                None => {
                    let ents = e.group_entities(groupId)?;
                    ("DCGM_ALL_SUPPORTED_GPUS".to_string(), ents)
                }
            })
        })?;
        // SAFETY: the version word names the layout, which the caller allocated.
        unsafe {
            if version == dcgmGroupInfo_version3 {
                fill_group_info!(&mut *pDcgmGroupInfo, &name, &entities);
            } else {
                fill_group_info!(
                    &mut *pDcgmGroupInfo.cast::<dcgmGroupInfo_v2>(),
                    &name,
                    &entities
                );
            }
        }
        Ok(())
    })
}

/// # Safety
///
/// `groupIdList` must have room for `DCGM_MAX_NUM_GROUPS` ids and `count` be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGroupGetAllIds(
    pDcgmHandle: dcgmHandle_t,
    groupIdList: *mut dcgmGpuGrp_t,
    count: *mut u32,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let c = unsafe { out(count) }?;
        if groupIdList.is_null() {
            return Err(DCGM_ST_BADPARAM);
        }
        // SAFETY: room for DCGM_MAX_NUM_GROUPS per the contract.
        let list = unsafe { std::slice::from_raw_parts_mut(groupIdList, DCGM_MAX_NUM_GROUPS) };
        with_engine(pDcgmHandle, |e| {
            let ids: Vec<usize> = e.groups.keys().copied().collect();
            for (d, s) in list.iter_mut().zip(&ids) {
                *d = *s;
            }
            *c = ids.len().min(DCGM_MAX_NUM_GROUPS) as u32;
            Ok(())
        })
    })
}

/// Field groups libdcgm 4.6.0 creates for itself (counted against `DCGM_MAX_NUM_FIELD_GROUPS`).
const ENGINE_FIELD_GROUPS: usize = 3;

/// # Safety
///
/// `fieldIds` must hold `numFieldIds` ids, `fieldGroupName` be a C string and
/// `dcgmFieldGroupId` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmFieldGroupCreate(
    dcgmHandle: dcgmHandle_t,
    numFieldIds: c_int,
    fieldIds: *const u16,
    fieldGroupName: *const c_char,
    dcgmFieldGroupId: *mut dcgmFieldGrp_t,
) -> dcgmReturn_t {
    guard(|| {
        if numFieldIds < 1
            || numFieldIds as usize >= DCGM_MAX_FIELD_IDS_PER_FIELD_GROUP
            || fieldIds.is_null()
        {
            return Err(DCGM_ST_BADPARAM);
        }
        // SAFETY: per this function's contract.
        let (name, id) = unsafe { (c_str(fieldGroupName)?, out(dcgmFieldGroupId)?) };
        if name.is_empty() || name.len() >= DCGM_MAX_STR_LENGTH {
            return Err(DCGM_ST_BADPARAM);
        }
        // SAFETY: `numFieldIds` readable ids per the contract.
        let ids = unsafe { std::slice::from_raw_parts(fieldIds, numFieldIds as usize) }.to_vec();
        // As libdcgm (DcgmFieldGroup.cpp): one id the release does not know refuses the group.
        if ids
            .iter()
            .any(|f| field_by_id(*f).is_none() || !personality::knows_field(*f))
        {
            return Err(DCGM_ST_BADPARAM);
        }
        with_engine(dcgmHandle, |e| {
            // libdcgm 4.6.0 holds three of the 64 itself (DCGM_INTERNAL_30SEC, _HOURLY and
            // _JOB, which dcgmFieldGroupGetAll lists and a client cannot destroy): a client
            // can create 61 (recorded: the battery's fieldgroups/limit_count). The simulator
            // keeps their places without listing them.
            if e.field_groups.len() + ENGINE_FIELD_GROUPS >= DCGM_MAX_NUM_FIELD_GROUPS {
                return Err(DCGM_ST_MAX_LIMIT);
            }
            if e.field_groups.values().any(|f| f.name == name) {
                return Err(DCGM_ST_DUPLICATE_KEY);
            }
            let fid = e.add_field_group(FieldGroup {
                name: name.to_string(),
                fields: ids,
            });
            *id = fid;
            Ok(())
        })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmFieldGroupDestroy(
    dcgmHandle: dcgmHandle_t,
    dcgmFieldGroupId: dcgmFieldGrp_t,
) -> dcgmReturn_t {
    guard(|| {
        with_engine(dcgmHandle, |e| {
            if !e.field_groups.contains_key(&dcgmFieldGroupId) {
                return Err(DCGM_ST_NO_DATA);
            }
            e.remove_field_group(dcgmFieldGroupId);
            Ok(())
        })
    })
}

fn fill_fg_info(info: &mut dcgmFieldGroupInfo_v1, id: usize, fg: &FieldGroup) {
    info.version = dcgmFieldGroupInfo_version1;
    info.fieldGroupId = id;
    write_str(&mut info.fieldGroupName, &fg.name);
    let n = fg.fields.len().min(info.fieldIds.len());
    info.fieldIds[..n].copy_from_slice(&fg.fields[..n]);
    info.numFieldIds = n as u32;
}

/// # Safety
///
/// `fieldGroupInfo` must be NULL or a versioned `dcgmFieldGroupInfo_v1` with its id set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmFieldGroupGetInfo(
    dcgmHandle: dcgmHandle_t,
    fieldGroupInfo: *mut dcgmFieldGroupInfo_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let info = unsafe { versioned(fieldGroupInfo, &[dcgmFieldGroupInfo_version1]) }?;
        with_engine(dcgmHandle, |e| {
            let fg = e
                .field_groups
                .get(&info.fieldGroupId)
                .ok_or(DCGM_ST_NO_DATA)?;
            fill_fg_info(info, info.fieldGroupId, fg);
            Ok(())
        })
    })
}

/// # Safety
///
/// `allGroupInfo` must be NULL or a versioned `dcgmAllFieldGroup_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmFieldGroupGetAll(
    dcgmHandle: dcgmHandle_t,
    allGroupInfo: *mut dcgmAllFieldGroup_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let all = unsafe { versioned(allGroupInfo, &[dcgmAllFieldGroup_version1]) }?;
        with_engine(dcgmHandle, |e| {
            let mut n = 0;
            for (id, fg) in &e.field_groups {
                if n >= all.fieldGroups.len() {
                    break;
                }
                fill_fg_info(&mut all.fieldGroups[n], *id, fg);
                n += 1;
            }
            all.numFieldGroups = n as u32;
            Ok(())
        })
    })
}
