#!/usr/bin/env bash
# Costs on a real libdcgm: a table of each one-shot tool's wall time (`--embedded`; the automatic
# choice with no engine answering, which is the embedded engine plus the probe; the automatic
# choice finding a running nv-hostengine; `--host`) and beside it `nvidia-smi --query-gpu` and
# gpustat where they are installed; reads through every layer (embedded and through
# nv-hostengine), the Python wheel next to NVIDIA's DcgmReader where that is importable, and the
# exporter's CPU time per collection and RSS at a 1 s interval. Numbers only, no pass/fail.
#
#   bash scripts/bench-real.sh                  # the library: $DCGM_LIB_PATH, else the staged
#                                               # ../shared/realdcgm-4.6.0 (H200 capture)
#   BENCH_PROFILE=debug BENCH_EXPORTER_SECONDS=10 bash scripts/bench-real.sh   # quicker (CI)
#
# On a GPU node with DCGM installed: DCGM_LIB_PATH=/usr/lib/x86_64-linux-gnu/libdcgm.so.4 and
# DCGM_HOSTENGINE=/usr/bin/nv-hostengine (default: none is started there; give a running
# one's address with DCGM_BENCH_HOST=host:port instead).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${BENCH_PROFILE:-release}
seconds=${BENCH_EXPORTER_SECONDS:-60}
target=${CARGO_TARGET_DIR:-target}

if [ -z "${DCGM_LIB_PATH:-}" ]; then
    if ! real=$(bash scripts/real-dcgm.sh dir); then
        echo "bench-real: no libdcgm (set DCGM_LIB_PATH, or put the real library beside the checkout)" >&2
        exit 3
    fi
    export DCGM_LIB_PATH=$real/lib/libdcgm.so.4
    export NVML_INJECTION_MODE=True NVML_YAML_FILE=$PWD/../shared/fixtures/nvml-capture-h200.yaml
    DCGM_HOSTENGINE=${DCGM_HOSTENGINE:-$real/bin/nv-hostengine}
fi

flag=(); [ "$profile" = release ] && flag=(--release)
# BENCH_PREBUILT=1: the binaries are already under $target/$profile (a GPU node without cargo).
if [ -z "${BENCH_PREBUILT:-}" ]; then
    cargo build -q "${flag[@]}" -p dcgm-tools
    cargo build -q "${flag[@]}" -p dcgm-exporter
    cargo build -q "${flag[@]}" --bench read_costs
fi
bin=$target/$profile
bench=$(ls -t "$bin"/deps/read_costs-* | grep -v '\.d$' | head -n 1)
scratch=$(mktemp -d)
he_pid=
cleanup() { [ -n "$he_pid" ] && kill -9 "$he_pid" 2>/dev/null; rm -rf "$scratch"; }
trap cleanup EXIT

host=${DCGM_BENCH_HOST:-}
if [ -z "$host" ] && [ -n "${DCGM_HOSTENGINE:-}" ]; then
    port=$((20000 + RANDOM % 20000))
    "$DCGM_HOSTENGINE" -n -b 127.0.0.1 -p "$port" -f "$scratch/he.log" >/dev/null 2>&1 &
    he_pid=$!
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    host=127.0.0.1:$port
fi

# Median wall time of 5 runs, in seconds.
median() {
    local t=()
    for _ in 1 2 3 4 5; do
        local s e
        s=$(date +%s%N)
        "$@" >/dev/null 2>&1 || true
        e=$(date +%s%N)
        t+=($(( (e - s) / 1000000 )))
    done
    printf '%s\n' "${t[@]}" | sort -n | sed -n 3p | awk '{printf "%.3f", $1 / 1000}'
}

