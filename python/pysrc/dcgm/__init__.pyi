from typing import Dict

from dcgm import fields as fields, structs as structs, testing as testing
from dcgm._enums import (
    Blank as Blank,
    EntityGroup as EntityGroup,
    HealthSystem as HealthSystem,
    PolicyCondition as PolicyCondition,
)
from dcgm._native import (
    AccountingStats as AccountingStats,
    BurnFinding as BurnFinding,
    BurnReport as BurnReport,
    BurnVerdict as BurnVerdict,
    DoctorReport as DoctorReport,
    Finding as Finding,
    burn as burn,
    doctor as doctor,
    doctor_replay as doctor_replay,
    FieldGroup as FieldGroup,
    FieldMeta as FieldMeta,
    FieldValue as FieldValue,
    Group as Group,
    Handle as Handle,
    PolicyRegistration as PolicyRegistration,
    PolicySubscription as PolicySubscription,
    Reader as Reader,
    RunningProcess as RunningProcess,
    SinceCursor as SinceCursor,
    Snapshots as Snapshots,
    System as System,
    Watch as Watch,
)
from dcgm.reader import (
    DcgmReader as DcgmReader,
    defaultFieldIds as defaultFieldIds,
    entity_group_id_to_string as entity_group_id_to_string,
)
from dcgm.structs import DCGMError as DCGMError, dcgmExceptionClass as dcgmExceptionClass

__version__: str
CAPABILITIES: Dict[str, str]
__all__ = [
    "AccountingStats",
    "CAPABILITIES",
    "Blank",
    "DCGMError",
    "DcgmReader",
    "BurnFinding",
    "BurnReport",
    "BurnVerdict",
    "DoctorReport",
    "EntityGroup",
    "FieldGroup",
    "FieldMeta",
    "FieldValue",
    "Finding",
    "Group",
    "Handle",
    "HealthSystem",
    "PolicyCondition",
    "PolicyRegistration",
    "PolicySubscription",
    "Reader",
    "RunningProcess",
    "SinceCursor",
    "Snapshots",
    "System",
    "Watch",
    "dcgmExceptionClass",
    "defaultFieldIds",
    "burn",
    "doctor",
    "doctor_replay",
    "entity_group_id_to_string",
    "fields",
    "simulator_path",
    "structs",
    "testing",
]

def simulator_path() -> str: ...
