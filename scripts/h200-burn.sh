#!/usr/bin/env bash
# dcgm-burn on a GPU node against PyTorch (issue 35): for bf16 and fp32, a PyTorch matrix
# product of the same size and dtype on cuda:0 for TORCH_SECS (its TFLOPS), then dcgm-burn for
# BURN_SECS on every GPU with a real nv-hostengine 4.6.0 watching (its JSON and HTML reports),
# then a short run with --corrupt-result 0 (the results check must count errors, exit 3).
# Prints a table and writes everything to $OUT (default ./burn-run):
#   burn-bf16.json burn-bf16.html burn-fp32.json burn-fp32.html burn-corrupt.json table.md
# Run from the repository root on the GPU node. Needs: BIN/dcgm-burn (a release build), REAL (a
# staged real DCGM: lib/, bin/nv-hostengine), python3 with torch; nvidia-smi.
set -u
BIN=${BIN:-.device/bin}
REAL=${REAL:-.device/realdcgm-4.6.0}
OUT=${OUT:-burn-run}
SIZE=${SIZE:-8192}
BURN_SECS=${BURN_SECS:-30}
TORCH_SECS=${TORCH_SECS:-20}
CORRUPT_SECS=${CORRUPT_SECS:-8}
DTYPES=${DTYPES:-"bf16 fp32"}
mkdir -p "$OUT"
export DCGM_LIB_PATH=$PWD/$REAL/lib/libdcgm.so.4
port=5598
"$REAL/bin/nv-hostengine" -n -b 127.0.0.1 -p $port -f /tmp/nv-hostengine-burn.log &
he=$!
trap 'kill $he 2>/dev/null' EXIT
sleep 3
H=(--host 127.0.0.1:$port)
echo "== $(nvidia-smi -L | head -1) | $(python3 -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)')"

# PyTorch's sustained TFLOPS for one dtype on cuda:0: C = A B back to back, timed after a
# 2-second warm-up (fp32 with TF32 off, as dcgm-burn's fp32).
torch_tflops() {
    python3 - "$1" "$SIZE" "$TORCH_SECS" <<'PY'
import sys, time, torch
name, n, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
      "tf32": torch.float32, "fp64": torch.float64}[name]
torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
a = torch.rand(n, n, device="cuda", dtype=dt) * 2 - 1
b = torch.rand(n, n, device="cuda", dtype=dt) * 2 - 1
c = torch.empty(n, n, device="cuda", dtype=dt)
def run(seconds):
    k, t0 = 0, time.time()
    while time.time() - t0 < seconds:
        for _ in range(10):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        k += 10
    return 2 * n ** 3 * k / (time.time() - t0) / 1e12
run(2)
print(f"{run(secs):.1f}")
PY
}

# A field of dcgm-burn's JSON report: GPU 0's sustained TFLOPS, its status, the exit status.
field() {
    python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
g = r["gpus"][0]
print({"tflops": f'{g.get("tflops") or 0:.1f}', "mismatches": g["compute"]["mismatches"],
       "status": g["status"], "engine": r["engine"], "peak_temp": g.get("peak_temp_c"),
       "power": f'{g.get("power_w") or 0:.0f}', "clock": f'{g.get("sm_clock_mhz") or 0:.0f}',
       "exit": r["exit_status"]}[sys.argv[2]])
PY
}

T=$OUT/table.md
{
    echo "| dtype | size | PyTorch TFLOPS | dcgm-burn TFLOPS (GPU 0, DCGM sampling on) | burn / PyTorch | GPU 0 W | GPU 0 MHz | burn status |"
    echo "|---|---|---|---|---|---|---|---|"
} >"$T"
for dt in $DTYPES; do
    echo "== $dt: PyTorch ${TORCH_SECS} s"
    pt=$(torch_tflops "$dt")
    echo "   PyTorch: $pt TFLOPS"
    echo "== $dt: dcgm-burn ${BURN_SECS} s"
    "$BIN/dcgm-burn" "${H[@]}" --duration "$BURN_SECS" --dtype "$dt" --size "$SIZE" -d 500 \
        --json "$OUT/burn-$dt.json" --html "$OUT/burn-$dt.html" | tail -n 20
    rc=${PIPESTATUS[0]}
    bt=$(field "$OUT/burn-$dt.json" tflops)
    ratio=$(python3 -c "print(f'{$bt / $pt * 100:.1f} %' if $pt > 0 else '-')")
    echo "| $dt | $SIZE | $pt | $bt | $ratio | $(field "$OUT/burn-$dt.json" power) | $(field "$OUT/burn-$dt.json" clock) | $(field "$OUT/burn-$dt.json" status) (exit $rc) |" >>"$T"
done
echo "engine: $(field "$OUT/burn-bf16.json" engine 2>/dev/null)" >>"$T"

echo "== --corrupt-result 0, ${CORRUPT_SECS} s"
"$BIN/dcgm-burn" "${H[@]}" --duration "$CORRUPT_SECS" --size "$SIZE" -i 0 --corrupt-result 0 \
    --json "$OUT/burn-corrupt.json" | tail -n 8
rc=${PIPESTATUS[0]}
echo "corrupt-result 0: $(field "$OUT/burn-corrupt.json" mismatches) mismatched words, status $(field "$OUT/burn-corrupt.json" status), exit $rc (want > 0, failure, 3)" >>"$T"
echo
cat "$T"
