#!/usr/bin/env bash
# A fleet, end to end, on real components: 24 dcgm-exporter processes (dcgm-exporter/), each
# its own simulated node (dcgm-sim: own seed, hostname and GPU UUIDs through a DCGM_SIM_CONFIG
# file, 8 GPUs, GPU 7 in MIG mode on every sixth node, HPC jobs on its GPUs through
# --hpc-job-mapping-dir, Kubernetes pods on six of them through --kubernetes and a
# pod-resources socket of its own, served by a fake kubelet, dcgm-exporter/examples/
# fake_kubelet.rs, one process for every node), on distinct loopback ports, scraped every
# second by ONE real Prometheus loaded with the shipped rules (dcgm-exporter/etc/*rules*.yml, in a test copy whose
# `for:` durations are minutes read as seconds), alerting a real Alertmanager (Debian's
# prometheus-alertmanager) that routes to a webhook receiver run here
# (scripts/fleet/webhook_receiver.py). The simulator scripts three incidents at one moment on
# three nodes: XID 79 on one GPU, a double-bit ECC error on another node's GPU (cleared 15 s
# later, as by a GPU reset) and 90 °C on a third node's GPU for 25 s. Checked:
#   1. nothing fires before the incidents;
#   2. every GPU's series carry the pod, namespace and container its node's kubelet names
#      (none on the GPUs no pod holds);
#      The fleet is mid-upgrade: nodes 0-11 keep the old host-name label (`--hostname-label
#      Hostname`), nodes 12-23 have dcgm-exporter's new default, `hostname`; the rules and the
#      checks must work with both.
#   3. exactly those three alerts reach the webhook, with the node's host-name label (Hostname
#      on the XID and DBE nodes, hostname on the hot one), gpu, UUID (the simulator's),
#      the pod, namespace and container holding the GPU, and the node's hpc_job label where the
#      rule keeps every label of the series (not GpuXidError's aggregation), the temperature
#      not before its for: has passed, and each is followed by a "resolved" notification once
#      its condition clears, not before (the XID when it leaves the exporter's 15 s XID
#      window); Prometheus's ALERTS fired those three and no other;
#   4. every PromQL query of Grafana dashboard 12239 (NVIDIA's dcgm-exporter dashboard) returns
#      data for the 12 nodes labelled Hostname as the dashboard has it, and for the 12 labelled
#      hostname with the dashboard's Hostname renamed, through Prometheus's HTTP API.
# Then it prints, per target, Prometheus's scrape duration and the exporter's CPU (utime +
# stime) and RSS, and the fake kubelet's: numbers, not asserted.
# Needs target/debug/dcgm-exporter, target/debug/examples/fake_kubelet and libdcgm_sim.so built
# (scripts/test.sh's first tier, or `cargo build -p dcgm-exporter --bins --example fake_kubelet
# && cargo build -p dcgm-sim`). Installs Debian's prometheus and
# prometheus-alertmanager packages when missing (as root). Prints `N passed, N failed`; exits
# non-zero on any failure. About a minute once built.
set -u -o pipefail

cd "$(dirname "$0")/.."
# pass/fail/check, wait_for/expect, free_ports, need_debian_packages; TMP and PIDS, cleaned up
# at exit.
. scripts/lib/e2e.sh
e2e_start "fleet e2e" fleet-e2e
NODES=24
CHECKS="python3 $ROOT/scripts/fleet/fleet_checks.py"

# --- prerequisites ---------------------------------------------------------------------------
need_debian_packages prometheus=prometheus prometheus=promtool prometheus-alertmanager=prometheus-alertmanager
need_tools prometheus promtool prometheus-alertmanager curl python3
echo "# $(prometheus --version 2>&1 | head -1)"
echo "# $(prometheus-alertmanager --version 2>&1 | head -1)"

TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/debug/dcgm-exporter
KUBELET=$TARGET/debug/examples/fake_kubelet
export DCGM_SIM_LIB=$TARGET/debug/libdcgm_sim.so
if [ ! -x "$BIN" ] || [ ! -x "$KUBELET" ] || [ ! -f "$DCGM_SIM_LIB" ]; then
    fail "the exporter, its fake_kubelet example and dcgm-sim are built (run: cargo build -p dcgm-exporter --bins --example fake_kubelet && cargo build -p dcgm-sim)"
    exit 1
fi
unset DCGM_SIM_CONFIG DCGM_SIM_FAULTS DCGM_LIB_PATH NVIDIA_RESOURCE_NAMES KUBERNETES_ENABLE_DRA
for v in $(env | grep -o '^DCGM_EXPORTER_[A-Z_]*\|^DCGM_HPC[A-Z_]*\|^DCGM_POD_RESOURCES[A-Z_]*'); do unset "$v"; done

# --- the rules: a test copy of each shipped rules file, `for: Nm` read as N seconds ------------
# only_for_differs SHIPPED COPY: the lines other than `for:` are the same, the copy has as many
# `for:` lines, and none of them is in minutes any more.
only_for_differs() {
    diff <(grep -v '^ *for:' "$1") <(grep -v '^ *for:' "$2") &&
        [ "$(grep -c '^ *for:' "$1")" = "$(grep -c '^ *for:' "$2")" ] &&
        ! grep -q '^ *for: *[0-9]*m *$' "$2"
}
RULE_FILES=()
for f in dcgm-exporter/etc/*rules*.yml; do
    case $f in *.test.yml) continue ;; esac
    copy=$TMP/$(basename "$f")
    sed -E 's/^([[:space:]]*for:[[:space:]]*)([0-9]+)m[[:space:]]*$/\1\2s/' "$f" >"$copy"
    RULE_FILES+=("$copy")
    check "the test copy of $(basename "$f") differs from it only in its for: durations (minutes read as seconds)" \
        only_for_differs "$f" "$copy"
done
quiet() { "$@" >"$TMP/quiet.out" 2>&1 || { tail -5 "$TMP/quiet.out"; return 1; }; }
for f in "${RULE_FILES[@]}"; do
    check "promtool check rules accepts the test copy of $(basename "$f")" quiet promtool check rules "$f"
done

# --- ports: distinct free loopback ports, held together while chosen ---------------------------
mapfile -t PORTS < <(free_ports $((NODES + 3)))
PORT_PROM=${PORTS[NODES]}
PORT_AM=${PORTS[NODES + 1]}
PORT_HOOK=${PORTS[NODES + 2]}
PROM=http://127.0.0.1:$PORT_PROM
AM=http://127.0.0.1:$PORT_AM
HOOK_FILE=$TMP/webhook.jsonl

# --- the webhook receiver, Alertmanager, Prometheus --------------------------------------------
python3 scripts/fleet/webhook_receiver.py "$PORT_HOOK" "$HOOK_FILE" >"$TMP/webhook.log" 2>&1 &
PIDS+=($!)

# One notification per alert (group_by '...'), sent within a second or two, resolved ones too.
cat >"$TMP/alertmanager.yml" <<EOF
route:
  receiver: fleet-webhook
  group_by: ['...']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: fleet-webhook
    webhook_configs:
      - url: http://127.0.0.1:$PORT_HOOK/alerts
        send_resolved: true
EOF
prometheus-alertmanager --config.file="$TMP/alertmanager.yml" --storage.path="$TMP/am-data" \
    --web.listen-address="127.0.0.1:$PORT_AM" --cluster.listen-address= --log.level=warn \
    >"$TMP/alertmanager.log" 2>&1 &
PIDS+=($!)
AM_PID=$!

# The nodes: node-NN, seed 1000+NN, 8 GPUs with UUIDs the test knows, at 85 % load (so that no
# GPU stays above 95 % busy), GPU 7 in MIG mode on every sixth node, one training job.
node_name() { printf 'fleet-node-%02d' "$1"; }
# host_label N: node N's host-name label (the first half of the fleet not upgraded yet).
host_label() { if [ "$1" -lt $((NODES / 2)) ]; then echo Hostname; else echo hostname; fi; }
gpu_uuid() { printf 'GPU-f1ee7%03x-%04x-4000-8000-%012x' "$1" "$2" $((1000 + $1)); }
XID_NODE=3 XID_GPU=5
DBE_NODE=11 DBE_GPU=2
HOT_NODE=17 HOT_GPU=6
MODEL="NVIDIA H100 80GB HBM3"
XID_WINDOW_S=15 # the exporter's -x: an XID counts for that long
DBE_FOR_S=15    # the ECC error clears (GPU reset) after that long
HOT_FOR_S=25    # the GPU stays at 90 °C that long
# GpuTemperatureHigh's for: in the test copy, in seconds.
TEMP_RULE_FOR_S=$(awk '/alert: GpuTemperatureHigh/ {on = 1} on && /for:/ {sub(/.*for: */, ""); sub(/s.*/, ""); print; exit}' "$TMP/alert-rules.yml")
case $TEMP_RULE_FOR_S in
'' | *[!0-9]*)
    fail "GpuTemperatureHigh has a for: in seconds in the test copy (found '$TEMP_RULE_FOR_S')"
    exit 1
    ;;
