#!/usr/bin/env bash
# On a GPU node: `query` and `stat` beside `nvidia-smi --query-gpu` and gpustat, embedded and
# through a running nv-hostengine (the tools' automatic choice), median of 5 wall times each,
# then their outputs side by side. Numbers only: nothing is asserted.
#
#   TOOLS=target/release DCGM_HOME=/path/to/dcgm bash scripts/tools-vs-nvidia.sh
#
# TOOLS holds the release builds of the tools (`cargo build --release -p dcgm-tools`; copy them
# to a node without Rust). DCGM_HOME holds DCGM's lib/ and bin/nv-hostengine (a DCGM install,
# or `scripts/real-dcgm.sh dir`). gpustat is timed when `python3 -m gpustat` runs.
set -u
T=${TOOLS:-target/release}
H=${DCGM_HOME:?set DCGM_HOME to a directory with the DCGM lib/ and bin/nv-hostengine}
export LD_LIBRARY_PATH=$H/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export DCGM_LIB_PATH=$H/lib/libdcgm.so.4
Q=index,name,temperature.gpu,utilization.gpu,memory.used,power.draw,pstate
med() { # med LABEL CMD...: the median of 5 wall times, in ms
    local t=() s e
    for _ in 1 2 3 4 5; do
        s=$(date +%s%N); "${@:2}" >/dev/null 2>&1; e=$(date +%s%N)
        t+=($(((e - s) / 1000000)))
    done
    printf '%-60s %4s ms (runs: %s)\n' "$1" "$(printf '%s\n' "${t[@]}" | sort -n | sed -n 3p)" "${t[*]}"
}
both() { # both PHASE: every timing of one phase
    med "nvidia-smi --query-gpu=<7 properties> ($1)" nvidia-smi --query-gpu=$Q --format=csv
    med "query --query-gpu=<the same> ($1)" "$T/dcgm-query" --query-gpu=$Q --format=csv
    if python3 -m gpustat --help >/dev/null 2>&1; then med "gpustat ($1)" python3 -m gpustat; fi
    med "stat ($1)" "$T/dcgm-stat"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
both "no nv-hostengine: embedded"
"$H/bin/nv-hostengine" -n --log-level ERROR >/tmp/tools-vs-nvidia-he.log 2>&1 &
he=$!
trap 'kill $he 2>/dev/null' EXIT
sleep 3
"$T/dcgm-query" --verbose --query-gpu=index --format=csv,noheader 2>&1 | head -1
both "nv-hostengine running"
echo "== outputs side by side (ours first)"
"$T/dcgm-query" --query-gpu=$Q --format=csv
nvidia-smi --query-gpu=$Q --format=csv
"$T/dcgm-stat" --no-color
python3 -m gpustat --no-color 2>/dev/null
"$T/dcgm-query" -q -d PERFORMANCE | grep -A 6 "Clocks Event Reasons"
nvidia-smi -q -d PERFORMANCE | grep -A 6 "Clocks Event Reasons"
