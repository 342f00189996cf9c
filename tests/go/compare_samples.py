#!/usr/bin/env python3
"""go-dcgm's samples on dcgm-sim, compared with this project's tools on the same node.

Run by scripts/go-peers.sh, which builds the samples (NVIDIA's go-dcgm, from the Go module
proxy, unchanged) and the tools. Each sample runs as NVIDIA ships it, with LD_LIBRARY_PATH at a
folder holding a libdcgm.so.4 link to dcgm-sim; each tool runs with --simulate on the same
library and the same node (tests/go/node.toml, or the `faults` preset for policy and health).
The facts compared:

  deviceInfo   GPU count, UUID, name, serial, VBIOS, driver, bus id, memory, power limit and
               CPU affinity of every GPU  <->  dcgm-query --query-gpu, dcgm-topology
  topology     the NVLink count between every two GPUs, CPU affinity  <->  dcgm-topology --json
  dmon         the GPUs listed; power and temperature in range and within a tolerance of the
               tool's reading  <->  dcgm-dmon --csv
  processInfo  the GPUs each pid runs on  <->  dcgm-query --query-compute-apps
  health       each GPU's status on the calm node and after the `faults` incidents  <->
               dcgm-health --json
  policy       the XID and double-bit ECC violations of the `faults` preset  <->  dcgm-policy
  hostengineStatus, diag   run; what they print is checked against the library's answer

Prints one line per fact (`agree`, `DIFFER` or `not compared` with the reason) and closes with
`go-samples[sim]: N agree, N differ, N not compared`. Exit status 1 when a fact differs.
"""

import argparse
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NODE = os.path.join(HERE, "node.toml")
SOCKET = "/tmp/dcgm-rs-go-peers.sock"  # the node's host engine (node.toml's hostengines)

results = {"agree": 0, "differ": 0, "not compared": 0}


def report(sample, fact, ok, detail=""):
    verdict = {True: "agree", False: "DIFFER", None: "not compared"}[ok]
    results[{True: "agree", False: "differ", None: "not compared"}[ok]] += 1
    print(f"go-sample {sample:<17} {fact:<44} {verdict}{': ' + detail if detail else ''}")


def env_for(config, lib_dir=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DCGM_SIM_") and k not in ("DCGM_LIB_PATH", "LD_LIBRARY_PATH")}
    env["DCGM_SIM_CONFIG"] = config
    env["DCGM_SIM_LIB"] = ARGS.sim_lib
    if lib_dir:
        env["LD_LIBRARY_PATH"] = lib_dir
    return env


def sample(name, *args, config=NODE, seconds=None, timeout=60):
    """Runs a sample; with `seconds`, stops it with SIGINT after that long (the long-running
    ones loop until a signal, as upstream wrote them). Returns (exit status, stdout+stderr)."""
    p = subprocess.Popen([os.path.join(ARGS.samples, name), *args], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, cwd=ARGS.scratch,
                         env=env_for(config, ARGS.sim_lib_dir))
    try:
        if seconds is not None:
            try:
                out, _ = p.communicate(timeout=seconds)
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGINT)
                out, _ = p.communicate(timeout=timeout)
        else:
            out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        return 124, out
    return p.returncode, out


