"""NVIDIA's ``DcgmLogging`` (DCGM 4.6): the logger categories of ``common/DcgmLogging.h``, for
``dcgm_agent.dcgmHostengineSetLoggingSeverity``."""

BASE_LOGGER = 0
SYSLOG_LOGGER = 1
CONSOLE_LOGGER = 2
FILE_LOGGER = 3
