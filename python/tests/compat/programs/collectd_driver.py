"""Drives NVIDIA's dcgm_collectd_plugin.py under the stand-in ``collectd`` module as collectd
would: config (argv[1] seconds of Interval, or none), init, argv[2] reads argv[3] s apart,
shutdown; then prints what was dispatched (one line per value, without its time) and the
plugin's log lines."""

import sys
import time

import collectd

import dcgm_collectd_plugin  # noqa: F401  (registers its callbacks at import)

interval = sys.argv[1] if len(sys.argv) > 1 else ""
reads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
pause = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
fields = sys.argv[4] if len(sys.argv) > 4 else ""

children = []
if interval:
    children.append(collectd.Config("Interval", [interval]))
if fields:
    children.append(collectd.Config("FieldIds", [fields]))
for f in collectd.callbacks["config"]:
    f(collectd.Config("Module", [], children) if children else None)
for f in collectd.callbacks["init"]:
    f()
for i in range(reads):
    if i:
        time.sleep(pause)
    before = len(collectd.dispatched)
    for f, _interval in collectd.callbacks["read"]:
        f()
    print("read %d: %d values" % (i, len(collectd.dispatched) - before))
    for rec in collectd.dispatched[before:]:
        print("%s %s %s %s %r" % (rec["plugin"], rec["plugin_instance"], rec["type_instance"], rec["type"], rec["values"]))
for f in collectd.callbacks["shutdown"]:
    f()
for line in collectd.log:
    print(line)
print("read callbacks: %r" % ([iv for _f, iv in collectd.callbacks["read"]],))
