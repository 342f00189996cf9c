"""NVIDIA's ``DcgmMnDiag`` (DCGM 4.6): building and running a multi-node diagnostic request
(``c_dcgmRunMnDiag_v1``). Like NVIDIA's, the module also re-exports ``ctypes``' and
``dcgm_structs``' names. Host names and parameters are written into their fixed-width slots
with bounds checked before writing (NVIDIA's writes first, then checks)."""

from __future__ import annotations

from ctypes import *  # noqa: F401,F403 - NVIDIA's module re-exports these
from typing import Any, List, Optional

from dcgm.compat import dcgm_agent, dcgm_structs
from dcgm.compat.dcgm_structs import *  # noqa: F401,F403 - NVIDIA's module re-exports these
from dcgm.compat.DcgmDiag import _put_text


class DcgmMnDiag:
    """A multi-node diagnostic: ``hostList`` (host names, at most ``DCGM_MAX_NUM_HOSTS``),
    ``testName``, ``parameters`` (``test.param=value`` strings), ``handle`` (kept as given) and
    ``version`` (``dcgmRunMnDiag_version1``). ``hostEngineAddress`` is kept for the caller."""

    def __init__(self, hostList: Optional[List[str]] = None, hostEngineAddress: Optional[str] = None,
                 testName: Optional[str] = None, parameters: Any = [], handle: Any = None,  # noqa: B006 - NVIDIA's default
                 version: int = dcgm_structs.dcgmRunMnDiag_version1) -> None:
        self.version = version
        self.handle = handle
        self.runMnDiagInfo = dcgm_structs.c_dcgmRunMnDiag_v1()
        self.hostEngineAddress = hostEngineAddress
        self.numHosts = 0
        self.numParams = 0
        self.runMnDiagInfo.version = version
        if hostList:
            if len(hostList) > dcgm_structs.DCGM_MAX_NUM_HOSTS:
                raise ValueError("Cannot add more than %d hosts, got %d" % (dcgm_structs.DCGM_MAX_NUM_HOSTS, len(hostList)))
            for i, host in enumerate(hostList):
                _put_text(self.runMnDiagInfo, "hostList", i, host)
            self.numHosts = len(hostList)
        if testName:
            self.runMnDiagInfo.testName = testName
        if parameters:
            if len(parameters) > dcgm_structs.DCGM_MAX_TEST_PARMS:
                raise ValueError("Cannot add more than %d parameters, got %d" % (dcgm_structs.DCGM_MAX_TEST_PARMS, len(parameters)))
            for i, param in enumerate(parameters):
                _put_text(self.runMnDiagInfo, "testParms", i, param)
            self.numParams = len(parameters)

    def AddHost(self, hostname: str) -> None:
        """Adds a host (``ValueError`` when too long, or when the list is full)."""
        if len(hostname) >= dcgm_structs.DCGM_MAX_STR_LENGTH:
            raise ValueError("Hostname exceeds maximum length of %d" % dcgm_structs.DCGM_MAX_STR_LENGTH)
        if self.numHosts >= dcgm_structs.DCGM_MAX_NUM_HOSTS:
            raise ValueError("Cannot add more than %d hosts, got %d" % (dcgm_structs.DCGM_MAX_NUM_HOSTS, self.numHosts + 1))
        _put_text(self.runMnDiagInfo, "hostList", self.numHosts, hostname)
        self.numHosts += 1

    def SetTestName(self, testName: str) -> None:
        """The test to run (``ValueError`` when too long)."""
        if len(testName) >= dcgm_structs.DCGM_MAX_STR_LENGTH:
            raise ValueError("Test name exceeds maximum length of %d" % dcgm_structs.DCGM_MAX_STR_LENGTH)
        self.runMnDiagInfo.testName = testName

    def AddParameter(self, parameterStr: str) -> None:
        """Adds a ``test.param=value`` parameter (``ValueError`` when too long, or full)."""
        if len(parameterStr) >= dcgm_structs.DCGM_MAX_TEST_PARMS_LEN:
            raise ValueError("Parameter exceeds maximum length of %d" % dcgm_structs.DCGM_MAX_TEST_PARMS_LEN)
        if self.numParams >= dcgm_structs.DCGM_MAX_TEST_PARMS:
            raise ValueError("Cannot add more than %d parameters, got %d" % (dcgm_structs.DCGM_MAX_TEST_PARMS, self.numParams + 1))
        _put_text(self.runMnDiagInfo, "testParms", self.numParams, parameterStr)
        self.numParams += 1

    def GetStruct(self) -> Any:
        """The request structure."""
        return self.runMnDiagInfo

    def Execute(self, handle: Any) -> Any:
        """Runs the request on the raw ``handle`` (``ValueError`` without hosts)."""
        if self.numHosts == 0:
            raise ValueError("No hosts specified for diagnostic")
        return dcgm_agent.dcgmRunMnDiagnostic(handle, self.runMnDiagInfo)
