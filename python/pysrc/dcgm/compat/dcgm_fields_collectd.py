"""NVIDIA's ``dcgm_fields_collectd`` (DCGM 4.6): which DCGM fields the collectd plugin
reports, under which collectd name and ``types.db`` type, and the helpers that read that
table (``GetFieldByName``, ``GenerateCollectdTypesDB``). Like NVIDIA's, it re-exports every
name of :mod:`dcgm_fields` and :mod:`dcgm_fields_internal`.

The table is data: one line per field, in the plugin's order, ``FIELD [NAME TYPE [used]]``.
A field without a name is known to the plugin but has no collectd type (``None`` in
:data:`CollectdMetadataDict`); ``used`` marks the types ``GenerateCollectdTypesDB`` writes.
"""

from __future__ import annotations

import sys
from typing import Any as _Any, Dict as _Dict, Optional as _Optional

from dcgm.compat.dcgm_fields import *  # noqa: F401,F403  (NVIDIA's module re-exports them)
from dcgm.compat.dcgm_fields_internal import *  # noqa: F401,F403
from dcgm.compat import dcgm_fields as _dcgm_fields, dcgm_fields_internal as _dcgm_fields_internal


class CollectdMetadata:
    """How one DCGM field is reported to collectd: ``name`` (the collectd type name), ``kind``
    (its ``types.db`` data-source text, ``value:GAUGE:0:U``) and ``used`` (whether
    ``GenerateCollectdTypesDB`` writes it)."""

    def __init__(self, name: str, kind: str, used: bool = False) -> None:
        self.name = name
        self.kind = kind
        self.used = used


