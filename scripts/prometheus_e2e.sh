#!/usr/bin/env bash
# End-to-end test of the dcgm-exporter binary (dcgm-exporter/) with the real Prometheus
# tools, against dcgm-sim:
#   1. `promtool check metrics` on `exporter --simulate --once` (flex and GPU modes);
#   2. `promtool check rules` / `promtool test rules` on dcgm-exporter/etc/alert-rules*.yml;
#   3. four exporters on 127.0.0.1 (GPUs; flex with MIG instances; HTTPS + basic auth;
#      NvSwitches, NVLinks and CPUs from dcgm-exporter/etc/switch-cpu-counters.csv) and a real
#      Prometheus server scraping them every second, with the alert rules loaded; the HTTP API
#      must return the 8 GPUs' DCGM_FI_DEV_GPU_TEMP with their labels and plausible values, MIG
#      series with GPU_I_PROFILE, the 4 NvSwitches' temperatures with their nvswitch label,
#      link and CPU-core series, and rules evaluating without error; beside them, checked with
#      curl, an HTTPS exporter that requires client certificates, and gzip on /metrics.
# Installs Debian's `prometheus` package (it provides prometheus and promtool) when missing.
# Prints `N passed, N failed`; exits non-zero on any failure. Takes well under two minutes
# once the exporter is built.
set -u -o pipefail

cd "$(dirname "$0")/.."
# pass/fail/check, wait_for, free_ports, need_debian_packages; TMP and PIDS, cleaned up at exit.
. scripts/lib/e2e.sh
e2e_start e2e prometheus-e2e

# --- prerequisites ---------------------------------------------------------------------------
need_debian_packages prometheus=prometheus prometheus=promtool
need_tools prometheus promtool curl python3
echo "# $(prometheus --version 2>&1 | head -1)"

echo "# building the exporter and dcgm-sim"
if ! cargo build -q -p dcgm-sim || ! cargo build -q -p dcgm-exporter; then
    fail "cargo build"
    exit 1
fi
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/debug/dcgm-exporter
export DCGM_SIM_LIB=$TARGET/debug/libdcgm_sim.so
unset DCGM_SIM_CONFIG DCGM_SIM_FAULTS DCGM_LIB_PATH
export NODE_NAME=e2e-node

# --- 1. promtool check metrics ---------------------------------------------------------------
# dcgm-exporter's own names break two of promtool's naming conventions (counters without
# _total, camelCase labels such as modelName): promtool reports those as lint problems (exit 3).
# Anything else (a parse error, a missing HELP, a duplicate) fails.
lint_ok() { # lint_ok FILE
    local rc out
    out=$(promtool check metrics <"$1" 2>&1)
    rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
        echo "$out" | head -5
        return 1
    fi
    out=$(echo "$out" | grep -v -e 'counter metrics should have "_total" suffix' \
        -e "label names should be written in 'snake_case' not 'camelCase'" \
        -e "metric name should not include type 'counter'" | grep -v '^$')
    if [ -n "$out" ]; then
        echo "$out" | head -5
        return 1
    fi
}
for mode in f g; do
    if "$BIN" --simulate --once -d "$mode" >"$TMP/once-$mode.prom" 2>"$TMP/once-$mode.log"; then
        pass "exporter --simulate --once -d $mode exits 0"
    else
        fail "exporter --simulate --once -d $mode exits 0: $(tail -3 "$TMP/once-$mode.log")"
    fi
    check "promtool check metrics accepts the -d $mode exposition" lint_ok "$TMP/once-$mode.prom"
done
SWITCH_CPU=dcgm-exporter/etc/switch-cpu-counters.csv
if "$BIN" --simulate --once -f "$SWITCH_CPU" >"$TMP/once-s.prom" 2>"$TMP/once-s.log"; then
    pass "exporter --simulate --once -f switch-cpu-counters.csv exits 0"
else
    fail "exporter --simulate --once -f switch-cpu-counters.csv exits 0: $(tail -3 "$TMP/once-s.log")"
fi
check "promtool check metrics accepts the NvSwitch / NVLink / CPU exposition" lint_ok "$TMP/once-s.prom"
check "--once -d g has 8 DCGM_FI_DEV_GPU_TEMP series" \
    test "$(grep -c '^DCGM_FI_DEV_GPU_TEMP{' "$TMP/once-g.prom")" -eq 8
check "the output is marked simulated" grep -qx 'dcgm_exporter_simulated 1' "$TMP/once-g.prom"
check "the startup log says the data is simulated" grep -q SIMULATED "$TMP/once-g.log"

