"""Checks and reports of the fleet end-to-end test (scripts/fleet_e2e.sh), each a subcommand
that exits 0 when its check holds and 1 with the reason on stdout when not:

    webhook FILE EXPECTED firing|resolved
        every expected alert has arrived at the webhook firing (or, later, resolved), with
        its labels; `firing` also fails at once on an alert that is not expected
    webhook-exact FILE EXPECTED T0       the webhook got exactly the expected alerts, nothing else
                                         (each printed with its arrival after T0)
    prom-alerts PROM SECONDS EXPECTED    Prometheus's ALERTS over the last SECONDS fired exactly
                                         the expected alerts
    none-firing PROM FILE                no alert is firing in Prometheus and the webhook got none
    pods PROM EXPECTED_TSV               every GPU's pod, namespace and container labels are the
                                         expected ones (lines `HOSTNAME GPU [POD NS CONTAINER]`,
                                         tab-separated; none where no pod holds the GPU)
    dashboard PROM QUERIES NODES GPUS [LABEL]
                                         every dashboard query returns data for every node, the
                                         host-name label named LABEL (default Hostname, as the
                                         dashboard has it; `hostname` rewrites the queries)
    report PROM PIDS                     scrape duration per target, exporters' CPU and RSS

EXPECTED is a JSON list of {"labels": {...}, "exact": bool, "fires_after": T, "resolves_after":
T}: an alert is the one expected when it has all those labels with those values (and, with
"exact", no other label but alertname); its first firing notification must not arrive before
fires_after, nor its resolved one before resolves_after (seconds since the epoch: when its
condition began, plus the rule's `for:`, and when it cleared).
Only Python's standard library is used.
"""

import json
import os
import sys
import time
import urllib.parse
import urllib.request


def get(prom, path, **params):
    url = f"{prom}{path}?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=10) as r:
        doc = json.load(r)
    if doc.get("status") != "success":
        raise RuntimeError(f"{url}: {doc}")
    return doc["data"]