esac
LEAD_S=${FLEET_LEAD_S:-30}
INCIDENT_AT=$(($(date +%s%3N) + LEAD_S * 1000)) # ms since the epoch, the same on every node

node_config() { # node_config N: the node's dcgm-sim config (TOML)
    local n=$1 g
    local at=$((INCIDENT_AT - $(date +%s%3N)))
    printf 'seed = %d\nhostname = "%s"\nnvswitches = 0\ncpus = []\nhostengines = []\n' \
        $((1000 + n)) "$(node_name "$n")"
    for g in 0 1 2 3 4 5 6 7; do
        printf '\n[[gpus]]\nmodel = "%s"\nuuid = "%s"\npci_bus_id = "00000000:%02X:00.0"\nload = 0.85\n' \
            "$MODEL" "$(gpu_uuid "$n" "$g")" $((0x18 + 0x10 * g))
        if [ "$g" = 7 ] && [ $((n % 6)) = 0 ]; then
            printf '[[gpus.mig]]\nprofile = "3g.40gb"\nslices = 3\ncompute_instances = 1\n'
            printf '[[gpus.mig]]\nprofile = "2g.20gb"\nslices = 2\ncompute_instances = 1\n'
        fi
    done
    printf '\n[[processes]]\npid = 4242\nname = "python3 train.py"\nuser = "mlops"\n'
    printf 'gpus = [0, 1, 2, 3, 4, 5, 6, 7]\nmemory_mib = 60000\n'
    case $n in
    "$XID_NODE") printf '\n[[events]]\nat_ms = %d\ngpu = %d\nkind = "xid"\nvalue = 79\n' "$at" "$XID_GPU" ;;
    "$DBE_NODE") printf '\n[[events]]\nat_ms = %d\ngpu = %d\nkind = "dbe"\nvalue = 1\nduration_ms = %d\n' "$at" "$DBE_GPU" $((DBE_FOR_S * 1000)) ;;
    "$HOT_NODE") printf '\n[[events]]\nat_ms = %d\ngpu = %d\nkind = "thermal"\nvalue = 90\nduration_ms = %d\n' "$at" "$HOT_GPU" $((HOT_FOR_S * 1000)) ;;
    esac
}
job_of() { printf 'job-%02d-%s' "$1" "$([ "$2" -lt 4 ] && echo a || echo b)"; }
# pod_of N G: "POD NAMESPACE CONTAINER" of the container holding node N's GPU G, nothing where
# none does: a training pod with two containers on GPUs 0-3, an inference server on GPU 5, a
# notebook on GPU 6 (so the XID, DBE and hot GPUs are each held); GPUs 4 and 7 are free.
pod_of() {
    local n
    n=$(printf '%02d' "$1")
    case $2 in
    0 | 1) echo "train-$n ml-training trainer" ;;
    2 | 3) echo "train-$n ml-training evaluator" ;;
    5) echo "infer-$n serving server" ;;
    6) echo "notebook-$n research jupyter" ;;
    esac
}
# gpu_id_type N: how node N's kubelet names whole GPUs (--kubernetes-gpu-id-type): by index
# (nvidiaG) on every fourth node (the XID and DBE nodes among them), by UUID elsewhere.
gpu_id_type() { [ $(($1 % 4)) = 3 ] && echo device-name || echo uid; }
kubelet_device() { # kubelet_device N G: GPU G of node N as its kubelet names it
    if [ "$(gpu_id_type "$1")" = device-name ]; then echo "nvidia$2"; else gpu_uuid "$1" "$2"; fi
}
# kubelet_pods N: node N's section of the fake kubelet's pods file (YAML).
kubelet_pods() {
    local n=$1 g p ns c
    printf '  - socket: %s\n    pods:\n' "$TMP/$(node_name "$n")/kubelet.sock"
    for g in 0 1 2 3 4 5 6 7; do
        read -r p ns c < <(pod_of "$n" "$g")
        [ -n "${p:-}" ] || continue
        printf '      - {pod: %s, namespace: %s, container: %s, devices: [%s]}\n' \
            "$p" "$ns" "$c" "$(kubelet_device "$n" "$g")"
    done
}