# --- 2. alert rules ------------------------------------------------------------------------------
check "promtool check rules alert-rules.yml" promtool check rules dcgm-exporter/etc/alert-rules.yml
check "promtool test rules alert-rules.test.yml" promtool test rules dcgm-exporter/etc/alert-rules.test.yml

# --- 3. exporters + Prometheus -------------------------------------------------------------------
read -r -d '' PORT_G PORT_F PORT_T PORT_S PORT_P PORT_C PORT_H PORT_R < <(free_ports 8)

# HTTPS + basic auth for the third exporter.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1
# A bcrypt hash of the password: Python's crypt module (up to 3.12), else htpasswd.
HASH=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))' 2>/dev/null)
case $HASH in
'$2'*) ;;
*) HASH=$(htpasswd -nbBC 4 "" s3cret 2>/dev/null | tr -d ':\n') ;;
esac
case $HASH in
'$2'*) pass "made a bcrypt hash for the basic-auth test" ;;
*) fail "made a bcrypt hash for the basic-auth test (needs Python <= 3.12 or htpasswd)" ;;
esac
cat >"$TMP/web.yml" <<EOF
tls_server_config:
  cert_file: cert.pem
  key_file: key.pem
basic_auth_users:
  prom: $HASH
EOF

# Client certificates for a fifth exporter (curl only): a CA and a client certificate it signed.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=e2e-ca -keyout "$TMP/ca-key.pem" -out "$TMP/ca.pem" >/dev/null 2>&1
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=e2e-client \
    -keyout "$TMP/client-key.pem" -out "$TMP/client.csr" >/dev/null 2>&1
printf 'extendedKeyUsage=clientAuth\n' >"$TMP/client.ext"
openssl x509 -req -in "$TMP/client.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca-key.pem" \
    -CAcreateserial -days 2 -extfile "$TMP/client.ext" -out "$TMP/client.pem" >/dev/null 2>&1
cat >"$TMP/web-mtls.yml" <<EOF
tls_server_config:
  cert_file: cert.pem
  key_file: key.pem
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.pem
EOF

"$BIN" --simulate -a "127.0.0.1:$PORT_G" -c 500 -d g >"$TMP/exp-g.log" 2>&1 &
PIDS+=($!)
"$BIN" --simulate -a "127.0.0.1:$PORT_F" -c 500 >"$TMP/exp-f.log" 2>&1 &
PIDS+=($!)
"$BIN" --simulate -a "127.0.0.1:$PORT_T" -c 500 -d g --web-config-file "$TMP/web.yml" >"$TMP/exp-t.log" 2>&1 &
PIDS+=($!)
"$BIN" --simulate -a "127.0.0.1:$PORT_S" -c 500 -f "$SWITCH_CPU" >"$TMP/exp-s.log" 2>&1 &
PIDS+=($!)
"$BIN" --simulate -a "127.0.0.1:$PORT_C" -c 500 -d g --web-config-file "$TMP/web-mtls.yml" >"$TMP/exp-c.log" 2>&1 &
PIDS+=($!)

# A target backed by a real nv-hostengine: ../shared/realdcgm-4.6.0 replaying the H200 capture,
# read through `-r` with the real client library (skipped with a message where it is absent).
REAL_TARGETS=0
REAL_JOB=""
if REAL=$(bash scripts/real-dcgm.sh dir 2>"$TMP/real.err"); then
    export NVML_INJECTION_MODE=True NVML_YAML_FILE=$ROOT/../shared/fixtures/nvml-capture-h200.yaml
    "$REAL/bin/nv-hostengine" -n -b 127.0.0.1 -p "$PORT_H" -f "$TMP/hostengine.log" >/dev/null 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT_H") 2>/dev/null && break; sleep 0.1; done
    DCGM_LIB_PATH=$REAL/lib/libdcgm.so.4 "$BIN" -r "127.0.0.1:$PORT_H" -a "127.0.0.1:$PORT_R" -c 500 -d g \
        >"$TMP/exp-r.log" 2>&1 &
    PIDS+=($!)
    REAL_TARGETS=1
    REAL_JOB="  - job_name: dcgm-real
    static_configs: [{targets: ['127.0.0.1:$PORT_R']}]"
else
    echo "SKIPPED real nv-hostengine target: $(tail -1 "$TMP/real.err")"
    if [ "${DCGM_REQUIRE_REAL:-}" = 1 ]; then
        fail "DCGM_REQUIRE_REAL=1: the real nv-hostengine target must run here"
    fi
