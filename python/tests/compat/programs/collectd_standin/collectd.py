"""A stand-in for collectd's embedded ``collectd`` module: records the callbacks a plugin
registers and every value it dispatches, so that a test can drive the plugin as collectd
would (config, init, reads, shutdown) and compare what was dispatched."""

from typing import Any, Callable, Dict, List, Optional

callbacks: Dict[str, List[Any]] = {"config": [], "init": [], "read": [], "shutdown": []}
dispatched: List[Dict[str, Any]] = []
log: List[str] = []


def register_config(f: Callable[..., Any], name: Optional[str] = None) -> None:
    callbacks["config"].append(f)


def register_init(f: Callable[..., Any]) -> None:
    callbacks["init"].append(f)


def register_read(f: Callable[..., Any], interval: Optional[float] = None) -> None:
    callbacks["read"].append((f, interval))


def register_shutdown(f: Callable[..., Any]) -> None:
    callbacks["shutdown"].append(f)


def debug(msg: str) -> None:
    pass


def info(msg: str) -> None:
    log.append("info: %s" % msg)


def warning(msg: str) -> None:
    log.append("warning: %s" % msg)


def error(msg: str) -> None:
    log.append("error: %s" % msg)


class Values:
    """collectd.Values: attributes set on it are defaults for dispatch()."""

    def __init__(self, **kw: Any) -> None:
        self.type = None
        self.plugin = None
        self.plugin_instance = None
        self.type_instance = None
        self.time = None
        self.values: List[Any] = []
        for k, v in kw.items():
            setattr(self, k, v)

    def dispatch(self, **kw: Any) -> None:
        rec = {k: getattr(self, k) for k in ("type", "plugin", "plugin_instance", "type_instance", "time", "values")}
        rec.update(kw)
        dispatched.append(rec)


class Config:
    """A collectd configuration node (key, values, children)."""

    def __init__(self, key: str, values: Any = (), children: Any = ()) -> None:
        self.key = key
        self.values = tuple(values)
        self.children = tuple(children)