def tool(name, *args, config=NODE):
    p = subprocess.run([os.path.join(ARGS.tools, name), "--simulate", *args],
                       capture_output=True, text=True, env=env_for(config), timeout=120)
    if p.returncode not in (0, 2, 3):  # dcgm-health: 2 warn, 3 fail
        raise RuntimeError(f"{name} {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def cpu_set(text):
    """'{0,1,2}' (go-dcgm's bitset) or '0-2,5' (the tools) -> a set of CPU numbers."""
    text = text.strip().strip("{}")
    out = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def query_gpus():
    cols = ["index", "uuid", "name", "serial", "vbios_version", "driver_version", "pci.bus_id",
            "memory.total", "power.limit"]
    out = tool("dcgm-query", "--query-gpu=" + ",".join(cols), "--format=csv,noheader,nounits")
    return {int(r[0]): dict(zip(cols, (c.strip() for c in r)))
            for r in csv.reader(io.StringIO(out)) if r}


def topology_json(config=NODE):
    return {g["gpu"]: g for g in json.loads(tool("dcgm-topology", "--json", config=config))["gpus"]}


def check_device_info(ours, topo):
    rc, out = sample("deviceInfo", "-connect", SOCKET, "-socket", "1")
    blocks = [b for b in out.split("-" * 69) if "GPU" in b]
    gpus = {}
    for b in blocks:
        kv = {}
        for line in b.splitlines():
            k, sep, v = line.partition(":")
            if sep and not line.startswith(" "):
                kv[re.sub(r"\s+", " ", k.strip())] = v.strip()
        if "GPU" in kv:
            gpus[int(kv["GPU"])] = kv
    report("deviceInfo", "exit status 0", rc == 0, "" if rc == 0 else out.strip()[-300:])
    report("deviceInfo", "GPU count", len(gpus) == len(ours), f"{len(gpus)} vs {len(ours)}")
    pairs = [("UUID", "uuid"), ("Model", "name"), ("Serial Number", "serial"),
             ("Vbios", "vbios_version"), ("Driver Version", "driver_version"),
             ("Bus ID", "pci.bus_id"), ("FrameBuffer Memory (MB)", "memory.total")]
    for theirs, mine in pairs:
        diffs = [f"GPU {i}: {gpus.get(i, {}).get(theirs)!r} vs {ours[i][mine]!r}" for i in ours
                 if gpus.get(i, {}).get(theirs) != ours[i][mine]]
        report("deviceInfo", f"{theirs} of every GPU", not diffs, "; ".join(diffs[:3]))
    diffs = [f"GPU {i}" for i in ours if gpus.get(i, {}).get("Power (W)") is None
             or abs(float(gpus[i]["Power (W)"]) - float(ours[i]["power.limit"])) > 0.5]
    report("deviceInfo", "Power (W) = power limit of every GPU", not diffs, ", ".join(diffs))
    diffs = [f"GPU {i}" for i in ours if i not in gpus or i not in topo
             or cpu_set(gpus[i].get("CPUAffinity", "")) != cpu_set(topo[i]["cpu_affinity"])]
    report("deviceInfo", "CPUAffinity of every GPU", not diffs, ", ".join(diffs))
    # Upstream's sample prints the GPU's own bus id on each of its P2P lines (it fills every
    # link with the source GPU's BusID), so only the peers and link types are compared.
    diffs = []
    for i, g in topo.items():
        want = {p["gpu"]: f"NV{p['nvlinks']}" for p in g["peers"] if p.get("nvlinks")}
        block = next((b for b in blocks if re.search(rf"^GPU\s+: {i}$", b, re.M)), "")
        got = {int(m[1]): m[2] for m in re.finditer(r"^\s+GPU(\d+) - \(BusID\)\S+ - (\S+)", block, re.M)}
        if got != want:
            diffs.append(f"GPU {i}: {got} vs {want}")
    report("deviceInfo", "P2P links of every GPU", not diffs, "; ".join(diffs[:2]))


def check_topology(topo):
    rc, out = sample("topology")
    report("topology", "exit status 0", rc == 0, "" if rc == 0 else out.strip()[-300:])
    rows = {int(m[1]): m[2] for m in re.finditer(r"^GPU(\d+)(.*)$", out, re.M)}
    diffs = []
    n = len(topo)
    for i, g in topo.items():
        # `%5s` cells, then the affinity set with no space before it: `   X NV18 NV12{0,1}`.
        cells_text, _, aff = rows.get(i, "").partition("{")
        cells = cells_text.split()
        want = ["X" if j == i else "" for j in range(n)]
        for p in g["peers"]:
            want[p["gpu"]] = f"NV{p['nvlinks']}" if p.get("nvlinks") else p["pci"]
        if cells != want or cpu_set(aff) != cpu_set(g["cpu_affinity"]):
            diffs.append(f"GPU {i}: {cells} {aff[:20]} vs {want} {g['cpu_affinity']}")
    report("topology", "matrix and CPU affinity", bool(rows) and not diffs,
           "; ".join(diffs[:2]) or ("" if rows else "no rows"))


def check_dmon(ours):
    rc, out = sample("dmon", seconds=3.5)
    report("dmon", "stopped by SIGINT, exit status 0", rc == 0, "" if rc == 0 else out.strip()[-300:])
    theirs = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 9 and f[0].isdigit():
            theirs.setdefault(int(f[0]), []).append([int(x) for x in f])
    mine = {}
    for r in csv.DictReader(io.StringIO(tool("dcgm-dmon", "-c", "3", "-d", "1000", "--csv"))):
        if r["entity_group"] == "GPU":
            mine.setdefault(int(r["entity_id"]), []).append(r)
    report("dmon", "the GPUs listed", sorted(theirs) == sorted(mine) == sorted(ours),
           f"{sorted(theirs)} vs {sorted(mine)}")
    diffs = []
    for i in ours:
        if not theirs.get(i) or not mine.get(i):
            continue
        limit = float(ours[i]["power.limit"])
        pw = sum(r[1] for r in theirs[i]) / len(theirs[i])
        tp = sum(r[2] for r in theirs[i]) / len(theirs[i])
        mpw = sum(float(r["power_usage"]) for r in mine[i]) / len(mine[i])
        mtp = sum(float(r["gpu_temp"]) for r in mine[i]) / len(mine[i])
        if not (0 < pw <= limit * 1.1 and 20 <= tp <= 100):
            diffs.append(f"GPU {i} out of range: {pw:.0f} W, {tp:.0f} C")
        # Both read the same simulated GPU a few seconds apart: the workloads move a few
        # percent from second to second.
        if abs(pw - mpw) > max(0.1 * mpw, 15) or abs(tp - mtp) > 5:
            diffs.append(f"GPU {i}: {pw:.0f} W {tp:.0f} C vs {mpw:.0f} W {mtp:.0f} C")
    report("dmon", "power and temperature of every GPU", not diffs, "; ".join(diffs[:3]))


def check_process_info(ours):
    out = tool("dcgm-query", "--query-compute-apps=gpu_uuid,pid", "--format=csv,noheader")
    by_uuid = {v["uuid"]: i for i, v in ours.items()}
    pids = {}
    for r in csv.reader(io.StringIO(out)):
        if r:
            pids.setdefault(int(r[1]), set()).add(by_uuid[r[0].strip()])
    for pid, gpus in sorted(pids.items()):
        rc, out = sample("processInfo", "-pid", str(pid), timeout=60)
        got = {int(m[1]) for m in re.finditer(r"^GPU ID\s+: (\d+)", out, re.M)}
        got_pids = {int(m[1]) for m in re.finditer(r"^PID\s+: (\d+)", out, re.M)}
        ok = rc == 0 and got == gpus and got_pids == {pid}
        report("processInfo", f"pid {pid}: the GPUs it runs on", ok,
               f"{sorted(got)} vs {sorted(gpus)}" + ("" if rc == 0 else f", exit {rc}"))


def last_health_round(out, n):
    statuses = re.findall(r"^GPU\s+: (\d+)\nStatus\s+: (\w+)", out, re.M)
    last = statuses[-n:] if len(statuses) >= n else []
    return {int(g): s for g, s in last}


def check_health(config, label, seconds):
    n = len(topology_json(config))
    rc, out = sample("health", config=config, seconds=seconds)
    theirs = last_health_round(out, n)
    checks = [json.loads(line) for line in tool(
        "dcgm-health", "-c", str(int(seconds) + 1), "-d", "1000", "--json", config=config
    ).splitlines() if line.startswith("{")]
    word = {"PASS": "Healthy", "WARN": "Warning", "FAIL": "Failure"}
    mine = {int(k.split()[1]): word.get(v, v) for k, v in checks[-1]["results"].items()} if checks else {}
    report("health", f"status of every GPU, {label}", rc == 0 and theirs == mine and bool(mine),
           f"{theirs} vs {mine}" if theirs != mine else
           ", ".join(f"GPU {g} {s}" for g, s in sorted(mine.items()) if s != "Healthy") or "all Healthy")


def check_policy():
    rc, out = sample("policy", config="faults", seconds=5)
    theirs = sorted(set(
        ("XID", int(m[2])) if m[1] == "XID Error" else ("DBE", None)
        for m in re.finditer(r"PolicyViolation\s+: (.+?)\nTimestamp.*\nData\s+: \{(\d+)?", out)))
    mine = sorted(set(
        (e["condition"], e["detail"].get("xid")) for e in map(json.loads, tool(
            "dcgm-policy", "--xid", "--dbe", "-t", "5", "--json", config="faults").splitlines())))
    report("policy", "violations of the faults preset (XID, DBE)", theirs == mine and bool(mine),
           f"{theirs} vs {mine}")


def check_hostengine_status():
    rc, out = sample("hostengineStatus")
    m = re.search(r"Memory\s+: (\d+) KB\nCPU\s+: ([\d.]+) %", out)
    report("hostengineStatus", "memory and CPU of the engine", rc == 0 and m is not None
           and int(m[1]) > 0, out.strip().replace("\n", "; ")[:120])


def check_diag():
    rc, out = sample("diag", timeout=120)
    # At go-dcgm v1.4601.1 and v1.4611.0 the sample's template reads a field (.PerGpu) that
    # dcgm.DiagResults no longer has: after the software results it stops with "can't evaluate
    # field PerGpu", on any library whose diagnostic runs. On the real 4.6.0 beside the checkout, built
    # without nvvs, it stops earlier: DCGM_ST_NVVS_BINARY_NOT_FOUND.
    if "can't evaluate field PerGpu" in out:
        ran = len(re.findall(r"^\s+\S+\s+pass", out, re.M))
        report("diag", "software results", None,
               f"upstream's sample stops on its own template error (.PerGpu) after {ran} results")
    else:
        report("diag", "exit status 0", rc == 0, out.strip()[-200:])


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", required=True, help="folder of the built samples")
    ap.add_argument("--tools", required=True, help="folder of dcgm-query, dcgm-dmon, ...")
    ap.add_argument("--sim-lib-dir", required=True, help="folder with libdcgm.so.4 -> dcgm-sim")
    ap.add_argument("--src", required=True, help="go-dcgm's scratch copy (samples' cwd)")
    ARGS = ap.parse_args()
    for k in ("samples", "tools", "sim_lib_dir", "src"):
        setattr(ARGS, k, os.path.abspath(getattr(ARGS, k)))
    ARGS.sim_lib = os.path.realpath(os.path.join(ARGS.sim_lib_dir, "libdcgm.so.4"))
    ARGS.scratch = ARGS.src
    started = time.monotonic()
    ours = query_gpus()
    topo = topology_json()
    steps = [
        ("deviceInfo", lambda: check_device_info(ours, topo)),
        ("topology", lambda: check_topology(topo)),
        ("dmon", lambda: check_dmon(ours)),
        ("processInfo", lambda: check_process_info(ours)),
        ("health", lambda: check_health(NODE, "calm node", 2.5)),
        ("health", lambda: check_health("faults", "faults preset after 5 s", 5.5)),
        ("policy", check_policy),
        ("hostengineStatus", check_hostengine_status),
        ("diag", check_diag),
    ]
    for name, step in steps:
        try:
            step()
        except Exception as e:  # a tool or sample that broke is a difference, with the reason
            report(name, "ran", False, f"{type(e).__name__}: {e}")
    print(f"# samples compared in {time.monotonic() - started:.0f} s")
    print(f"go-samples[sim]: {results['agree']} agree, {results['differ']} differ, "
          f"{results['not compared']} not compared")
    return 1 if results["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
