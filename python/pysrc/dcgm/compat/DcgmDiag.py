"""NVIDIA's ``DcgmDiag`` (DCGM 4.6): building a ``c_dcgmRunDiag_v*`` request
(:class:`DcgmDiag`) and reading a ``c_dcgmDiagResponse_v12`` (the module's helper functions).

Differences from NVIDIA's: strings are written into the request's fixed-width text slots with
bounds (NVIDIA's assigns them character by character); :func:`ResultToString` raises a
``ValueError`` naming the bad result (NVIDIA's message has a format error and raises
``TypeError``). An addition for the project brief's API: :class:`DcgmDiagResult`, what
``DcgmGroup.RunDiagnostic`` answers.
"""

from __future__ import annotations

import ctypes
import os  # noqa: F401 - in NVIDIA's module namespace too
from typing import Any, Dict, List, Optional

from dcgm.compat import dcgm_agent, dcgm_fields, dcgm_structs

logger = None  # NVIDIA's module logs through the test framework's ``logger`` when it exists

g_latestDiagResponseVer = dcgm_structs.dcgmDiagResponse_version12
g_latestRunDiagVer = dcgm_structs.dcgmRunDiag_version10


def _put_text(struct_obj: Any, field: str, index: int, text: Any) -> None:
    """Writes ``text`` (NUL-terminated, cut to fit) into slot ``index`` of the 2-D ``char``
    array ``field`` of ``struct_obj``."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    descriptor = getattr(type(struct_obj), field)
    rows = dict(struct_obj._fields_)[field]._length_
    width = descriptor.size // rows
    if not 0 <= index < rows:
        raise IndexError("%s has %d slots" % (field, rows))
    address = ctypes.addressof(struct_obj) + descriptor.offset + index * width
    ctypes.memset(address, 0, width)
    ctypes.memmove(address, data, min(len(data), width - 1))


def _same_entity(a: Any, b: Any) -> bool:
    try:
        return a.entityGroupId == b.entityGroupId and a.entityId == b.entityId
    except AttributeError:
        return a == b


class DcgmDiag:
    """A diagnostic request: ``gpuIds``/``cpuIds`` (default all), ``testNamesStr`` (``"1"``-``"4"``
    for a level, else comma-separated test names; empty: level 1), ``paramsStr``
    (``;``-separated ``test.param=value``), ``ignoreErrorCodesStr``, ``verbose``, ``version``
    (a ``dcgmRunDiag_version*``) and ``timeout`` (s). :meth:`Execute` runs it."""

    _versionMap = {
        dcgm_structs.dcgmRunDiag_version: 10,
        dcgm_structs.dcgmRunDiag_version7: 7,
        dcgm_structs.dcgmRunDiag_version8: 8,
        dcgm_structs.dcgmRunDiag_version9: 9,
        dcgm_structs.dcgmRunDiag_version10: 10,
    }

    def __init__(self, gpuIds: Any = None, cpuIds: Any = None, testNamesStr: str = "", paramsStr: str = "",
                 ignoreErrorCodesStr: str = "", verbose: bool = True, version: int = dcgm_structs.dcgmRunDiag_version10,
                 timeout: int = 0) -> None:
        if version not in DcgmDiag._versionMap:
            raise ValueError("'%s' is not a valid version for dcgmRunDiag." % version)
        self.version = version
        classes = {
            dcgm_structs.dcgmRunDiag_version10: dcgm_structs.c_dcgmRunDiag_v10,
            dcgm_structs.dcgmRunDiag_version9: dcgm_structs.c_dcgmRunDiag_v9,
            dcgm_structs.dcgmRunDiag_version8: dcgm_structs.c_dcgmRunDiag_v8,
            dcgm_structs.dcgmRunDiag_version7: dcgm_structs.c_dcgmRunDiag_v7,
        }
        self.runDiagInfo = classes.get(version, dcgm_structs.c_dcgmRunDiag_t)()
        self.runDiagInfo.flags = 0
        self.numTests = 0
        self.numParams = 0
        self.gpuList = ""
        self.cpuList = ""
        self.expectedNumGpus = ""
        self.ignoreErrorCodes = ignoreErrorCodesStr
        self.SetVerbose(verbose)
        if testNamesStr in ("", "1", "2", "3", "4"):
            self.runDiagInfo.validate = int(testNamesStr or "1")
        else:
            if testNamesStr.isdigit():
                raise ValueError("'%s' is not a valid test name." % testNamesStr)
            names = testNamesStr.split(",")
            if len(names) > dcgm_structs.DCGM_MAX_TEST_NAMES:
                raise ValueError("DcgmDiag cannot initialize: %d test names were specified exceeding the limit of %d."
                                 % (len(names), dcgm_structs.DCGM_MAX_TEST_NAMES))
            for name in names:
                self.AddTest(name)
        if paramsStr != "":
            params = paramsStr.split(";")
            if len(params) >= dcgm_structs.DCGM_MAX_TEST_PARMS:
                raise ValueError("DcgmDiag cannot initialize: %d parameters were specified, exceeding the limit of %d."
                                 % (len(params), dcgm_structs.DCGM_MAX_TEST_PARMS))
            for param in params:
                self.AddParameter(param)
        self.runDiagInfo.timeoutSeconds = timeout
        self.runDiagInfo.groupId = dcgm_structs.DCGM_GROUP_NULL
        if cpuIds:
            self.cpuList = ",".join("cpu:" + str(c) for c in cpuIds)
        if gpuIds:
            self.gpuList = ",".join(str(g) for g in gpuIds)
        if hasattr(self.runDiagInfo, "ignoreErrorCodes"):
            self.runDiagInfo.ignoreErrorCodes = self.ignoreErrorCodes
        if hasattr(self.runDiagInfo, "entityIds"):
            parts = [p for p in (self.gpuList, self.cpuList) if p]
            self.runDiagInfo.entityIds = ",".join(parts) if parts else "*,cpu:*"
        elif hasattr(self.runDiagInfo, "gpuList"):
            if self.gpuList:
                self.runDiagInfo.gpuList = self.gpuList
            else:
                self.runDiagInfo.groupId = dcgm_structs.DCGM_GROUP_ALL_GPUS
        if hasattr(self.runDiagInfo, "expectedNumEntities"):
            self.runDiagInfo.expectedNumEntities = self.expectedNumGpus

    def _flag(self, flag: int, on: Any) -> None:
        if on:
            self.runDiagInfo.flags |= flag
        else:
            self.runDiagInfo.flags &= ~flag

    def SetVerbose(self, val: Any) -> None:
        """Verbose results (``DCGM_RUN_FLAGS_VERBOSE``)."""
        self._flag(dcgm_structs.DCGM_RUN_FLAGS_VERBOSE, val)

    def SetEnableHeartbeat(self, val: Any) -> None:
        """Heartbeats required from the caller during the run (``DCGM_RUN_FLAGS_ENABLE_HEARTBEAT``)."""
        self._flag(dcgm_structs.DCGM_RUN_FLAGS_ENABLE_HEARTBEAT, val)

    def UseFakeGpus(self) -> None:
        """Runs on the GPU list as fake GPUs (test framework)."""
        self.runDiagInfo.fakeGpuList = self.gpuList

    def GetStruct(self) -> Any:
        """The request structure."""
        return self.runDiagInfo

    def AddParameter(self, parameterStr: str) -> None:
        """Adds a ``test.param=value`` parameter (``ValueError`` when too long)."""
        limit = dcgm_structs.DCGM_MAX_TEST_PARMS_LEN
        if self.version in (dcgm_structs.dcgmRunDiag_version8, dcgm_structs.dcgmRunDiag_version9):
            limit = dcgm_structs.DCGM_MAX_TEST_PARMS_LEN_V2
        if len(parameterStr) >= limit:
            raise ValueError("DcgmDiag cannot add parameter '%s' because it exceeds max length %d." % (parameterStr, limit))
        _put_text(self.runDiagInfo, "testParms", self.numParams, parameterStr)
        self.numParams += 1

    def AddTest(self, testNameStr: str) -> None:
        """Adds a test by name (``ValueError`` when too long)."""
        if len(testNameStr) >= dcgm_structs.DCGM_MAX_TEST_NAMES_LEN:
            raise ValueError("DcgmDiag cannot add test name '%s' because it exceeds max length %d."
                             % (testNameStr, dcgm_structs.DCGM_MAX_TEST_NAMES_LEN))
        _put_text(self.runDiagInfo, "testNames", self.numTests, testNameStr)
        self.numTests += 1

    def SetStatsOnFail(self, val: Any) -> None:
        """Writes stats files only when a test fails (``DCGM_RUN_FLAGS_STATSONFAIL``)."""
        if val:
            self.runDiagInfo.flags |= dcgm_structs.DCGM_RUN_FLAGS_STATSONFAIL

    def SetClocksEventMask(self, value: Any) -> None:
        """The clocks-event reasons to ignore (a mask, or names)."""
        if DcgmDiag._versionMap[self.version] < 3:
            raise ValueError("Clocks event mask requires minimum version 3 for dcgmRunDiag.")
        if isinstance(value, str) and len(value) >= dcgm_structs.DCGM_CLOCKS_EVENT_MASK_LEN:
            raise ValueError("Clocks event mask value '%s' exceeds max length %d."
                             % (value, dcgm_structs.DCGM_CLOCKS_EVENT_MASK_LEN - 1))
        self.runDiagInfo.clocksEventMask = str(value)

    def SetThrottleMask(self, value: Any) -> None:
        """Deprecated name of :meth:`SetClocksEventMask`."""
        self.SetClocksEventMask(value)

    def SetFailEarly(self, enable: bool = True, checkInterval: int = 5) -> None:
        """Stops at the first failure, checking every ``checkInterval`` s."""
        if DcgmDiag._versionMap[self.version] < 5:
            raise ValueError("Fail early requires minimum version 5 for dcgmRunDiag.")
        if not isinstance(checkInterval, int):
            raise ValueError("Invalid checkInterval value: %s" % checkInterval)
        if enable:
            self.runDiagInfo.flags |= dcgm_structs.DCGM_RUN_FLAGS_FAIL_EARLY
            self.runDiagInfo.failCheckInterval = checkInterval
        else:
            self.runDiagInfo.flags &= ~dcgm_structs.DCGM_RUN_FLAGS_FAIL_EARLY

    def Execute(self, handle: Any) -> Any:
        """Runs the request on the raw ``handle``: a ``c_dcgmDiagResponse_v12``."""
        return dcgm_agent.dcgmActionValidate_v2(handle, self.runDiagInfo, self.version)

    def SetStatsPath(self, statsPath: str) -> None:
        """Where the stats files go."""
        if len(statsPath) >= dcgm_structs.DCGM_PATH_LEN:
            raise ValueError("DcgmDiag cannot set statsPath '%s' because it exceeds max length %d."
                             % (statsPath, dcgm_structs.DCGM_PATH_LEN))
        self.runDiagInfo.statsPath = statsPath

    def SetConfigFileContents(self, configFileContents: str) -> None:
        """The contents of an NVVS configuration file."""
        if len(configFileContents) >= dcgm_structs.DCGM_MAX_CONFIG_FILE_LEN:
            raise ValueError("Dcgm Diag cannot set config file contents to '%s' because it exceeds max length %d."
                             % (configFileContents, dcgm_structs.DCGM_MAX_CONFIG_FILE_LEN))
        self.runDiagInfo.configFileContents = configFileContents

    def SetDebugLogFile(self, logFileName: str) -> None:
        """The NVVS debug log file."""
        if len(logFileName) >= dcgm_structs.DCGM_PATH_LEN:
            raise ValueError("Cannot set debug file to '%s' because it exceeds max length %d."
                             % (logFileName, dcgm_structs.DCGM_PATH_LEN))
        self.runDiagInfo.debugLogFile = logFileName

    def SetDebugLevel(self, debugLevel: int) -> None:
        """The NVVS debug level, 0-5."""
        if debugLevel < 0 or debugLevel > 5:
            raise ValueError("Cannot set debug level to %d. Debug Level must be a value from 0-5 inclusive." % debugLevel)
        self.runDiagInfo.debugLevel = debugLevel

    def SetWatchFrequency(self, val: int) -> None:
        """How often the diagnostic samples fields, µs (100000-60000000)."""
        if val < 100000 or val > 60000000:
            raise ValueError("Cannot set watch frequency to {}. Watch frequency must be a value from 100000-60000000 inclusive.".format(val))
        self.runDiagInfo.watchFrequency = val


# ---- reading a response

def _tests(response: Any) -> List[Any]:
    return list(response.tests[: min(response.numTests, dcgm_structs.DCGM_DIAG_RESPONSE_TESTS_MAX)])


def _results_of(response: Any, test: Any) -> List[Any]:
    return [response.results[i] for i in test.resultIndices[: min(test.numResults, dcgm_structs.DCGM_DIAG_TEST_RUN_RESULTS_MAX)]]


def find_test_in_response(response: Any, testName: str) -> Any:
    """The test named ``testName`` of ``response``, or ``None``."""
    assert hasattr(response, "tests") and hasattr(response, "results"), "Response does not have tests or results"
    for test in _tests(response):
        if test.name == testName:
            return test
    return None


def _errors_of(response: Any, test: Any) -> List[Any]:
    return [response.errors[i] for i in test.errorIndices[: min(test.numErrors, dcgm_structs.DCGM_DIAG_TEST_RUN_ERROR_INDICES_MAX)]]


def retrieve_diag_failure_message(response: Any, entityPair: Any, testName: str) -> Optional[str]:
    """The error message of ``testName`` for ``entityPair``, or ``None``."""
    test = find_test_in_response(response, testName)
    if not test:
        return None
    for error in _errors_of(response, test):
        if _same_entity(error.entity, entityPair):
            return error.msg
    return None


def find_error_code(response: Any, entityPair: Any, testName: str, errorCode: int) -> Any:
    """The error of ``testName`` for ``entityPair`` with code ``errorCode``, or ``None``."""
    test = find_test_in_response(response, testName)
    if not test:
        return None
    for error in _errors_of(response, test):
        if _same_entity(error.entity, entityPair) and error.code == errorCode:
            return error
    return None


def _has_result(response: Any, entityPair: Any, test: Any, result: int) -> bool:
    return any(r.result == result and _same_entity(r.entity, entityPair) for r in _results_of(response, test))


def check_diag_result_fail(response: Any, entityPair: Any, testName: str) -> bool:
    """Whether ``testName`` failed for ``entityPair`` (the test must be in the response)."""
    test = find_test_in_response(response, testName)
    assert test, "Expected fail result for test %s but none was found" % testName
    return _has_result(response, entityPair, test, dcgm_structs.DCGM_DIAG_RESULT_FAIL)


def check_diag_result_pass(response: Any, entityPair: Any, testName: str) -> bool:
    """Whether ``testName`` passed for ``entityPair``."""
    test = find_test_in_response(response, testName)
    assert test, "Expected pass result for test %s but none was found" % testName
    return _has_result(response, entityPair, test, dcgm_structs.DCGM_DIAG_RESULT_PASS)


def check_diag_result_skip(response: Any, entityPair: Any, testName: str) -> bool:
    """Whether ``testName`` was skipped for ``entityPair``."""
    test = find_test_in_response(response, testName)
    assert test, "Expected skip result for test %s but none was found" % testName
    return _has_result(response, entityPair, test, dcgm_structs.DCGM_DIAG_RESULT_SKIP)


def check_diag_result_non_passing(response: Any, entityPair: Any, testName: str) -> bool:
    """Whether ``testName`` has no passing result for ``entityPair``."""
    return not check_diag_result_pass(response, entityPair, testName)


def check_diag_result_non_failing(response: Any, entityPair: Any, testName: str) -> bool:
    """Whether ``testName`` has no failing result for ``entityPair``."""
    return not check_diag_result_fail(response, entityPair, testName)


def check_diag_result_non_running(response: Any, entityPair: Any, testName: str) -> bool:
    """Whether ``testName`` did not run for ``entityPair`` (every result skipped or not run)."""
    notRun = {dcgm_structs.DCGM_DIAG_RESULT_NOT_RUN, dcgm_structs.DCGM_DIAG_RESULT_SKIP}
    test = find_test_in_response(response, testName)
    if test is None:
        return True
    if test.result in notRun:
        return True
    return not any(r.result not in notRun and _same_entity(r.entity, entityPair) for r in _results_of(response, test))


def GetEntityCount(response: Any, entityGroupId: int) -> int:
    """How many entities of ``entityGroupId`` the response covers."""
    if hasattr(response, "entities"):
        return sum(1 for e in response.entities[: min(response.numEntities, dcgm_structs.DCGM_DIAG_RESPONSE_ENTITIES_MAX)]
                   if e.entity.entityGroupId == entityGroupId)
    if hasattr(response, "gpuCount") and entityGroupId == dcgm_fields.DCGM_FE_GPU:
        return response.gpuCount
    raise NotImplementedError("Entity type {} not handled for version {}.".format(entityGroupId, response.version))


def GetGpuCount(response: Any) -> int:
    """How many GPUs the response covers."""
    return GetEntityCount(response, dcgm_fields.DCGM_FE_GPU)


_RESULT_NAMES = {
    dcgm_structs.DCGM_DIAG_RESULT_PASS: "Pass",
    dcgm_structs.DCGM_DIAG_RESULT_FAIL: "Fail",
    dcgm_structs.DCGM_DIAG_RESULT_WARN: "Warn",
    dcgm_structs.DCGM_DIAG_RESULT_SKIP: "Skip",
    dcgm_structs.DCGM_DIAG_RESULT_NOT_RUN: "Not Run",
}


def ResultToString(result: int) -> str:
    """``"Pass"``, ``"Fail"``, ``"Warn"``, ``"Skip"`` or ``"Not Run"`` of a ``DCGM_DIAG_RESULT_*``."""
    try:
        return _RESULT_NAMES[result]
    except (KeyError, TypeError):
        raise ValueError("Invalid result {} specified".format(result)) from None


def DumpTestResults(logger: Any, response: Any, testNames: Any = []) -> None:  # noqa: B006 - NVIDIA's default
    """Logs (``logger.info``) the results of the response's tests (of ``testNames`` only, if
    given)."""
    for test in _tests(response):
        if not testNames or test.name in testNames:
            logger.info("Results for {}, overall: {}".format(test.name, ResultToString(test.result)))
            for r in [response.results[i] for i in test.resultIndices[: test.numResults]]:
                logger.info("   testId: {} ent grp:{}, id:{}, result: {}".format(
                    r.testId, r.entity.entityGroupId, r.entity.entityId, ResultToString(r.result)))


# ---- the project brief's result object

#: Return codes meaning "this installation cannot run diagnostics" (no NVVS): a
#: DcgmGroup.RunDiagnostic result of "Not Run" rather than an exception.
_DIAG_UNAVAILABLE = frozenset(
    code for code in (
        getattr(dcgm_structs, "DCGM_ST_NVVS_BINARY_NOT_FOUND", None),
        getattr(dcgm_structs, "DCGM_ST_NVVS_NO_AVAILABLE_TEST", None),
    ) if code is not None
)

# worst first: an overall result is the worst of its tests
_SEVERITY = [
    dcgm_structs.DCGM_DIAG_RESULT_FAIL,
    dcgm_structs.DCGM_DIAG_RESULT_WARN,
    dcgm_structs.DCGM_DIAG_RESULT_PASS,
    dcgm_structs.DCGM_DIAG_RESULT_SKIP,
    dcgm_structs.DCGM_DIAG_RESULT_NOT_RUN,
]


class DcgmDiagResult:
    """The outcome of ``DcgmGroup.RunDiagnostic`` (an addition for the project brief's API):
    ``response`` (the ``c_dcgmDiagResponse_v12``, ``None`` when the diagnostic could not run) and
    ``error`` (the ``DCGMError`` that kept it from running, else ``None``)."""

    def __init__(self, response: Any, error: Optional[BaseException] = None) -> None:
        self.response = response
        self.error = error

    def GetResponse(self) -> Any:
        """The ``c_dcgmDiagResponse_v12`` (``None`` when the diagnostic could not run)."""
        return self.response

    def GetTestResults(self) -> Dict[str, str]:
        """Each test's overall result by test name (``{"software": "Pass", ...}``)."""
        if self.response is None:
            return {}
        return {t.name: ResultToString(t.result) if t.result in _RESULT_NAMES else str(t.result) for t in _tests(self.response)}

    def GetResult(self) -> str:
        """The overall result: the worst of the tests' (``"Fail"`` > ``"Warn"`` > ``"Pass"`` >
        ``"Skip"``); ``"Not Run"`` when no test ran, with the reason when the diagnostic could
        not run (``"Not Run (The NVVS binary was not found ...)"``)."""
        if self.response is None:
            reason = getattr(self.error, "message", None) or str(self.error or "")
            return "Not Run (%s)" % reason.split("\n")[0] if reason else "Not Run"
        results = {t.result for t in _tests(self.response)}
        for result in _SEVERITY:
            if result in results:
                return _RESULT_NAMES[result]
        return "Not Run"

    def __str__(self) -> str:
        return self.GetResult()

    def __repr__(self) -> str:
        return "<DcgmDiagResult %s>" % self.GetResult()
