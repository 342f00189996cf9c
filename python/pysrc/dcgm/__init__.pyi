from dcgm import fields as fields, structs as structs, testing as testing
from dcgm._enums import (
    Blank as Blank,
    EntityGroup as EntityGroup,
    HealthSystem as HealthSystem,
    PolicyCondition as PolicyCondition,
)
from dcgm._native import (
    FieldGroup as FieldGroup,
    FieldMeta as FieldMeta,
    FieldValue as FieldValue,
    Group as Group,
    Handle as Handle,
    PolicyRegistration as PolicyRegistration,
    Reader as Reader,
    SinceCursor as SinceCursor,
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
__all__ = [
    "Blank",
    "DCGMError",
    "DcgmReader",
    "EntityGroup",
    "FieldGroup",
    "FieldMeta",
    "FieldValue",
    "Group",
    "Handle",
    "HealthSystem",
    "PolicyCondition",
    "PolicyRegistration",
    "Reader",
    "SinceCursor",
    "System",
    "Watch",
    "dcgmExceptionClass",
    "defaultFieldIds",
    "entity_group_id_to_string",
    "fields",
    "simulator_path",
    "structs",
    "testing",
]

def simulator_path() -> str: ...
