#!/usr/bin/env bash
# "Go peers": NVIDIA's Go bindings, go-dcgm, run on dcgm-sim and on the real libdcgm 4.6.0.
#
#   1. go-dcgm's own package tests (pkg/dcgm: fake GPUs and instances, injected values, groups,
#      watches, health, policy, topology, MIG profile names, CPU hierarchy, driver detach and
#      attach, errors; none needs a GPU) are built once into one test binary and run twice:
#      with LD_LIBRARY_PATH at a folder holding a libdcgm.so.4 link to dcgm-sim, and on
#      ../shared/realdcgm-4.6.0 with DCGM's injection NVML replaying the captured H200.
#      Each test's result is printed for each library. Its tests/ package (the samples rewritten
#      as tests, comparing go-dcgm with `nvidia-smi --query-gpu`) runs the same way, with this
#      project's dcgm-query, on the same library, standing in for nvidia-smi.
#   2. go-dcgm's samples (deviceInfo, dmon, health, policy, processInfo, topology,
#      hostengineStatus, diag) run on dcgm-sim, and what they print is compared with what this
#      project's tools print for the same simulated node (tests/go/compare_samples.py).
#
# go-dcgm comes from the Go module proxy by module path and version (GO_DCGM_VERSION; by
# default v1.4611.0, its newest release, for DCGM 4.6); its module cache and build cache live under target/go-cache, so a
# second run downloads and compiles nothing. Its source is never copied into this repository:
# the tests are built in a scratch copy of the module under target/go-peers.
#
# A test fails the tier only as a regression: it passes on the real 4.6.0 but not on dcgm-sim,
# and tests/go/known-differences.txt does not list it with a reason; so does a sample's fact
# that differs from the tools'. A test that fails on both
# libraries, or a listed one, is reported and counted as skipped. Without the real library
# (a fresh clone) every dcgm-sim failure counts, and the real run says SKIPPED (under
# DCGM_REQUIRE_REAL=1, as in CI, its absence is a failure). Without Go or without the proxy,
# one `SKIPPED go-peers: <reason>` line and exit 0.
#
# Closing line: `go-peers[sim]: N passed, N failed, N skipped` (go-dcgm's tests and the samples'
# comparisons together). Environment: GO_DCGM_VERSION, DCGM_SHARED_DIR, CARGO_TARGET_DIR,
# GO_PEERS_SAMPLES=0 (pkg/dcgm only: scripts/test-without-shared.sh), GO_PEERS_PREBUILT=1 (the
# Rust side is built: scripts/test.sh), CARGO_FLOCK (a lock file every cargo command here runs
# under, on build machines shared with others).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
SHARED=${DCGM_SHARED_DIR:-$ROOT/../shared}
MODULE=github.com/NVIDIA/go-dcgm
VERSION=${GO_DCGM_VERSION:-v1.4611.0}
WORK=$TARGET/go-peers
KNOWN=$ROOT/tests/go/known-differences.txt
START=$SECONDS

# Go's caches under target/ (kept between CI runs with the rest of target/), writable so that
# `cargo clean` can remove them; one compile job at a time (2-core machines, other builds).
export GOMODCACHE=$TARGET/go-cache/mod GOCACHE=$TARGET/go-cache/build GOPATH=$TARGET/go-cache/path
export GOFLAGS="-modcacherw -p=1" GOTOOLCHAIN=local GOTELEMETRY=off
unset GOWORK

cargo_() { if [ -n "${CARGO_FLOCK:-}" ]; then flock "$CARGO_FLOCK" cargo "$@"; else cargo "$@"; fi; }

if ! command -v go >/dev/null; then
    echo "SKIPPED go-peers: no Go toolchain on PATH (Go 1.23 or later runs go-dcgm's tests)"
    exit 0
fi
echo "# $(go version), $MODULE@$VERSION"

