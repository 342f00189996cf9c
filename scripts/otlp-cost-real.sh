#!/usr/bin/env bash
# The exporter's CPU time per collection and resident set with OTLP off and on, on a real
# libdcgm through nv-hostengine: for each collect interval (OTLP_COST_INTERVALS, default
# "1000 100") and round (OTLP_COST_ROUNDS, default 2), the exporter runs OTLP off, pushing over
# gRPC after every collection (to examples/otlp_sink.rs) and over OTLP/HTTP (to a Python
# http.server answering 200), then once with gzip. Numbers only, no pass/fail.
#
#   bash scripts/otlp-cost-real.sh      # the library: $DCGM_LIB_PATH with $DCGM_HOSTENGINE, else
#                                       # the staged ../shared/realdcgm-4.6.0 (H200 capture)
#   OTLP_COST_PREBUILT=DIR              # dcgm-exporter and otlp_sink are in DIR (a GPU node
#                                       # without cargo); default: a release build here
#   OTLP_COST_SECONDS=30                # measured seconds per row (after a 5 s start)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${OTLP_COST_SECONDS:-30}
if [ -z "${DCGM_LIB_PATH:-}" ]; then
    real=$(bash scripts/real-dcgm.sh dir) || { echo "otlp-cost-real: no libdcgm (set DCGM_LIB_PATH and DCGM_HOSTENGINE)" >&2; exit 3; }
    export DCGM_LIB_PATH=$real/lib/libdcgm.so.4
    export NVML_INJECTION_MODE=True NVML_YAML_FILE=$PWD/../shared/fixtures/nvml-capture-h200.yaml
    DCGM_HOSTENGINE=${DCGM_HOSTENGINE:-$real/bin/nv-hostengine}
fi
: "${DCGM_HOSTENGINE:?set DCGM_HOSTENGINE to an nv-hostengine binary}"
export LD_LIBRARY_PATH=$(dirname "$DCGM_LIB_PATH")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ -n "${OTLP_COST_PREBUILT:-}" ]; then
    exporter=$OTLP_COST_PREBUILT/dcgm-exporter sink=$OTLP_COST_PREBUILT/otlp_sink
else
    cargo build -q --release -p dcgm-exporter --bin dcgm-exporter --example otlp_sink
    exporter=target/release/dcgm-exporter sink=target/release/examples/otlp_sink
fi
scratch=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$scratch"' EXIT
"$DCGM_HOSTENGINE" -n --log-level ERROR >"$scratch/he.log" 2>&1 & pids+=($!)
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/5555) 2>/dev/null && break; sleep 0.2; done
"$sink" 127.0.0.1:4317 >"$scratch/sink.txt" 2>&1 & sink_pid=$!; pids+=($sink_pid)
python3 -c 'import http.server as h
class H(h.BaseHTTPRequestHandler):
    def do_POST(s):
        s.rfile.read(int(s.headers.get("Content-Length", 0))); s.send_response(200)
        s.send_header("Content-Length", "0"); s.end_headers()
    def log_message(s, *a): pass
h.ThreadingHTTPServer(("127.0.0.1", 4318), H).serve_forever()' & pids+=($!)
sleep 1
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
row() { # row LABEL INTERVAL_MS FLAGS...
    local label=$1 ms=$2; shift 2
    "$exporter" -r 127.0.0.1:5555 -a 127.0.0.1:0 -c "$ms" "$@" >"$scratch/$label.log" 2>&1 &
    local p=$!
    sleep 5
    local t0 t1 rss
    t0=$(ticks $p); sleep "$seconds"; t1=$(ticks $p)
    rss=$(awk '/VmRSS/{print $2}' "/proc/$p/status")
    kill $p; wait $p 2>/dev/null || true
    python3 -c 'import sys
t, ms, s = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]); n = s * 1000 / ms
print("%-16s -c %5d: %.3f ms CPU per collection (%d ticks / %d collections), RSS %s KiB" % (sys.argv[4], ms, t * 10.0 / n, t, n, sys.argv[5]))' \
        $((t1 - t0)) "$ms" "$seconds" "$label" "$rss"
}
for round in $(seq "${OTLP_COST_ROUNDS:-2}"); do
    for ms in ${OTLP_COST_INTERVALS:-1000 100}; do
        row "off" "$ms"
        row "grpc" "$ms" --otlp-endpoint http://127.0.0.1:4317
        row "http/protobuf" "$ms" --otlp-endpoint http://127.0.0.1:4318/v1/metrics --otlp-protocol http/protobuf
    done
done
row "grpc+gzip" 100 --otlp-endpoint http://127.0.0.1:4317 --otlp-compression gzip
kill -TERM $sink_pid; wait $sink_pid 2>/dev/null || true
tail -n 1 "$scratch/sink.txt" | grep otlp_sink || cat "$scratch/sink.txt"