: >"$TMP/pids"
# The fake kubelet: one process, a pod-resources socket per node, up before the exporters (whose
# first collection waits for their first List).
echo nodes: >"$TMP/pods.yaml"
for n in $(seq 0 $((NODES - 1))); do
    mkdir -p "$TMP/$(node_name "$n")/jobs"
    kubelet_pods "$n" >>"$TMP/pods.yaml"
done
"$KUBELET" "$TMP/pods.yaml" >"$TMP/kubelet.log" 2>&1 &
PIDS+=($!)
echo "fake-kubelet $! - $(date +%s)" >>"$TMP/pids"
if wait_for 20 grep -qx "listening on $NODES sockets" "$TMP/kubelet.log"; then
    pass "the fake kubelet serves the $NODES nodes' pod-resources sockets"
else
    fail "the fake kubelet serves the $NODES nodes' pod-resources sockets: $(tail -3 "$TMP/kubelet.log")"
    exit 1
fi

NODE_NAMES=()
TARGETS=""
for n in $(seq 0 $((NODES - 1))); do
    name=$(node_name "$n")
    NODE_NAMES+=("$name")
    for g in 0 1 2 3 4 5 6 7; do job_of "$n" "$g" >"$TMP/$name/jobs/$g"; done
    node_config "$n" >"$TMP/$name/node.toml"
    NODE_NAME=$name DCGM_SIM_CONFIG=$TMP/$name/node.toml "$BIN" --simulate \
        -a "127.0.0.1:${PORTS[n]}" -c 1000 -x $((XID_WINDOW_S * 1000)) --hpc-job-mapping-dir "$TMP/$name/jobs" \
        --kubernetes --kubernetes-gpu-id-type "$(gpu_id_type "$n")" \
        --pod-resources-kubelet-socket "$TMP/$name/kubelet.sock" --hostname-label "$(host_label "$n")" \
        >"$TMP/$name/exporter.log" 2>&1 &
    PIDS+=($!)
    echo "$name $! 127.0.0.1:${PORTS[n]} $(date +%s)" >>"$TMP/pids"
    TARGETS="$TARGETS'127.0.0.1:${PORTS[n]}', "
done

RULES_YAML=$(printf '  - %s\n' "${RULE_FILES[@]}")
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
$RULES_YAML
alerting:
  alertmanagers:
    - static_configs: [{targets: ['127.0.0.1:$PORT_AM']}]
scrape_configs:
  - job_name: dcgm-fleet
    static_configs: [{targets: [${TARGETS%, }]}]
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom-data" \
    --web.listen-address="127.0.0.1:$PORT_PROM" --log.level=warn >"$TMP/prometheus.log" 2>&1 &