_TABLE = """
DCGM_FI_SYSTEM_DRIVER_VERSION
DCGM_FI_SYSTEM_NVML_VERSION
DCGM_FI_SYSTEM_PROCESS_NAME
DCGM_FI_CUDA_DRIVER_VERSION cuda_driver_version value:GAUGE:U:U
DCGM_FI_SYSTEM_GPU_QUANTITY device_count value:GAUGE:U:U
DCGM_FI_DEV_GPU_NAME
DCGM_FI_DEV_GPU_BRAND
DCGM_FI_DEV_NVML_INDEX nvml_index value:GAUGE:U:U
DCGM_FI_DEV_BOARD_SERIAL
DCGM_FI_DEV_CPU_AFFINITY_0 cpu_affinity_0 value:GAUGE:U:U
DCGM_FI_DEV_CPU_AFFINITY_1 cpu_affinity_1 value:GAUGE:U:U
DCGM_FI_DEV_CPU_AFFINITY_2 cpu_affinity_2 value:GAUGE:U:U
DCGM_FI_DEV_CPU_AFFINITY_3 cpu_affinity_3 value:GAUGE:U:U
DCGM_FI_DEV_GPU_UUID
DCGM_FI_DEV_GPU_MINOR_NUMBER minor_number value:GAUGE:U:U
DCGM_FI_DEV_INFOROM_OEM_VERSION
DCGM_FI_DEV_INFOROM_ECC_VERSION
DCGM_FI_DEV_INFOROM_POWER_VERSION
DCGM_FI_DEV_INFOROM_IMAGE_VERSION
DCGM_FI_DEV_INFOROM_CHECKSUM inforom_config_checksum value:GAUGE:U:U
DCGM_FI_DEV_PCI_BUS_ID
DCGM_FI_DEV_PCI_COMBINED_ID pci_combined_id value:GAUGE:U:U
DCGM_FI_DEV_PCI_SUBSYS_ID pci_subsys_id value:GAUGE:U:U
DCGM_FI_DEV_PCIE_TX_THROUGHPUT pcie_tx_throughput value:GAUGE:0:U used
DCGM_FI_DEV_PCIE_RX_THROUGHPUT pcie_rx_throughput value:GAUGE:0:U used
DCGM_FI_DEV_PCIE_REPLAY_TOTAL pcie_replay_counter value:COUNTER:0:U used
DCGM_FI_DEV_PCIE_CORRECTABLE_ERROR_TOTAL pcie_count_correctable_errors value:COUNTER:0:U used
DCGM_FI_DEV_SM_CLOCK sm_clock value:GAUGE:0:U used
DCGM_FI_DEV_MEM_CLOCK memory_clock value:GAUGE:0:U used
DCGM_FI_DEV_VIDEO_CLOCK video_clock value:GAUGE:0:U used
DCGM_FI_DEV_APP_SM_CLOCK sm_app_clock value:GAUGE:0:U used
DCGM_FI_DEV_APP_MEM_CLOCK mem_app_clock value:GAUGE:0:U used
DCGM_FI_DEV_CLOCKS_EVENT_REASONS current_clocks_event_reasons value:GAUGE:U:U
DCGM_FI_DEV_MAX_SM_CLOCK sm_max_clock value:GAUGE:0:U used
DCGM_FI_DEV_MAX_MEM_CLOCK memory_max_clock value:GAUGE:0:U used
DCGM_FI_DEV_MAX_VIDEO_CLOCK video_max_clock value:GAUGE:0:U used
DCGM_FI_DEV_CLOCKS_AUTOBOOST_MODE autoboost value:GAUGE:U:U
DCGM_FI_DEV_GPU_TEMP_CELSIUS gpu_temp value:GAUGE:U:U used
DCGM_FI_DEV_MEMORY_MAX_OP_TEMP_CELSIUS gpu_mem_max_op_temp value:GAUGE:U:U
DCGM_FI_DEV_GPU_MAX_OP_TEMP_CELSIUS gpu_max_op_temp value:GAUGE:U:U
DCGM_FI_DEV_GPU_TEMP_SLOWDOWN_CELSIUS slowdown_temp value:GAUGE:U:U
DCGM_FI_DEV_GPU_TEMP_SHUTDOWN_CELSIUS shutdown_temp value:GAUGE:U:U
DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS power_management_limit value:GAUGE:U:U
DCGM_FI_DEV_BOARD_POWER_LIMIT_MIN_WATTS power_management_limit_min value:GAUGE:U:U
DCGM_FI_DEV_BOARD_POWER_LIMIT_MAX_WATTS power_management_limit_max value:GAUGE:U:U
DCGM_FI_DEV_BOARD_POWER_LIMIT_DEFAULT_WATTS power_management_limit_default value:GAUGE:U:U
DCGM_FI_DEV_BOARD_POWER_WATTS power_usage value:GAUGE:0:U used
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION total_energy_consumption value:GAUGE:0:U used
DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS enforced_power_limit value:GAUGE:U:U
DCGM_FI_DEV_GPU_PSTATE pstate value:GAUGE:U:U
DCGM_FI_DEV_FAN_SPEED fan_speed value:GAUGE:U:U
DCGM_FI_DEV_GPU_COMPUTE_MODE compute_mode value:GAUGE:U:U
DCGM_FI_DEV_GPU_PERSISTENCE_MODE persistance_mode value:GAUGE:U:U
DCGM_FI_DEV_MIG_MODE mig_mode value:GAUGE:U:U
DCGM_FI_DEV_GPM_SUPPORT gpm_support value:GAUGE:U:U
DCGM_FI_CUDA_GPU_VISIBLE_DEVICES
DCGM_FI_DEV_MIG_MAX_SLICES mig_max_slices value:GAUGE:U:U
DCGM_FI_DEV_ECC_MODE ecc value:GAUGE:U:U
DCGM_FI_DEV_ECC_PENDING ecc_pending value:GAUGE:U:U
DCGM_FI_DEV_ECC_SBE_VOL_TOTAL ecc_sbe_volatile_total value:COUNTER:0:U used
DCGM_FI_DEV_ECC_DBE_VOL_TOTAL ecc_dbe_volatile_total value:COUNTER:0:U used
DCGM_FI_DEV_ECC_SBE_AGG_TOTAL ecc_sbe_aggregate_total value:COUNTER:0:U used
DCGM_FI_DEV_ECC_DBE_AGG_TOTAL ecc_dbe_aggregate_total value:COUNTER:0:U used
DCGM_FI_DEV_ECC_SBE_VOL_L1 ecc_sbe_volatile_l1 value:GAUGE:U:U
DCGM_FI_DEV_ECC_DBE_VOL_L1 ecc_dbe_volatile_l1 value:GAUGE:U:U
DCGM_FI_DEV_ECC_SBE_VOL_L2 ecc_sbe_volatile_l2 value:GAUGE:U:U
DCGM_FI_DEV_ECC_DBE_VOL_L2 ecc_dbe_volatile_l2 value:GAUGE:U:U
DCGM_FI_DEV_ECC_SBE_VOL_DEV ecc_sbe_volatile_device value:GAUGE:U:U
DCGM_FI_DEV_ECC_DBE_VOL_DEV ecc_dbe_volatile_device value:GAUGE:U:U
DCGM_FI_DEV_ECC_SBE_VOL_REG ecc_sbe_volatile_register value:GAUGE:U:U
DCGM_FI_DEV_ECC_DBE_VOL_REG ecc_dbe_volatile_register value:GAUGE:U:U
DCGM_FI_DEV_ECC_SBE_VOL_TEX ecc_sbe_volatile_texture value:GAUGE:U:U
DCGM_FI_DEV_ECC_DBE_VOL_TEX ecc_dbe_volatile_texture value:GAUGE:U:U
DCGM_FI_DEV_ECC_SBE_AGG_L1 ecc_sbe_aggregate_l1 value:GAUGE:U:U
DCGM_FI_DEV_ECC_DBE_AGG_L1 ecc_dbe_aggregate_l1 value:GAUGE:U:U
DCGM_FI_DEV_ECC_SBE_AGG_L2 ecc_sbe_aggregate_l2 value:GAUGE:U:U
DCGM_FI_DEV_ECC_DBE_AGG_L2 ecc_dbe_aggregate_l2 value:GAUGE:U:U
DCGM_FI_DEV_ECC_SBE_AGG_DEV ecc_sbe_aggregate_device value:GAUGE:U:U
DCGM_FI_DEV_ECC_DBE_AGG_DEV ecc_dbe_aggregate_device value:GAUGE:U:U
DCGM_FI_DEV_ECC_SBE_AGG_REG ecc_sbe_aggregate_register value:GAUGE:U:U
DCGM_FI_DEV_ECC_DBE_AGG_REG ecc_dbe_aggregate_register value:GAUGE:U:U
DCGM_FI_DEV_ECC_SBE_AGG_TEX ecc_sbe_aggregate_texture value:GAUGE:U:U
DCGM_FI_DEV_ECC_DBE_AGG_TEX ecc_dbe_aggregate_texture value:GAUGE:U:U
DCGM_FI_DEV_GPU_UTIL_RATIO gpu_utilization value:GAUGE:0.0:1.0 used
DCGM_FI_DEV_MEM_COPY_UTIL mem_copy_utilization value:GAUGE:0:100 used
DCGM_FI_DEV_ENC_UTIL enc_utilization value:GAUGE:0:100
DCGM_FI_DEV_DEC_UTIL dec_utilization value:GAUGE:0:100
DCGM_FI_DEV_VBIOS_VERSION
DCGM_FI_DEV_BAR1_TOTAL bar1_total value:GAUGE:U:U
DCGM_FI_DEV_BAR1_USED bar1_used value:GAUGE:U:U
DCGM_FI_DEV_BAR1_FREE bar1_free value:GAUGE:U:U
DCGM_FI_DEV_FB_TOTAL fb_total value:GAUGE:0.0:U used
DCGM_FI_DEV_FB_FREE fb_free value:GAUGE:0.0:U used
DCGM_FI_DEV_FB_USED fb_used value:GAUGE:0.0:U used
DCGM_FI_DEV_FB_RESERVED fb_resv value:GAUGE:0.0:U used
DCGM_FI_DEV_GPU_VIRTUAL_MODE virtualization_mode value:GAUGE:U:U
DCGM_FI_DEV_VGPU_INSTANCE_INFO
DCGM_FI_DEV_VGPU_UTIL_INFO
DCGM_FI_DEV_VGPU_PROCESS_UTIL_INFO
DCGM_FI_DEV_VGPU_VM_ID
DCGM_FI_DEV_VGPU_VM_NAME
DCGM_FI_DEV_VGPU_TYPE vgpu_instance_type value:GAUGE:U:U
DCGM_FI_DEV_VGPU_UUID
DCGM_FI_DEV_VGPU_DRIVER_VERSION
DCGM_FI_DEV_VGPU_MEMORY_USAGE vgpu_instance_memory_usage value:GAUGE:U:U
DCGM_FI_DEV_VGPU_INSTANCE_LICENSE_STATUS vgpu_instance_license_state value:GAUGE:U:U
DCGM_FI_DEV_VGPU_LICENSE_STATUS vgpu_instance_license_status value:GAUGE:U:U
DCGM_FI_DEV_VGPU_FRAME_RATE_LIMIT vgpu_instance_frame_rate_limit value:GAUGE:U:U
DCGM_FI_DEV_VGPU_PCI_ID vgpu_instance_pci_id value:GAUGE:U:U
DCGM_FI_DEV_VGPU_ENC_STATS
DCGM_FI_DEV_VGPU_ENC_SESSIONS_INFO
DCGM_FI_DEV_VGPU_FBC_STATS
DCGM_FI_DEV_VGPU_FBC_SESSIONS_INFO
DCGM_FI_DEV_VGPU_GPU_INSTANCE_ID
DCGM_FI_DEV_VGPU_SUPPORTED_INFO
DCGM_FI_DEV_VGPU_SUPPORTED_IDS
DCGM_FI_DEV_VGPU_TYPE_INFO
DCGM_FI_DEV_VGPU_TYPE_NAME
DCGM_FI_DEV_VGPU_TYPE_CLASS
DCGM_FI_DEV_VGPU_TYPE_LICENSE
DCGM_FI_DEV_VGPU_CREATABLE_IDS
DCGM_FI_DEV_ENC_STATS
DCGM_FI_DEV_FBC_STATS
DCGM_FI_DEV_FBC_SESSIONS_INFO
DCGM_FI_DEV_PROCESS_ACCOUNTING_STATS
DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL retired_pages_sbe value:COUNTER:0:U used
DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL retired_pages_dbe value:COUNTER:0:U used
DCGM_FI_DEV_GRAPHICS_PIDS
DCGM_FI_DEV_COMPUTE_PIDS
DCGM_FI_DEV_CLOCKS_SUPPORTED
DCGM_FI_SYSTEM_GPU_SYNC_BOOST
DCGM_FI_DEV_PAGE_RETIRED_PENDING retired_pages_pending value:GAUGE:0:1 used
DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL uncorrectable_remapped_rows value:GAUGE:U:U
DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL correctable_remapped_rows value:GAUGE:U:U
DCGM_FI_DEV_ROW_REMAP_FAILED row_remap_failure value:GAUGE:U:U
DCGM_FI_DEV_ROW_REMAP_PENDING row_remap_pending value:GAUGE:U:U
DCGM_FI_DEV_INFOROM_VALID inforom_config_valid value:GAUGE:U:U
DCGM_FI_DEV_XID_ERROR xid_errors value:GAUGE:0:U used
DCGM_FI_DEV_PCIE_MAX_LINK_GEN pcie_max_link_gen value:GAUGE:U:U
DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH pcie_max_link_width value:GAUGE:U:U
DCGM_FI_DEV_PCIE_LINK_GEN pcie_link_gen value:GAUGE:U:U
DCGM_FI_DEV_PCIE_LINK_WIDTH pcie_link_width value:GAUGE:U:U
DCGM_FI_DEV_POWER_VIOLATION power_violation value:COUNTER:0:U used
DCGM_FI_DEV_THERMAL_VIOLATION thermal_violation value:COUNTER:0:U used
DCGM_FI_SYSTEM_PCI_TOPOLOGY
DCGM_FI_SYSTEM_NVLINK_TOPOLOGY
DCGM_FI_SYSTEM_GPU_AFFINITY
DCGM_FI_DEV_SYNC_BOOST_VIOLATION sync_boost_violation value:GAUGE:U:U
DCGM_FI_DEV_BOARD_LIMIT_VIOLATION board_limit_violation value:GAUGE:U:U
DCGM_FI_DEV_LOW_UTIL_VIOLATION low_util_violation value:GAUGE:U:U
DCGM_FI_DEV_RELIABILITY_VIOLATION reliability_violation value:GAUGE:U:U
DCGM_FI_DEV_TOTAL_APP_CLOCKS_VIOLATION app_clock_violation value:GAUGE:U:U
DCGM_FI_DEV_TOTAL_BASE_CLOCKS_VIOLATION base_clock_violation value:GAUGE:U:U
DCGM_FI_DEV_MEM_COPY_UTIL_SAMPLES mem_util_samples value:GAUGE:U:U
DCGM_FI_DEV_GPU_UTIL_SAMPLES gpu_util_samples value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L0_TOTAL nvlink_flit_crc_error_count_l0 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L1_TOTAL nvlink_flit_crc_error_count_l1 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L2_TOTAL nvlink_flit_crc_error_count_l2 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L3_TOTAL nvlink_flit_crc_error_count_l3 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L4_TOTAL nvlink_flit_crc_error_count_l4 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L5_TOTAL nvlink_flit_crc_error_count_l5 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL nvlink_flit_crc_error_count_total value:COUNTER:0:U used
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L0_TOTAL nvlink_data_crc_error_count_l0 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L1_TOTAL nvlink_data_crc_error_count_l1 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L2_TOTAL nvlink_data_crc_error_count_l2 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L3_TOTAL nvlink_data_crc_error_count_l3 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L4_TOTAL nvlink_data_crc_error_count_l4 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L5_TOTAL nvlink_data_crc_error_count_l5 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_TOTAL nvlink_data_crc_error_count_total value:COUNTER:0:U used
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L0_TOTAL nvlink_replay_error_count_l0 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L1_TOTAL nvlink_replay_error_count_l1 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L2_TOTAL nvlink_replay_error_count_l2 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L3_TOTAL nvlink_replay_error_count_l3 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L4_TOTAL nvlink_replay_error_count_l4 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L5_TOTAL nvlink_replay_error_count_l5 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_TOTAL nvlink_replay_error_count_total value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L0_TOTAL nvlink_recovery_error_count_l0 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L1_TOTAL nvlink_recovery_error_count_l1 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L2_TOTAL nvlink_recovery_error_count_l2 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L3_TOTAL nvlink_recovery_error_count_l3 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L4_TOTAL nvlink_recovery_error_count_l4 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L5_TOTAL nvlink_recovery_error_count_l5 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_TOTAL nvlink_recovery_error_count_total value:COUNTER:0:U used
DCGM_FI_DEV_NVLINK_THROUGHPUT_L0 nvlink_bandwidth_l0 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_THROUGHPUT_L1 nvlink_bandwidth_l1 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_THROUGHPUT_L2 nvlink_bandwidth_l2 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_THROUGHPUT_L3 nvlink_bandwidth_l3 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_THROUGHPUT_L4 nvlink_bandwidth_l4 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_THROUGHPUT_L5 nvlink_bandwidth_l5 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_THROUGHPUT_TOTAL nvlink_bandwidth_total value:GAUGE:0:U used
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L6_TOTAL nvlink_flit_crc_error_count_l6 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L7_TOTAL nvlink_flit_crc_error_count_l7 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L8_TOTAL nvlink_flit_crc_error_count_l8 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L9_TOTAL nvlink_flit_crc_error_count_l9 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L10_TOTAL nvlink_flit_crc_error_count_l10 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_L11_TOTAL nvlink_flit_crc_error_count_l11 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L6_TOTAL nvlink_data_crc_error_count_l6 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L7_TOTAL nvlink_data_crc_error_count_l7 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L8_TOTAL nvlink_data_crc_error_count_l8 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L9_TOTAL nvlink_data_crc_error_count_l9 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L10_TOTAL nvlink_data_crc_error_count_l10 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_L11_TOTAL nvlink_data_crc_error_count_l11 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L6_TOTAL nvlink_replay_error_count_l6 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L7_TOTAL nvlink_replay_error_count_l7 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L8_TOTAL nvlink_replay_error_count_l8 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L9_TOTAL nvlink_replay_error_count_l9 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L10_TOTAL nvlink_replay_error_count_l10 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_REPLAY_ERROR_L11_TOTAL nvlink_replay_error_count_l11 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L6_TOTAL nvlink_recovery_error_count_l6 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L7_TOTAL nvlink_recovery_error_count_l7 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L8_TOTAL nvlink_recovery_error_count_l8 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L9_TOTAL nvlink_recovery_error_count_l9 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L10_TOTAL nvlink_recovery_error_count_l10 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_L11_TOTAL nvlink_recovery_error_count_l11 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_THROUGHPUT_L6 nvlink_bandwidth_l6 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_THROUGHPUT_L7 nvlink_bandwidth_l7 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_THROUGHPUT_L8 nvlink_bandwidth_l8 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_THROUGHPUT_L9 nvlink_bandwidth_l9 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_THROUGHPUT_L10 nvlink_bandwidth_l10 value:GAUGE:U:U
DCGM_FI_DEV_NVLINK_THROUGHPUT_L11 nvlink_bandwidth_l11 value:GAUGE:U:U
DCGM_FI_DEV_MEMORY_TEMP_CELSIUS memory_temp value:GAUGE:U:U used
DCGM_FI_DEV_NVLINK_ERROR gpu_nvlink_errors value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX nvswitch_throughput_tx value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_RX nvswitch_throughput_rx value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_NON_FATAL_ERRORS nvswitch_link_fatal_errors value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_REPLAY_ERROR_TOTAL nvswitch_link_non_fatal_errors value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_RECOVERY_ERROR_TOTAL nvswitch_link_recovery_errors value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_FLIT_ERROR_TOTAL nvswitch_link_flit_errors value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_CRC_ERROR_TOTAL nvswitch_link_crc_errors value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_ECC_ERROR_TOTAL nvswitch_link_ecc_errors value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_LOW_VC0 nvswitch_link_latency_low_vc0 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_LOW_VC1 nvswitch_link_latency_low_vc1 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_LOW_VC2 nvswitch_link_latency_low_vc2 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_LOW_VC3 nvswitch_link_latency_low_vc3 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_MEDIUM_VC0 nvswitch_link_latency_medium_vc0 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_MEDIUM_VC1 nvswitch_link_latency_medium_vc1 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_MEDIUM_VC2 nvswitch_link_latency_medium_vc2 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_MEDIUM_VC3 nvswitch_link_latency_medium_vc3 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_HIGH_VC0 nvswitch_link_latency_high_vc0 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_HIGH_VC1 nvswitch_link_latency_high_vc1 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_HIGH_VC2 nvswitch_link_latency_high_vc2 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_HIGH_VC3 nvswitch_link_latency_high_vc3 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_PANIC_VC0 nvswitch_link_latency_panic_vc0 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_PANIC_VC1 nvswitch_link_latency_panic_vc1 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_PANIC_VC2 nvswitch_link_latency_panic_vc2 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_PANIC_VC3 nvswitch_link_latency_panic_vc3 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_SAMPLE_VC0_TOTAL nvswitch_link_latency_count_vc0 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_SAMPLE_VC1_TOTAL nvswitch_link_latency_count_vc1 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_SAMPLE_VC2_TOTAL nvswitch_link_latency_count_vc2 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_LATENCY_SAMPLE_VC3_TOTAL nvswitch_link_latency_count_vc3 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_CRC_ERROR_L0_TOTAL nvswitch_link_crc_errors_lane0 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_CRC_ERROR_L1_TOTAL nvswitch_link_crc_errors_lane1 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_CRC_ERROR_L2_TOTAL nvswitch_link_crc_errors_lane2 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_CRC_ERROR_L3_TOTAL nvswitch_link_crc_errors_lane3 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_CRC_ERROR_L4_TOTAL nvswitch_link_crc_errors_lane4 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_CRC_ERROR_L5_TOTAL nvswitch_link_crc_errors_lane5 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_CRC_ERROR_L6_TOTAL nvswitch_link_crc_errors_lane6 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_CRC_ERROR_L7_TOTAL nvswitch_link_crc_errors_lane7 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_ECC_ERROR_L0_TOTAL nvswitch_link_ecc_errors_lane0 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_ECC_ERROR_L1_TOTAL nvswitch_link_ecc_errors_lane1 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_ECC_ERROR_L2_TOTAL nvswitch_link_ecc_errors_lane2 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_ECC_ERROR_L3_TOTAL nvswitch_link_ecc_errors_lane3 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_ECC_ERROR_L4_TOTAL nvswitch_link_ecc_errors_lane4 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_ECC_ERROR_L5_TOTAL nvswitch_link_ecc_errors_lane5 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_ECC_ERROR_L6_TOTAL nvswitch_link_ecc_errors_lane6 value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_LINK_ECC_ERROR_L7_TOTAL nvswitch_link_ecc_errors_lane7 value:GAUGE:U:U
DCGM_FI_DEV_SXID_FATAL_ERROR nvswitch_fatal_error value:GAUGE:U:U
DCGM_FI_DEV_SXID_NON_FATAL_ERROR nvswitch_non_fatal_error value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS nvswitch_temperature_current value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_TEMP_SLOWDOWN_CELSIUS nvswitch_temperature_limit_slowdown value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_TEMP_SHUTDOWN_CELSIUS nvswitch_temperature_limit_shutdown value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_THROUGHPUT_TX nvswitch_throughput_tx value:GAUGE:U:U
DCGM_FI_DEV_NVSWITCH_THROUGHPUT_RX nvswitch_throughput_rx value:GAUGE:U:U
DCGM_FI_CUDA_GPU_COMPUTE_CAPABILITY cuda_compute_capability value:GAUGE:U:U
DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO gr_engine_active value:GAUGE:0.0:1.0 used
DCGM_FI_PROF_SM_UTIL_RATIO sm_active value:GAUGE:0.0:1.0 used
DCGM_FI_PROF_SM_OCCUPANCY_RATIO sm_occupancy value:GAUGE:0:U used
DCGM_FI_PROF_TENSOR_UTIL_RATIO tensor_active value:GAUGE:0.0:1.0 used
DCGM_FI_PROF_DRAM_UTIL_RATIO dram_active value:GAUGE:0.0:1.0 used
DCGM_FI_PROF_FP64_UTIL_RATIO fp64_active value:GAUGE:U:U
DCGM_FI_PROF_FP32_UTIL_RATIO fp32_active value:GAUGE:U:U
DCGM_FI_PROF_FP16_UTIL_RATIO fp16_active value:GAUGE:U:U
DCGM_FI_PROF_PCIE_TX_BYTES pcie_tx_bytes value:GAUGE:U:U
DCGM_FI_PROF_PCIE_RX_BYTES pcie_rx_bytes value:GAUGE:U:U
DCGM_FI_PROF_NVLINK_TX_BYTES nvlink_tx_bytes value:GAUGE:U:U
DCGM_FI_PROF_NVLINK_RX_BYTES nvlink_rx_bytes value:GAUGE:U:U
DCGM_FI_PROF_IMMA_UTIL_RATIO tensor_imma_active value:GAUGE:0.0:1.0 used
DCGM_FI_PROF_HMMA_UTIL_RATIO tensor_hmma_active value:GAUGE:0.0:1.0 used
"""