echo "## dcgm-rs on $(basename "$(readlink -f "$DCGM_LIB_PATH")") — $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo "${BENCH_COMMIT:-unknown}"), $profile build"
echo
# The automatic choice looks where DCGM_HOSTENGINE_ADDRESS says: at the engine measured, or at
# a refused port and a missing socket for "none answering".
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo 1)
none="127.0.0.1:$closed,unix://$scratch/no-engine.sock"
echo "| One-shot tool | --embedded (s) | automatic, no engine (s) | automatic, nv-hostengine (s) | --host (s) |"
echo "|---|---|---|---|---|"
tools=("query --query-gpu=index,name,temperature.gpu,memory.used --format=csv" "discovery" "health -c 1" "topology" "nvlink")
[ -x "$bin/dcgm-stat" ] && tools+=("stat")
for t in "${tools[@]}"; do
    read -r -a words <<<"$t"
    name=${words[0]}
    run=("$bin/dcgm-$name" --lib "$DCGM_LIB_PATH")
    emb=$(median "${run[@]}" --embedded "${words[@]:1}")
    alone=$(median env DCGM_HOSTENGINE_ADDRESS="$none" "${run[@]}" "${words[@]:1}")
    auto=n/a via=n/a
    if [ -n "$host" ]; then
        auto=$(median env DCGM_HOSTENGINE_ADDRESS="$host" "${run[@]}" "${words[@]:1}")
        via=$(median "${run[@]}" --host "$host" "${words[@]:1}")
    fi
    echo "| \`$t\` | $emb | $alone | $auto | $via |"
done
# The same readings from the tools they stand in for, where those are installed.
echo
echo "| Beside them | wall (s) |"
echo "|---|---|"
for t in "nvidia-smi --query-gpu=index,name,temperature.gpu,memory.used --format=csv" "gpustat"; do
    read -r -a words <<<"$t"
    wall="not installed"
    command -v "${words[0]}" >/dev/null && wall=$(median "${words[@]}")
    echo "| \`$t\` | $wall |"
done
echo
echo "Reads (median µs per call; ratios against the raw latest read):"
echo
echo '```'
"$bench" --bench 2>/dev/null | grep -v '^\['
[ -n "$host" ] && DCGM_BENCH_HOST=$host "$bench" --bench 2>/dev/null | grep -v '^\['
echo '```'

# The wheel, where the Python given (default python3) has it installed; run from the scratch
# directory so that the repository's `dcgm/` crate folder is not mistaken for the package.
py=${DCGM_BENCH_PYTHON:-python3}
if (cd "$scratch" && "$py" -c 'import dcgm; dcgm.DcgmReader' 2>/dev/null); then
    echo
    echo "Python, 30 fields, latest values as a field-id dict (µs per call):"
    (cd "$scratch" && "$py" - "$DCGM_LIB_PATH" "$host") <<'PY' || echo "  (the Python comparison failed)"
import sys, timeit
import dcgm
lib, host = sys.argv[1], sys.argv[2] or None
def cost(r):
    r.GetLatestGpuValuesAsFieldIdDict()
    n = 300
    return timeit.timeit(r.GetLatestGpuValuesAsFieldIdDict, number=n) / n * 1e6
ours = dcgm.DcgmReader(libraryPath=lib)
print("  dcgm (this wheel) DcgmReader, embedded: %.1f" % cost(ours)); ours.Shutdown()
try:
    from DcgmReader import DcgmReader as Nvidia  # NVIDIA's, where installed
    theirs = Nvidia(hostname=host)
    print("  NVIDIA DcgmReader: %.1f" % cost(theirs)); theirs.Shutdown()
except Exception as e:
    print("  NVIDIA DcgmReader: not measured (%s)" % type(e).__name__)
PY
else
    echo
    echo "Python: the dcgm wheel is not installed for $py (DCGM_BENCH_PYTHON names another Python)"
fi

echo
port=$((20000 + RANDOM % 20000))
rflag=(); [ -n "$host" ] && rflag=(-r "$host")
"$bin/dcgm-exporter" -a "127.0.0.1:$port" -c 1000 "${rflag[@]}" >"$scratch/exporter.log" 2>&1 &
exp_pid=$!
sleep 2
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$exp_pid/stat"; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$exp_pid/status"; }
c0=$(cpu); r0=$(rss)
sleep "$seconds"
c1=$(cpu); r1=$(rss)
kill "$exp_pid"; wait "$exp_pid" 2>/dev/null || true
awk -v c="$((c1 - c0))" -v t="$ticks" -v s="$seconds" -v r0="$r0" -v r1="$r1" -v via="${host:-embedded}" 'BEGIN {
    printf "Exporter (%s), 1 s collection interval over %d s: %.2f ms CPU per collection, RSS %d KiB -> %d KiB\n",
        via, s, c / t * 1000 / s, r0, r1 }'
# Its state as it logged it (a host engine it cannot reach shows here, not as a failure).
tail -n 3 "$scratch/exporter.log" | sed 's/^/  exporter: /'