PIDS+=($!)
echo "prometheus $! - $(date +%s)" >>"$TMP/pids"
echo "alertmanager $AM_PID - $(date +%s)" >>"$TMP/pids"

# --- the fleet comes up ----------------------------------------------------------------------
expect "the webhook receiver answers" 20 curl -sf "http://127.0.0.1:$PORT_HOOK/"
expect "alertmanager is ready" 30 curl -sf "$AM/-/ready"
expect "prometheus is ready" 30 curl -sf "$PROM/-/ready"
up_count_is() { # up_count_is N
    curl -sf -G "$PROM/api/v1/query" --data-urlencode 'query=count(up == 1)' |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; n=int(r[0]["value"][1]) if r else 0; print("up:", n); sys.exit(n != int(sys.argv[1]))' "$1"
}
expect "prometheus scrapes all $NODES exporters (up == 1)" 60 up_count_is "$NODES"
gpu_series_are() { # every node's 8 GPUs (GPU 7 as its MIG instances on the MIG nodes)
    curl -sf -G "$PROM/api/v1/query" --data-urlencode 'query=count(count by (hostname, Hostname, gpu) (DCGM_FI_DEV_GPU_TEMP))' |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; n=int(r[0]["value"][1]) if r else 0; print("host/gpu pairs:", n); sys.exit(n != int(sys.argv[1]))' "$1"
}
expect "DCGM_FI_DEV_GPU_TEMP for all $((NODES * 8)) GPUs of the fleet" 30 gpu_series_are $((NODES * 8))
rules_ok() {
    curl -sf "$PROM/api/v1/rules" | python3 -c '
import json, sys
rules = [r for g in json.load(sys.stdin)["data"]["groups"] for r in g["rules"]]
bad = [r["name"] for r in rules if r["health"] != "ok" or r["lastEvaluation"][:4] == "0001"]
print(len(rules), "rules, not evaluated or unhealthy:", bad)
sys.exit(0 if rules and not bad else 1)'
}
expect "the shipped rules load and evaluate without error" 20 rules_ok
check "alertmanager knows the webhook receiver" sh -c "curl -sf '$AM/api/v2/receivers' | grep -q fleet-webhook"

# --- 1. calm before the incidents --------------------------------------------------------------
if [ "$(date +%s%3N)" -lt "$INCIDENT_AT" ]; then
    check "no alert fires before the incidents, none reaches the webhook" \
        $CHECKS none-firing "$PROM" "$HOOK_FILE"
    echo "# incidents in $(((INCIDENT_AT - $(date +%s%3N)) / 1000)) s (FLEET_LEAD_S=$LEAD_S after start)"
else
    fail "the fleet came up before its incidents (raise FLEET_LEAD_S, now $LEAD_S s)"
fi

# --- 2. the pods: every GPU's pod, namespace and container as its node's kubelet lists them -----
for n in $(seq 0 $((NODES - 1))); do
    for g in 0 1 2 3 4 5 6 7; do
        printf '%s\t%s\t%s\n' "$(node_name "$n")" "$g" "$(pod_of "$n" "$g" | tr ' ' '\t')"
    done
done >"$TMP/pods.tsv"
expect "every GPU of the $NODES nodes has the pod, namespace and container its kubelet gives it ($(grep -c $'\t.*\t.' "$TMP/pods.tsv") held, by UUID and by index), the others none" \
    20 $CHECKS pods "$PROM" "$TMP/pods.tsv"

# --- 3. the three alerts fire, arrive with their labels, and resolve -------------------------------
# Each alert's earliest moments: firing not before its condition began (plus the rule's for:
# for the temperature), resolved not before the condition cleared (the XID when it left the
# exporter's window, the DBE and the heat when their durations ended).
python3 - "$TMP/expected.json" <<EOF
import json, sys
t = $INCIDENT_AT / 1000
def pod(spec):
    p, ns, c = spec.split()
    return {"pod": p, "namespace": ns, "container": c}