def _field_id(name: str) -> int:
    value = vars(_dcgm_fields_internal).get(name)
    if value is None:
        value = getattr(_dcgm_fields, name)
    return int(value)


def _parse(text: str) -> _Dict[int, _Optional[CollectdMetadata]]:
    table: _Dict[int, _Optional[CollectdMetadata]] = {}
    for line in text.split("\n"):
        words = line.split()
        if not words:
            continue
        meta = None
        if len(words) > 1:
            meta = CollectdMetadata(words[1], words[2], len(words) > 3 and words[3] == "used")
        table[_field_id(words[0])] = meta
    return table


#: field id -> :class:`CollectdMetadata`, or ``None`` for a field without a collectd type.
CollectdMetadataDict: _Dict[int, _Optional[CollectdMetadata]] = _parse(_TABLE)
del _TABLE

#: collectd name -> field id, built at the first by-name look-up (NVIDIA's cache).
__fieldDict: _Optional[_Dict[str, int]] = None

_DS_TYPES = ("GAUGE", "COUNTER", "DERIVE", "ABSOLUTE")


def GenerateCollectdTypesDB() -> None:
    """Prints the ``types.db`` lines of the used fields (name padded to the longest name,
    then the type), after checking every entry's type text; exits with a message if one is
    malformed."""
    width = max(len(m.name) if m else 0 for m in CollectdMetadataDict.values())
    fmt = "{0:<" + str(width) + "}"
    failed = False
    for item in CollectdMetadataDict.values():
        if item is None:
            continue
        parts = item.kind.split(":")
        if len(parts) != 4:
            sys.stderr.write("Item " + item.name + " has wrong number of collectd type fields - four required.\n")
            failed = True
        if len(parts) < 2 or parts[1] not in _DS_TYPES:
            sys.stderr.write("Item " + item.name + " should be one of GAUGE, COUNTER, DERIVE, ABSOLUTE.\n")
            failed = True
        if item.used:
            print(fmt.format(item.name), item.kind)
    if failed:
        sys.exit("Failed on db.types table syntax errors.\n")


def GetFieldByName(name: str) -> int:
    """The field id of a collectd name, or of a numeric string (that field only if it is a
    used one); -1 where there is none."""
    global __fieldDict
    if name.isnumeric():
        item = CollectdMetadataDict[int(name)]
        if item is None or not item.used:
            return -1
        return int(name)
    if __fieldDict is None:
        __fieldDict = {m.name: fid for fid, m in CollectdMetadataDict.items() if m is not None}
    return __fieldDict.get(name, -1)


if __name__ == "__main__":
    GenerateCollectdTypesDB()