fi

cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $ROOT/dcgm-exporter/etc/alert-rules.yml
scrape_configs:
  - job_name: dcgm-gpus
    static_configs: [{targets: ['127.0.0.1:$PORT_G']}]
  - job_name: dcgm-flex
    static_configs: [{targets: ['127.0.0.1:$PORT_F']}]
  - job_name: dcgm-tls
    scheme: https
    tls_config: {ca_file: $TMP/cert.pem}
    basic_auth: {username: prom, password: s3cret}
    static_configs: [{targets: ['127.0.0.1:$PORT_T']}]
  - job_name: dcgm-fabric
    static_configs: [{targets: ['127.0.0.1:$PORT_S']}]
$REAL_JOB
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/data" \
    --web.listen-address="127.0.0.1:$PORT_P" --log.level=warn >"$TMP/prometheus.log" 2>&1 &
PIDS+=($!)
PROM=http://127.0.0.1:$PORT_P

check "the exporters answer /health" wait_for 30 sh -c \
    "curl -sf http://127.0.0.1:$PORT_G/health && curl -sf http://127.0.0.1:$PORT_F/health && curl -sf http://127.0.0.1:$PORT_S/health"
check "prometheus is ready" wait_for 30 curl -sf "$PROM/-/ready"

# The TLS exporter, directly.
check "https /metrics needs credentials (401)" test \
    "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/cert.pem" "https://127.0.0.1:$PORT_T/metrics")" = 401
check "https /metrics with the wrong password is refused (401)" test \
    "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/cert.pem" -u prom:wrong "https://127.0.0.1:$PORT_T/metrics")" = 401
check "https /health with credentials is OK" wait_for 15 \
    curl -sf --cacert "$TMP/cert.pem" -u prom:s3cret "https://127.0.0.1:$PORT_T/health"
check "plain http to the https port fails" sh -c "! curl -sf http://127.0.0.1:$PORT_T/metrics"
check "https with a client certificate the CA signed is OK (RequireAndVerifyClientCert)" wait_for 15 \
    curl -sf --cacert "$TMP/cert.pem" --cert "$TMP/client.pem" --key "$TMP/client-key.pem" \
    "https://127.0.0.1:$PORT_C/health"
check "https without a client certificate is refused" sh -c \
    "! curl -sf --cacert '$TMP/cert.pem' https://127.0.0.1:$PORT_C/health"
gzip_ok() {
    curl -sf --compressed -D "$TMP/gz.head" -o "$TMP/gz.prom" "http://127.0.0.1:$PORT_G/metrics" &&
        grep -qi '^content-encoding: gzip' "$TMP/gz.head" &&
        test "$(grep -c '^DCGM_FI_DEV_GPU_TEMP{' "$TMP/gz.prom")" -eq 8
}
check "/metrics is gzipped for a scraper that accepts gzip" wait_for 15 gzip_ok
curl -s http://127.0.0.1:$PORT_F/metrics >"$TMP/live.prom"
check "promtool check metrics accepts the live /metrics" lint_ok "$TMP/live.prom"

# Queries. api FILE QUERY: saves the JSON answer.
api() {
    curl -sf -G "$PROM/api/v1/query" --data-urlencode "query=$2" -o "$1"
}
count_is() { # count_is N QUERY
    api "$TMP/q.json" "$2" && python3 - "$1" "$TMP/q.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[2]))
sys.exit(0 if d["status"] == "success" and len(d["data"]["result"]) == int(sys.argv[1]) else 1)
EOF
}
check "prometheus returns 8 DCGM_FI_DEV_GPU_TEMP series (within 45 s)" \
    wait_for 45 count_is 8 'DCGM_FI_DEV_GPU_TEMP{job="dcgm-gpus"}'
api "$TMP/temp.json" 'DCGM_FI_DEV_GPU_TEMP{job="dcgm-gpus"}'
check "each GPU_TEMP series has gpu/UUID/pci_bus_id/device/modelName/hostname and a plausible value" \
    python3 - "$TMP/temp.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["data"]["result"]
ok = len(r) == 8
gpus, uuids = set(), set()
for s in r:
    m, v = s["metric"], float(s["value"][1])
    for l in ("gpu", "UUID", "pci_bus_id", "device", "modelName", "hostname", "DCGM_FI_DRIVER_VERSION"):
        if not m.get(l):
            print("missing", l, m); ok = False
    if m.get("device") != "nvidia" + m.get("gpu", "?") or m.get("hostname") != "e2e-node":
        print("bad labels", m); ok = False
    if not m.get("UUID", "").startswith("GPU-"):
        print("bad UUID", m); ok = False
    if not 20 <= v <= 100:
        print("implausible temperature", v, m); ok = False
    gpus.add(m.get("gpu")); uuids.add(m.get("UUID"))