json.dump([
    {"labels": {"alertname": "GpuXidError", "severity": "critical", "$(host_label $XID_NODE)": "$(node_name $XID_NODE)",
                "gpu": "$XID_GPU", "UUID": "$(gpu_uuid $XID_NODE $XID_GPU)", "modelName": "$MODEL", "xid": "79",
                **pod("$(pod_of $XID_NODE $XID_GPU)")},
     "exact": True, "fires_after": t, "resolves_after": t + $XID_WINDOW_S},
    {"labels": {"alertname": "GpuDoubleBitEccError", "severity": "critical", "$(host_label $DBE_NODE)": "$(node_name $DBE_NODE)",
                "gpu": "$DBE_GPU", "UUID": "$(gpu_uuid $DBE_NODE $DBE_GPU)", "hpc_job": "$(job_of $DBE_NODE $DBE_GPU)",
                "device": "nvidia$DBE_GPU", "job": "dcgm-fleet", "instance": "127.0.0.1:${PORTS[DBE_NODE]}",
                **pod("$(pod_of $DBE_NODE $DBE_GPU)")},
     "fires_after": t, "resolves_after": t + $DBE_FOR_S},
    {"labels": {"alertname": "GpuTemperatureHigh", "severity": "warning", "$(host_label $HOT_NODE)": "$(node_name $HOT_NODE)",
                "gpu": "$HOT_GPU", "UUID": "$(gpu_uuid $HOT_NODE $HOT_GPU)", "hpc_job": "$(job_of $HOT_NODE $HOT_GPU)",
                "device": "nvidia$HOT_GPU", "job": "dcgm-fleet", "instance": "127.0.0.1:${PORTS[HOT_NODE]}",
                **pod("$(pod_of $HOT_NODE $HOT_GPU)")},
     "fires_after": t + $TEMP_RULE_FOR_S, "resolves_after": t + $HOT_FOR_S},
], open(sys.argv[1], "w"), indent=1)
EOF
# after_incidents S: the seconds from now until S seconds after the incidents.
after_incidents() { echo $(((INCIDENT_AT + $1 * 1000 - $(date +%s%3N)) / 1000)); }
expect "XID 79 on $(node_name $XID_NODE) GPU $XID_GPU, a DBE on $(node_name $DBE_NODE) GPU $DBE_GPU and 90 °C on $(node_name $HOT_NODE) GPU $HOT_GPU reach the webhook as GpuXidError, GpuDoubleBitEccError and GpuTemperatureHigh, with their labels, and nothing else" \
    "$(after_incidents 60)" $CHECKS webhook "$HOOK_FILE" "$TMP/expected.json" firing
