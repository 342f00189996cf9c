#!/usr/bin/env bash
# The field run on a GPU node (issue "what the real world does"): a real nv-hostengine 4.6.0,
# the project's release tools, and PyTorch workloads (scripts/h200/workloads.py). Writes to
# $OUT (default ./field-run):
#   report.txt                  every process list side by side (nvidia-smi, dcgm-query,
#                               dcgm-stat -p), doctor's findings, dmon's sampling cost
#   doctor-shared.json          doctor live on three processes sharing the GPU
#   doctor-small-batch.json     doctor live on a small-batch training loop
#   field-workloads.jsonl       dcgm-dmon --json of every workload of the sequence, 100 ms
#   field-workloads-phases.txt  PHASE lines of that recording (SEQUENCE=0: the live parts only)
# Needs: BIN (dcgm-dmon, dcgm-query, dcgm-stat, dcgm-doctor, release builds) and REAL (a staged
# real DCGM: lib/, bin/nv-hostengine), as copied by the caller; python3 with torch; nvidia-smi.
set -u
BIN=${BIN:-.device/bin}
REAL=${REAL:-.device/realdcgm-4.6.0}
OUT=${OUT:-field-run}
SECS=${SECS:-20}
mkdir -p "$OUT"
R=$OUT/report.txt
: >"$R"
log() { echo "$*" | tee -a "$R"; }
W=scripts/h200/workloads.py
# The tools load the client library too (also with --host).
export DCGM_LIB_PATH=$PWD/$REAL/lib/libdcgm.so.4
port=5599
"$REAL/bin/nv-hostengine" -n -b 127.0.0.1 -p $port -f /tmp/nv-hostengine.log &
he=$!
sleep 3
H=(--host 127.0.0.1:$port)
log "== $(nvidia-smi -L) | $(python3 -c 'import torch; print("torch", torch.__version__)')"
log "== nv-hostengine: $("$BIN/dcgm-discovery" "${H[@]}" --verbose 2>&1 | grep -m1 DCGM)"

log "== three processes share the GPU (a parent holding 2 GiB, two small-batch trainers)"
python3 $W shared 45 >"$OUT/shared-phases.txt" 2>&1 &
wl=$!
sleep 15
log "-- nvidia-smi --query-compute-apps=pid,used_memory"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tee -a "$R"
log "-- dcgm-query --query-compute-apps=pid,used_memory"
"$BIN/dcgm-query" "${H[@]}" --query-compute-apps=pid,used_memory --format=csv,noheader 2>&1 | tee -a "$R"
log "-- dcgm-stat -p"
"$BIN/dcgm-stat" "${H[@]}" -p --no-color 2>&1 | tee -a "$R"
log "-- dcgm-doctor, 15 s live"
"$BIN/dcgm-doctor" "${H[@]}" --duration 15 --json >"$OUT/doctor-shared.json" 2>>"$R"
python3 - "$OUT/doctor-shared.json" <<'PY' | tee -a "$R"
import json, sys
r = json.load(open(sys.argv[1]))
for f in r.get("findings", []):
    print(f.get("severity"), f.get("kind"), f.get("gpus"), "|", f.get("explanation", "")[:160])
for p in r.get("processes", []) or []:
    print("process", json.dumps(p)[:200])
PY
wait $wl

log "== small-batch training alone: doctor 20 s live"
python3 $W small_batch_train 30 >/dev/null 2>&1 &
wl=$!
sleep 5
"$BIN/dcgm-doctor" "${H[@]}" --duration 20 --json >"$OUT/doctor-small-batch.json" 2>>"$R"
python3 - "$OUT/doctor-small-batch.json" <<'PY' | tee -a "$R"
import json, sys
r = json.load(open(sys.argv[1]))
for f in r.get("findings", []):
    print(f.get("severity"), f.get("kind"), f.get("gpus"), "|", f.get("explanation", "")[:160])
for p in r.get("processes", []) or []:
    print("process", json.dumps(p)[:200])
PY
wait $wl

if [ "${SEQUENCE:-1}" = 0 ]; then
    kill $he
    wait 2>/dev/null
    exit 0
fi
log "== the workload sequence, $SECS s each, recorded by dcgm-dmon --json every 100 ms"
fields=gpu_utilization,1001,1002,1003,1004,1005,1006,1007,1008,1009,1010,power_usage,sm_clock,memory_clock,gpu_temp,fb_used,112,mem_copy_utilization,190,240,241
"$BIN/dcgm-dmon" "${H[@]}" -e $fields -d 100 --json >"$OUT/field-workloads.jsonl" 2>>"$R" &
dm=$!
sleep 2
t0=$(awk '{print $14+$15}' /proc/$dm/stat)
s0=$(date +%s.%N)
python3 $W sequence "$SECS" >"$OUT/field-workloads-phases.txt" 2>>"$R"
t1=$(awk '{print $14+$15}' /proc/$dm/stat)
s1=$(date +%s.%N)
kill $dm
hz=$(getconf CLK_TCK)
log "-- dcgm-dmon's CPU over the recording: $(python3 -c "print(f'{($t1-$t0)/$hz:.2f} s of CPU in {$s1-$s0:.1f} s = {100*($t1-$t0)/$hz/($s1-$s0):.2f} % of a core')")"
log "-- nv-hostengine's CPU in all: $(awk -v hz=$hz '{printf "%.1f s", ($14+$15)/hz}' /proc/$he/stat)"
log "-- samples: $(wc -l <"$OUT/field-workloads.jsonl")"
kill $he
wait 2>/dev/null