ok = ok and gpus == {str(i) for i in range(8)} and len(uuids) == 8
sys.exit(0 if ok else 1)
EOF
check "MIG series (flex mode) have GPU_I_PROFILE and GPU_I_ID" \
    wait_for 20 count_is 3 'DCGM_FI_DEV_FB_USED{job="dcgm-flex",GPU_I_PROFILE!="",GPU_I_ID!="",gpu="7"}'
check "flex mode exports 7 GPUs and 3 MIG instances" \
    count_is 10 'DCGM_FI_DEV_FB_USED{job="dcgm-flex"}'
check "power and utilization are plausible" \
    count_is 0 'DCGM_FI_DEV_POWER_USAGE{job="dcgm-gpus"} < 0 or DCGM_FI_DEV_POWER_USAGE{job="dcgm-gpus"} > 1000 or DCGM_FI_DEV_GPU_UTIL{job="dcgm-gpus"} > 100'
check "prometheus scrapes the https + basic auth exporter" \
    wait_for 20 count_is 8 'DCGM_FI_DEV_GPU_TEMP{job="dcgm-tls"}'
check "prometheus returns the 4 NvSwitch temperatures, labelled nvswitch0-3 (within 20 s)" \
    wait_for 20 count_is 4 'DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS{job="dcgm-fabric",nvswitch=~"nvswitch[0-3]",hostname="e2e-node"} > 20 < 100'
check "NvSwitch link series have nvlink and nvswitch, GPU link series nvlink and gpu_uuid" \
    count_is 400 'DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX{job="dcgm-fabric",nvlink!="",nvswitch!=""} or DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX{job="dcgm-fabric",nvlink!="",gpu_uuid=~"GPU-.+"}'
check "CPU series have cpu, CPU-core series cpucore and cpu" \
    count_is 114 'DCGM_FI_DEV_CPU_TEMP_CELSIUS{job="dcgm-fabric",cpu=~"[01]"} or DCGM_FI_DEV_CPU_UTIL_TOTAL{job="dcgm-fabric",cpucore!="",cpu=~"[01]"}'
check "every target is up" count_is $((4 + REAL_TARGETS)) 'up == 1'
check "every simulator target says its data is simulated" count_is 4 'dcgm_exporter_simulated{job!="dcgm-real"} == 1'
if [ "$REAL_TARGETS" = 1 ]; then
    check "the real nv-hostengine target exports the captured H200's temperature (within 30 s)" \
        wait_for 30 count_is 1 'DCGM_FI_DEV_GPU_TEMP{job="dcgm-real",gpu="0",modelName="NVIDIA H200",UUID=~"GPU-.+"} > 0'
    check "the real nv-hostengine target is not marked simulated" \
        count_is 1 'dcgm_exporter_simulated{job="dcgm-real"} == 0'
    check "the real target's power series is there" count_is 1 'DCGM_FI_DEV_POWER_USAGE{job="dcgm-real"}'
    check "the real target's memory series is there" count_is 1 'DCGM_FI_DEV_FB_USED{job="dcgm-real"}'
fi
check "energy counters increase between scrapes" \
    wait_for 20 count_is 8 'increase(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{job="dcgm-gpus"}[10s]) > 0'
rules_ok() {
    curl -sf "$PROM/api/v1/rules" -o "$TMP/rules.json" && python3 - "$TMP/rules.json" <<'EOF'
import json, sys
rules = [r for g in json.load(open(sys.argv[1]))["data"]["groups"] for r in g["rules"]]
ok = len(rules) == 6 and all(r["health"] == "ok" and r["lastEvaluation"][:4] != "0001" for r in rules)
sys.exit(0 if ok else 1)
EOF
}
check "the 6 alert rules load and evaluate without error on live data" wait_for 20 rules_ok

for log in exp-g exp-f exp-t exp-s $([ "$REAL_TARGETS" = 1 ] && echo exp-r); do
    if grep -qi -e 'error' -e 'panic' "$TMP/$log.log"; then
        fail "$log logged an error: $(grep -i -e error -e panic "$TMP/$log.log" | head -2)"
    fi
done
if [ "$FAILED" -gt 0 ]; then
    echo "# prometheus log:"
    tail -5 "$TMP/prometheus.log"
fi
