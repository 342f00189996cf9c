#!/usr/bin/env bash
# Every process on a shared GPU, on a real GPU node (issue "what the real world does"): three
# PyTorch processes on one GPU (a parent holding 2 GiB, two small-batch trainers:
# scripts/h200/workloads.py shared) under a real nv-hostengine 4.6.0, and each of the
# project's views of them against nvidia-smi's list:
#   dcgm-query --query-compute-apps, dcgm-stat -p, dcgm-top (in a pseudo-terminal:
#   scripts/h200/pty_run.py), and dcgm-exporter's per-pod GPU memory (DCGM_EXP_POD_FB_USED) with two pods: a
#   fake kubelet (dcgm-exporter's fake_kubelet example) gives the GPU to both, and a fake
#   /proc root puts the parent and the first trainer in pod "train-a", the second trainer in
#   pod "train-b" (their cgroups, as a kubelet's containers would have them).
# Writes $OUT/processes.txt; each check prints `PASS name` or `FAIL name: why`; exit status 1
# on any FAIL.
# Needs: BIN (dcgm-query, dcgm-stat, dcgm-top, dcgm-exporter, fake_kubelet; release builds)
# and REAL (a staged real DCGM: lib/, bin/nv-hostengine), as copied by the caller; python3
# with torch; nvidia-smi.
set -u
BIN=${BIN:-.device/bin}
REAL=${REAL:-.device/realdcgm-4.6.0}
OUT=${OUT:-processes-run}
mkdir -p "$OUT"
R=$OUT/processes.txt
: >"$R"
log() { echo "$*" | tee -a "$R"; }
fails=0
check() { # check NAME WANT GOT: the two pid lists (one per line) must be equal as sets
    local name=$1 want got
    want=$(printf '%s\n' "$2" | grep -v '^$' | sort -u | tr '\n' ' ')
    got=$(printf '%s\n' "$3" | grep -v '^$' | sort -u | tr '\n' ' ')
    if [ -n "$want" ] && [ "$want" = "$got" ]; then
        log "PASS $name: $got"
    else
        log "FAIL $name: nvidia-smi lists [$want], this lists [$got]"
        fails=$((fails + 1))
    fi
}
export DCGM_LIB_PATH=$PWD/$REAL/lib/libdcgm.so.4
port=5598
"$REAL/bin/nv-hostengine" -n -b 127.0.0.1 -p $port -f /tmp/nv-hostengine-processes.log &
he=$!
wl= kub= exp=
# The workload runs in a process group of its own (setsid), so that its spawned trainers go
# with it.
trap 'kill $he ${kub:-} ${exp:-} 2>/dev/null; [ -n "$wl" ] && kill -- -"$wl" 2>/dev/null' EXIT
sleep 3
H=(--host 127.0.0.1:$port)
log "== $(nvidia-smi -L | head -1) | $(python3 -c 'import torch; print("torch", torch.__version__)')"

setsid python3 scripts/h200/workloads.py shared 60 >"$OUT/shared-phases.txt" 2>&1 &
wl=$!
# Wait until nvidia-smi lists the three processes (the trainers start CUDA in 5-15 s).
for _ in $(seq 60); do
    [ "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -c .)" -ge 3 ] && break
    sleep 1
done
sleep 3

log "-- nvidia-smi --query-compute-apps=pid,used_memory"
smi=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits)
log "$smi"
pids=$(printf '%s\n' "$smi" | cut -d, -f1 | tr -d ' ')

log "-- dcgm-query --query-compute-apps=pid,used_memory"
q=$("$BIN/dcgm-query" "${H[@]}" --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>&1)
log "$q"
check "dcgm-query --query-compute-apps" "$pids" "$(printf '%s\n' "$q" | cut -d, -f1 | tr -d ' ')"

log "-- dcgm-stat -p"
s=$("$BIN/dcgm-stat" "${H[@]}" -p --no-color 2>&1)
log "$s"
check "dcgm-stat -p" "$pids" "$(printf '%s\n' "$s" | grep -o '[0-9]\+([0-9]\+M)' | cut -d'(' -f1)"

log "-- dcgm-top, 4 s in a pseudo-terminal (a 200x50 screen: scripts/h200/pty_run.py)"
timeout 20 python3 scripts/h200/pty_run.py 4 "$BIN/dcgm-top" "${H[@]}" >"$OUT/top.raw" 2>&1
# The screen's text without its escape sequences.
sed -e 's/\x1b\[[0-9;?]*[A-Za-z]/ /g' -e 's/\x1b[()][A-Z0-9]//g' "$OUT/top.raw" | tr -c '[:print:]\n' ' ' >"$OUT/top.txt"
top_pids=$(for p in $pids; do grep -aqw "$p" "$OUT/top.txt" && echo "$p"; done)
for p in $pids; do log "$(grep -a -o ".\{0,40\}\b$p\b.\{0,60\}" "$OUT/top.txt" | tail -1)"; done
check "dcgm-top" "$pids" "$top_pids"