# --- 4. Grafana dashboard 12239: every panel's query, as the dashboard has it -------------------
# (NVIDIA/dcgm-exporter grafana/dcgm-exporter-dashboard.json: the panels GPU Temperature, GPU
# Avg. Temp, GPU Power Usage, GPU Power Total, GPU SM Clocks, GPU Utilization, Tensor Core
# Utilization, GPU Framebuffer Mem Used; GPU Power Total is an instant query, the others
# time series. Its variables: Hostname = label_values(DCGM_FI_DEV_FB_FREE, Hostname) and
# gpu = label_values(DCGM_FI_DEV_FB_FREE{Hostname=~"$Hostname"}, gpu), both set to All.)
DASHBOARD=(
    'range	max(DCGM_FI_DEV_GPU_TEMP{Hostname=~"$Hostname", gpu=~"$gpu"}) by (Hostname, gpu, uuid)'
    'range	avg(DCGM_FI_DEV_GPU_TEMP{Hostname=~"$Hostname", gpu=~"$gpu"})'
    'range	max(DCGM_FI_DEV_POWER_USAGE{Hostname=~"$Hostname", gpu=~"$gpu"}) by (Hostname, gpu, uuid)'
    'instant	sum(max(DCGM_FI_DEV_POWER_USAGE{Hostname=~"$Hostname", gpu=~"$gpu"}) by (gpu))'
    'range	max(DCGM_FI_DEV_SM_CLOCK{Hostname=~"$Hostname", gpu=~"$gpu"} * 1000000) by (Hostname, UUID, gpu)'
    'range	max(DCGM_FI_PROF_GR_ENGINE_ACTIVE{Hostname=~"$Hostname", gpu=~"$gpu"}) by (Hostname, gpu, GPU_I_ID, GPU_I_PROFILE)'
    'range	max(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{Hostname=~"$Hostname", gpu=~"$gpu"}) by (Hostname, gpu, GPU_I_ID, GPU_I_PROFILE)'
    'range	max(DCGM_FI_DEV_FB_USED{Hostname=~"$Hostname", gpu=~"$gpu"}) by (Hostname, gpu, GPU_I_ID, GPU_I_PROFILE)'
)
printf '%s\n' "${DASHBOARD[@]}" >"$TMP/dashboard.tsv"
# Each half of the fleet with the dashboard as its label needs it: as published (Hostname), and
# with Hostname renamed to hostname.
OLD_NODES=$(IFS=,; echo "${NODE_NAMES[*]:0:NODES/2}")
NEW_NODES=$(IFS=,; echo "${NODE_NAMES[*]:NODES/2}")
{
    $CHECKS dashboard "$PROM" "$TMP/dashboard.tsv" "$OLD_NODES" 0,1,2,3,4,5,6,7 Hostname
    rc_old=$?
    $CHECKS dashboard "$PROM" "$TMP/dashboard.tsv" "$NEW_NODES" 0,1,2,3,4,5,6,7 hostname
    rc_new=$?
} >"$TMP/dashboard.out" 2>&1
rc=$((rc_old | rc_new))
while IFS= read -r line; do
    case $line in
    "ok   dashboard "*) pass "${line#ok   }" ;;
    "FAIL dashboard "*) fail "${line#FAIL }" ;;
    *) echo "# $line" ;;
    esac
done <"$TMP/dashboard.out"
[ "$rc" -eq 0 ] || grep -q '^FAIL' "$TMP/dashboard.out" || fail "dashboard queries: $(tail -1 "$TMP/dashboard.out")"

expect "each of the three is resolved at the webhook once its condition clears" \
    "$(after_incidents 90)" $CHECKS webhook "$HOOK_FILE" "$TMP/expected.json" resolved
check "the webhook got exactly those three alerts, firing then resolved" \
    $CHECKS webhook-exact "$HOOK_FILE" "$TMP/expected.json" $((INCIDENT_AT / 1000))
check "Prometheus fired those three alerts and no other (ALERTS over the whole run)" \
    $CHECKS prom-alerts "$PROM" $(($(date +%s) - START + 10)) "$TMP/expected.json"
check "no alert is firing at the end" sh -c "curl -sf -G '$PROM/api/v1/query' --data-urlencode 'query=ALERTS{alertstate=\"firing\"}' | grep -q '\"result\":\[\]'"

# --- costs: numbers, not asserted ----------------------------------------------------------------
echo "# costs over the run ($(($(date +%s) - START)) s; $NODES exporters, collect interval 1 s, scraped every 1 s):"
$CHECKS report "$PROM" "$TMP/pids"

for n in $(seq 0 $((NODES - 1))); do
    log=$TMP/$(node_name "$n")/exporter.log
    if grep -qi -e 'error' -e 'panic' "$log"; then
        fail "$(node_name "$n")'s exporter logged an error: $(grep -i -e error -e panic "$log" | head -2)"
    fi
done
if [ "$FAILED" -gt 0 ]; then
    echo "# prometheus log:"
    tail -5 "$TMP/prometheus.log"
    echo "# alertmanager log:"
    tail -5 "$TMP/alertmanager.log"
    echo "# webhook notifications:"
    head -c 3000 "$HOOK_FILE"
fi