# --- go-dcgm from the module proxy -----------------------------------------------------------
if ! dl=$(go mod download -json "$MODULE@$VERSION" 2>&1); then
    why=$(printf '%s\n' "$dl" | python3 -c 'import json,sys
t=sys.stdin.read()
try: t = json.loads(t).get("Error", t)
except ValueError: pass
print(" ".join(t.split()) or "no answer")')
    echo "SKIPPED go-peers: the Go module proxy ($(go env GOPROXY)) did not serve $MODULE@$VERSION: $why"
    exit 0
fi
moddir=$(printf '%s\n' "$dl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')

# A scratch copy of the module (the module cache is read-only by design), refreshed when the
# version changes; its dependencies (testify, bitset) come from the proxy the same way.
src=$WORK/go-dcgm-$VERSION
if [ ! -f "$src/.copied" ]; then
    rm -rf "$src"
    mkdir -p "$WORK"
    cp -r "$moddir" "$src" && chmod -R u+w "$src" && touch "$src/.copied"
fi
testbin=$WORK/dcgm-$VERSION.test
samplesbin=$WORK/samples-$VERSION.test
bindir=$WORK/bin-$VERSION
t0=$SECONDS
if [ "$testbin" -nt "$src/.copied" ] && [ "$samplesbin" -nt "$src/.copied" ] \
    && [ "$bindir/diag" -nt "$src/.copied" ]; then
    echo "# go-dcgm's pkg/dcgm tests and samples: built by an earlier run"
else
    echo "# building go-dcgm's pkg/dcgm tests and samples"
    if ! (cd "$src" && nice go mod download) >"$WORK/download.log" 2>&1; then
        echo "SKIPPED go-peers: the Go module proxy did not serve go-dcgm's dependencies: $(tail -1 "$WORK/download.log")"
        exit 0
    fi
    rm -f "$testbin" "$samplesbin" "$bindir/diag"
    if ! (cd "$src" && nice go test -c -o "$testbin" ./pkg/dcgm \
        && nice go test -c -o "$samplesbin" ./tests \
        && nice go build -o "$bindir/" ./samples/deviceInfo ./samples/dmon ./samples/health \
            ./samples/policy ./samples/processInfo ./samples/topology ./samples/hostengineStatus \
            ./samples/diag); then
        echo "go-peers[sim]: 0 passed, 1 failed, 0 skipped (go-dcgm did not build)"
        exit 1
    fi
    echo "#   $((SECONDS - t0)) s"
fi

# --- dcgm-sim and the tools the samples are compared with ------------------------------------
# scripts/test.sh has built both in its first tier: GO_PEERS_PREBUILT=1 uses them as they are
# (building dcgm-sim on its own and as the tools' dependency compiles it with different
# features, so each build after the other recompiles it and the tools: 10-20 s for nothing).
echo "# building dcgm-sim and the tools"
t0=$SECONDS
built=1
for f in libdcgm_sim.so dcgm-query dcgm-dmon dcgm-topology dcgm-health dcgm-policy; do
    [ -f "$TARGET/debug/$f" ] || built=
done
if [ "${GO_PEERS_PREBUILT:-}" = 1 ] && [ -n "$built" ]; then
    echo "#   built by scripts/test.sh's first tier (GO_PEERS_PREBUILT=1)"
elif ! cargo_ build -q -p dcgm-tools || ! cargo_ build -q -p dcgm-sim; then
    echo "go-peers[sim]: 0 passed, 1 failed, 0 skipped (cargo build failed)"
    exit 1
else
    echo "#   $((SECONDS - t0)) s"
fi
simlib=$WORK/lib-sim
mkdir -p "$simlib"
ln -sfn "$TARGET/debug/libdcgm_sim.so" "$simlib/libdcgm.so.4"

# --- go-dcgm's tests on each library ---------------------------------------------------------
# Two suites of go-dcgm's: pkg/dcgm, its package tests, and tests/, its samples rewritten as
# tests, which compare what go-dcgm reads with what `nvidia-smi --query-gpu` prints. Here
# `nvidia-smi` is this project's nvidia-smi-compatible dcgm-query on the same library (a
# two-line script on PATH), so those tests compare go-dcgm with the tools.
# run_tests NAME SUITE BINARY ENV...: runs BINARY in the suite's folder under `env ENV...`;
# writes NAME.results, one `RESULT SUITE/TestName` line per test the binary lists (a test it
# never reached, after a crash or the timeout, is `fail`).
run_tests() {
    local name=$1 suite=$2 bin=$3 log=$WORK/$1.log
    shift 3
    (cd "$src/$suite" && env "$@" timeout -k 10 420 "$bin" -test.v -test.timeout 400s \
        -test.count 1) >"$log" 2>&1
    local rc=$?
    (cd "$src/$suite" && env "$@" "$bin" -test.list .) >"$WORK/$name.list" 2>/dev/null
    python3 - "$WORK/$name.list" "$log" "$WORK/$name.results" "$rc" "$suite" <<'PY'
import re, sys
listed, log, out, rc, suite = sys.argv[1:]
names = [n for n in open(listed).read().split() if n.startswith("Test")]
got = {}
for m in re.finditer(r"^--- (PASS|FAIL|SKIP): (\S+)", open(log, errors="replace").read(), re.M):
    got[m[2]] = m[1].lower()
with open(out, "w") as f:
    for n in names:
        why = "" if n in got else f" (not run: exit status {rc})"
        f.write(f"{got.get(n, 'fail')} {suite}/{n}{why}\n")
PY
}
# nvidia_smi DIR ARGS...: DIR/nvidia-smi runs dcgm-query with ARGS (the library to read).
nvidia_smi() {
    local dir=$1
    shift
    mkdir -p "$dir"
    printf '#!/bin/sh\nexec %q %s "$@"\n' "$TARGET/debug/dcgm-query" "$(printf '%q ' "$@")" \
        >"$dir/nvidia-smi"
    chmod +x "$dir/nvidia-smi"
}

t0=$SECONDS
# The real library's runs spend most of their two minutes waiting (driver detach and attach,
# policy timeouts, the samples' sleeps), so they run in the background, side by side, beside
# the simulator's runs and the samples' comparison.
real=$(DCGM_SHARED_DIR=$SHARED bash scripts/real-dcgm.sh dir 4.6.0 2>/dev/null) || real=
capture=$SHARED/fixtures/nvml-capture-h200.yaml
rm -f "$WORK"/real*.results "$WORK"/sim*.results
realpids=()
if [ -n "$real" ] && [ -f "$capture" ]; then
    echo "# go-dcgm $VERSION pkg/dcgm and tests/ on the real libdcgm 4.6.0 (injection NVML, captured H200), in the background"
    nvidia_smi "$WORK/nvsmi-real" --embedded --lib "$real/lib/libdcgm.so.4"
    realenv=(-u DCGM_LIB_PATH LD_LIBRARY_PATH="$real/lib" NVML_INJECTION_MODE=True
        NVML_YAML_FILE="$capture")
    run_tests real-pkg pkg/dcgm "$testbin" "${realenv[@]}" &
    realpids+=($!)
    if [ "${GO_PEERS_SAMPLES:-1}" != 0 ]; then
        run_tests real-tests tests "$samplesbin" "${realenv[@]}" PATH="$WORK/nvsmi-real:$PATH" &
        realpids+=($!)
    fi
else
    realwhy="no real libdcgm 4.6.0 with the H200 capture at $SHARED (a fresh clone has none)"
fi

simenv=(-u DCGM_SIM_CONFIG -u DCGM_SIM_FAULTS -u DCGM_SIM_VERSION -u DCGM_LIB_PATH
    LD_LIBRARY_PATH="$simlib" DCGM_SIM_LIB="$TARGET/debug/libdcgm_sim.so")
echo "# go-dcgm $VERSION pkg/dcgm tests on dcgm-sim (its default node)"
run_tests sim-pkg pkg/dcgm "$testbin" "${simenv[@]}"
echo "#   $((SECONDS - t0)) s"
if [ "${GO_PEERS_SAMPLES:-1}" != 0 ]; then
    echo "# go-dcgm $VERSION tests/ (its samples as tests, beside dcgm-query as nvidia-smi) on dcgm-sim"
    nvidia_smi "$WORK/nvsmi-sim" --simulate
    run_tests sim-tests tests "$samplesbin" "${simenv[@]}" PATH="$WORK/nvsmi-sim:$PATH"
    echo "#   $((SECONDS - t0)) s"
fi
cat "$WORK"/sim-pkg.results "$WORK"/sim-tests.results >"$WORK/sim.results" 2>/dev/null

# --- the samples against the tools -----------------------------------------------------------
sp=0 sf=0 ss=0
if [ "${GO_PEERS_SAMPLES:-1}" = 0 ]; then
    echo "# go-dcgm's samples and tests/ not run (GO_PEERS_SAMPLES=0)"
else
    echo "# go-dcgm $VERSION samples on dcgm-sim, compared with this project's tools"
    python3 tests/go/compare_samples.py --samples "$bindir" --tools "$TARGET/debug" \
        --sim-lib-dir "$simlib" --src "$src" | tee "$WORK/samples.log"
    read -r sp sf ss < <(python3 -c 'import re,sys
m=re.search(r"go-samples\[sim\]: (\d+) agree, (\d+) differ, (\d+) not compared", open(sys.argv[1]).read())
print(*(m.groups() if m else (0, 1, 0)))' "$WORK/samples.log")
fi
if [ ${#realpids[@]} -gt 0 ]; then
    wait "${realpids[@]}"
    echo "# the real library's runs took $((SECONDS - t0)) s"
    cat "$WORK"/real-pkg.results "$WORK"/real-tests.results >"$WORK/real.results" 2>/dev/null
fi

# --- compare, print, count -------------------------------------------------------------------
python3 - "$WORK/sim.results" "$WORK/real.results" "$KNOWN" "${realwhy:-}" "${DCGM_REQUIRE_REAL:-}" \
    >"$WORK/tests.summary" <<'PY'
import os, sys
sim_f, real_f, known_f, realwhy, require_real = sys.argv[1:]
def load(path):
    if not os.path.exists(path):
        return None
    return dict((l.split()[1], l.split(None, 2)[0]) for l in open(path) if l.strip())
sim, real = load(sim_f) or {}, load(real_f)
# tests/go/known-differences.txt: `TestName<TAB>reason` lines, `#` comments.
known = {}
for line in open(known_f) if os.path.exists(known_f) else []:
    parts = line.split("\t")
    if line.startswith("#") or len(parts) < 2:
        continue
    known[parts[0].strip()] = parts[-1].strip()
detail = dict((l.split(None, 2)[1], l.split(None, 2)[2].strip()) for l in open(sim_f)
              if len(l.split(None, 2)) == 3) if os.path.exists(sim_f) else {}
p = f = s = 0
rp = rf = rs = 0
for name in sorted(sim, key=list(sim).index):
    r = real.get(name) if real else None
    res = sim[name]
    if r == "pass": rp += 1
    elif r == "fail": rf += 1
    elif r == "skip": rs += 1
    if res == "pass":
        verdict, p = "pass", p + 1
    elif res == "skip":
        verdict, s = "skip", s + 1
    elif name in known:
        verdict, s = f"fail, a known difference: {known[name]}", s + 1
    elif r == "fail":
        verdict, s = "fail, fails on the real libdcgm 4.6.0 too (not counted)", s + 1
    else:
        verdict, f = "FAIL" + (" " + detail[name] if name in detail else "") + (
            ", REGRESSION: passes on the real libdcgm 4.6.0" if r == "pass" else ""), f + 1
    print(f"go-dcgm  {name:<81} sim: {verdict:<6}  real: {r or 'not run'}")
if not sim:
    print("go-dcgm  FAIL: the test binary listed no test on dcgm-sim (see target/go-peers/sim-pkg.log and sim-tests.log)")
    f += 1
elif f:
    print("go-dcgm  the failures' messages: target/go-peers/sim-pkg.log, sim-tests.log (real-*.log for the real library)")
stale = sorted(set(known) - {n for n, v in sim.items() if v == "fail"})
for name in stale:
    print(f"go-dcgm  note: {name} is listed in tests/go/known-differences.txt but did not fail on dcgm-sim")
if real is not None and not real:
    real, realwhy = None, "the real library's test binary listed no test (see target/go-peers/real-pkg.log)"
if real is not None:
    print(f"go-peers[real] (the reference, not counted): {rp} pass, {rf} fail, {rs} skip")
elif require_real == "1":
    print(f"go-peers[real]: {realwhy}, and DCGM_REQUIRE_REAL=1 (CI) requires it")
    f += 1
else:
    print(f"SKIPPED go-peers[real]: {realwhy}")
print(f"COUNTS {p} {f} {s}")
PY
grep -v '^COUNTS' "$WORK/tests.summary"
read -r _ tp tf ts < <(grep '^COUNTS' "$WORK/tests.summary")

echo "# go-peers took $((SECONDS - START)) s"
echo "go-peers[sim]: $((tp + sp)) passed, $((tf + sf)) failed, $((ts + ss)) skipped"
[ $((tf + sf)) -eq 0 ]