log "-- dcgm-exporter: DCGM_EXP_POD_FB_USED, two pods sharing the GPU"
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
parent=$wl  # the python3 started above; its two trainers are spawned children
kids=$(for p in $pids; do [ "$p" != "$parent" ] && echo "$p"; done)
kid_a=$(echo $kids | cut -d' ' -f1)
kid_b=$(echo $kids | cut -d' ' -f2)
D=$(mktemp -d)
uid_a=0d5c2a3e-4b1f-4c6d-9e8a-00000000000a
uid_b=0d5c2a3e-4b1f-4c6d-9e8a-00000000000b
cid=3f1c0a9e5b7d4c2a8e6f1b3d5c7a9e0f2b4d6c8a1e3f5b7d9c0a2e4f6b8d1c3a
for p in $parent $kid_a; do mkdir -p "$D/proc/$p"; echo "0::/kubepods/burstable/pod$uid_a/$cid" >"$D/proc/$p/cgroup"; done
mkdir -p "$D/proc/$kid_b"; echo "0::/kubepods/burstable/pod$uid_b/$cid" >"$D/proc/$kid_b/cgroup"
cat >"$D/pods.yaml" <<EOF
nodes:
  - socket: $D/kubelet.sock
    pods:
      - {pod: train-a, namespace: ml, container: trainer, devices: [$uuid]}
      - {pod: train-b, namespace: ml, container: trainer, devices: [$uuid]}
EOF
"$BIN/fake_kubelet" "$D/pods.yaml" >"$D/kubelet.out" 2>&1 &
kub=$!
sleep 1
printf 'DCGM_FI_DEV_FB_USED, gauge, used\nDCGM_EXP_POD_FB_USED, gauge, per pod\n' >"$D/counters.csv"
# A running exporter, scraped after its process lists have had a few updates.
"$BIN/dcgm-exporter" -r 127.0.0.1:$port -a 127.0.0.1:9499 -f "$D/counters.csv" --kubernetes \
    --kubernetes-enable-pod-uid --pod-resources-kubelet-socket "$D/kubelet.sock" \
    --proc-root "$D/proc" 2>"$OUT/exporter.err" &
exp=$!
sleep 8
python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9499/metrics").read().decode())' >"$OUT/exporter.txt" 2>>"$OUT/exporter.err"
kill $exp 2>/dev/null
# The trainers' memory grows while they warm up: compare with nvidia-smi's list of this moment.
smi=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits)
log "-- nvidia-smi at the scrape: $(echo $smi | tr '\n' ' ')"
grep '^DCGM_EXP_POD_FB_USED' "$OUT/exporter.txt" | tee -a "$R"
mem() { printf '%s\n' "$smi" | awk -F', *' -v p="$1" '$1 == p {print $2}'; }
want_a=$(($(mem "$parent") + $(mem "$kid_a")))
want_b=$(mem "$kid_b")
got_a=$(grep '^DCGM_EXP_POD_FB_USED' "$OUT/exporter.txt" | grep "pod_uid=\"$uid_a\"" | awk '{print $NF}')
got_b=$(grep '^DCGM_EXP_POD_FB_USED' "$OUT/exporter.txt" | grep "pod_uid=\"$uid_b\"" | awk '{print $NF}')
# nvidia-smi rounds each process's bytes to MiB; the exporter sums the bytes, then rounds.
close() { [ -n "$1" ] && [ "${1%.*}" -ge $(($2 - 2)) ] && [ "${1%.*}" -le $(($2 + 2)) ]; }
if close "$got_a" "$want_a" && close "$got_b" "$want_b"; then
    log "PASS dcgm-exporter per pod: train-a $got_a MiB (pids $parent $kid_a), train-b $got_b MiB (pid $kid_b), as nvidia-smi"
else
    log "FAIL dcgm-exporter per pod: want train-a $want_a, train-b $want_b MiB (nvidia-smi); got [$got_a] [$got_b] (stderr: $(head -c 400 "$OUT/exporter.err"))"
    fails=$((fails + 1))
fi
kill $kub 2>/dev/null
kill -- -"$wl" 2>/dev/null
log "== $fails failed"
[ "$fails" -eq 0 ]