def notifications(path):
    """Every alert of every webhook notification, in arrival order, each with the
    notification's `received_at`."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                doc = json.loads(line)
                for a in doc.get("alerts", []):
                    out.append(dict(a, received_at=doc["received_at"]))
    return out


def matches(labels, want):
    if any(labels.get(k) != v for k, v in want["labels"].items()):
        return False
    if want.get("exact"):
        return set(labels) == set(want["labels"]) | {"alertname"}
    return True


def host(labels):
    """The host-name label's value: `hostname` (dcgm-exporter since #655, our default) or
    `Hostname` (older releases, `--hostname-label Hostname`); a fleet may have both."""
    return labels.get("hostname") or labels.get("Hostname", "")


def identity(labels):
    return (labels.get("alertname", ""), host(labels), labels.get("gpu", ""), labels.get("UUID", ""))


def show(labels):
    return json.dumps(labels, sort_keys=True)


def cmd_webhook(path, expected, state):
    expected = json.load(open(expected))
    alerts = notifications(path)
    if state == "firing":
        for a in alerts:
            if not any(matches(a["labels"], w) for w in expected):
                print("an alert that is not expected arrived:", show(a["labels"]))
                return 1
    missing = []
    for w in expected:
        seen = [a for a in alerts if matches(a["labels"], w)]
        firing = [i for i, a in enumerate(seen) if a["status"] == "firing"]
        resolved = [a for a in seen[firing[0] :] if a["status"] == "resolved"] if firing else []
        early = []
        if firing and seen[firing[0]]["received_at"] < w["fires_after"]:
            early.append(f"fired {w['fires_after'] - seen[firing[0]]['received_at']:.1f} s early")
        if resolved and resolved[0]["received_at"] < w["resolves_after"]:
            early.append(f"resolved {w['resolves_after'] - resolved[0]['received_at']:.1f} s "
                         "before its condition cleared")
        if early:
            print(w["labels"]["alertname"], "on", host(w["labels"]), ", ".join(early))
            return 1
        if not firing or (state == "resolved" and not resolved):
            missing.append(show(w["labels"]))
    if missing:
        print(f"not {state} yet:", "; ".join(missing))
        return 1
    return 0


def cmd_webhook_exact(path, expected, t0):
    expected = json.load(open(expected))
    alerts = notifications(path)
    bad = [a["labels"] for a in alerts if not any(matches(a["labels"], w) for w in expected)]
    got = {identity(a["labels"]) for a in alerts}
    if bad or len(got) != len(expected):
        print("unexpected:", [show(b) for b in bad], "distinct:", sorted(got))
        return 1
    for a in alerts:
        print(f"  {a['status']:8} +{a['received_at'] - float(t0):5.1f} s {show(a['labels'])}")
    return 0


def cmd_prom_alerts(prom, seconds, expected):
    expected = json.load(open(expected))
    q = f'group by (alertname, hostname, Hostname, gpu, UUID) (max_over_time(ALERTS{{alertstate="firing"}}[{int(seconds)}s]))'
    got = {identity(s["metric"]) for s in get(prom, "/api/v1/query", query=q)["result"]}
    want = {identity(dict(w["labels"])) for w in expected}
    if got != want:
        print("fired in Prometheus:", sorted(got), "expected:", sorted(want))
        return 1
    return 0


def cmd_none_firing(prom, path):
    firing = get(prom, "/api/v1/query", query='ALERTS{alertstate="firing"}')["result"]
    alerts = notifications(path)
    if firing or alerts:
        print("firing:", [show(s["metric"]) for s in firing], "webhook:", len(alerts))
        return 1
    return 0


def cmd_pods(prom, expected):
    """Every (host name, gpu) of DCGM_FI_DEV_GPU_TEMP (a MIG GPU's instances included) has
    exactly the expected pod, namespace and container, or none of them."""
    want = {}
    for line in open(expected, encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 2:
            want[(f[0], f[1])] = tuple(f[2:5]) if len(f) >= 5 and f[2] else ()
    q = "group by (hostname, Hostname, gpu, pod, namespace, container) (DCGM_FI_DEV_GPU_TEMP)"
    got = {}
    for s in get(prom, "/api/v1/query", query=q)["result"]:
        m = s["metric"]
        key = (host(m), m.get("gpu", ""))
        labels = tuple(m[k] for k in ("pod", "namespace", "container") if k in m)
        got.setdefault(key, set()).add(labels)
    bad = [f"{k}: {sorted(got.get(k, []))} (want {v or 'no pod'})"
           for k, v in sorted(want.items()) if got.get(k) != {v}]
    extra = sorted(set(got) - set(want))
    held = sum(1 for v in want.values() if v)
    print(f"{len(got)} GPUs answered, {held} held by pods; wrong: {bad[:4]}; not expected: {extra[:4]}")
    return 1 if bad or extra else 0


def cmd_dashboard(prom, queries, nodes, gpus, label="Hostname"):
    """QUERIES: lines `KIND<TAB>EXPR`, KIND `range` (a time-series panel: query_range over the
    last 30 s) or `instant`. The Hostname and gpu variables come from the dashboard's own
    label_values queries and are set to All, as a regex of every value. A query whose answer
    keeps the Hostname label must have, for every node, a series with data for each GPU (when
    it keeps gpu); one that aggregates the nodes away is asked once per node, $Hostname set to
    that node, and must return data each time. With LABEL `hostname` every `Hostname` of the
    queries and variables is read as `hostname` (the dashboard after dcgm-exporter's rename)."""
    nodes = set(nodes.split(","))
    gpus = set(gpus.split(","))
    hosts = set(get(prom, f"/api/v1/label/{label}/values", **{"match[]": "DCGM_FI_DEV_FB_FREE"}))
    ok = hosts == nodes
    print(f"{'ok  ' if ok else 'FAIL'} dashboard variable label_values(DCGM_FI_DEV_FB_FREE, {label}): "
          f"{len(hosts)} values")
    if not ok:
        return 1
    all_hosts = "(" + "|".join(sorted(hosts)) + ")"
    match = f'DCGM_FI_DEV_FB_FREE{{{label}=~"{all_hosts}"}}'
    gpu_values = set(get(prom, "/api/v1/label/gpu/values", **{"match[]": match}))
    ok = gpu_values == gpus
    print(f"{'ok  ' if ok else 'FAIL'} dashboard variable label_values(DCGM_FI_DEV_FB_FREE{{{label}=~\"${label}\"}}, gpu): "
          f"{sorted(gpu_values, key=int)}")
    if not ok:
        return 1
    all_gpus = "(" + "|".join(sorted(gpu_values, key=int)) + ")"
    now = time.time()

    def ask(kind, q):
        if kind == "instant":
            r = get(prom, "/api/v1/query", query=q, time=now)["result"]
            return [s["metric"] for s in r]
        r = get(prom, "/api/v1/query_range", query=q, start=now - 30, end=now, step=5)["result"]
        return [s["metric"] for s in r if s["values"]]

    failed = 0
    for line in open(queries, encoding="utf-8"):
        if not line.strip():
            continue
        kind, expr = line.rstrip("\n").split("\t", 1)
        expr = expr.replace("Hostname", label)
        q = expr.replace("$gpu", all_gpus)
        series = ask(kind, q.replace(f"${label}", all_hosts))
        if series and all(label in m for m in series):
            per = {}
            for m in series:
                per.setdefault(m[label], set()).add(m.get("gpu"))
            keeps_gpu = all("gpu" in m for m in series)
            lacking = sorted(n for n in nodes if n not in per or (keeps_gpu and per[n] != gpus))
            ok = not lacking and set(per) == nodes
            why = f"nodes lacking data: {lacking}; {label} values answered: {len(per)}"
            what = f"{len(series)} series, {len(per)} nodes"
        else:
            empty = [n for n in sorted(nodes) if not ask(kind, q.replace(f"${label}", n))]
            ok = bool(series) and not empty
            why = f"no data for {empty}" if series else "no data"
            what = f"asked per node: {len(nodes) - len(empty)} of {len(nodes)} answered"
        print(f"{'ok  ' if ok else 'FAIL'} dashboard [{kind}] {expr}: " + (what if ok else why))
        failed += not ok
    return 1 if failed else 0


def proc_cpu_rss(pid):
    """(utime + stime in seconds, VmRSS in MiB) of a live process, or None."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
        status = open(f"/proc/{pid}/status").read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    ticks = int(fields[11]) + int(fields[12])
    rss_kb = next(int(l.split()[1]) for l in status.splitlines() if l.startswith("VmRSS:"))
    return ticks / os.sysconf("SC_CLK_TCK"), rss_kb / 1024


def cmd_report(prom, pids):
    """PIDS: lines `NAME PID INSTANCE STARTED_EPOCH`. Prints numbers, asserts nothing."""
    rows = [l.split() for l in open(pids) if l.strip()]
    avg = {
        s["metric"]["instance"]: float(s["value"][1])
        for s in get(prom, "/api/v1/query", query="avg_over_time(scrape_duration_seconds[1m])")["result"]
    }
    mx = {
        s["metric"]["instance"]: float(s["value"][1])
        for s in get(prom, "/api/v1/query", query="max_over_time(scrape_duration_seconds[1m])")["result"]
    }
    now = time.time()
    print(f"# {'target':<15} {'instance':<16} {'scrape avg':>10} {'scrape max':>10} {'CPU s':>7} {'CPU %':>6} {'RSS MiB':>8}")
    tot_cpu = tot_rss = 0.0
    n = 0
    for name, pid, inst, started in rows:
        m = proc_cpu_rss(pid)
        cpu, rss = m if m else (float("nan"), float("nan"))
        life = max(now - float(started), 1e-9)
        if inst == "-":
            a = x = "-"
        else:
            a = f"{avg.get(inst, float('nan')) * 1000:.2f} ms"
            x = f"{mx.get(inst, float('nan')) * 1000:.2f} ms"
            tot_cpu += cpu
            tot_rss += rss
            n += 1
        print(f"# {name:<15} {inst:<16} {a:>10} {x:>10} {cpu:7.2f} {100 * cpu / life:6.2f} {rss:8.1f}")
    if n:
        print(f"# exporters: {n}, total CPU {tot_cpu:.2f} s, total RSS {tot_rss:.1f} MiB, "
              f"mean RSS {tot_rss / n:.1f} MiB")
    return 0


def main(argv):
    cmds = {
        "webhook": cmd_webhook,
        "webhook-exact": cmd_webhook_exact,
        "prom-alerts": cmd_prom_alerts,
        "none-firing": cmd_none_firing,
        "pods": cmd_pods,
        "dashboard": cmd_dashboard,
        "report": cmd_report,
    }
    try:
        return cmds[argv[1]](*argv[2:])
    except (OSError, RuntimeError, ValueError, KeyError) as e:
        print(f"{argv[1]}: {type(e).__name__}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
