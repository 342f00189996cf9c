#!/usr/bin/env bash
# Runs every test of the project against the dcgm-sim simulator (no GPU needed), tier by tier,
# and ends with one summary: each tier's passed/failed/skipped counts, then PASSED or FAILED
# as the last line (exit status 0 or 1).
#   1. the Rust workspace: unit, integration, example-tool and doc tests, benches in test mode;
#   2. the optional async streams (feature `tokio`);
#   3. the Prometheus end-to-end test of the exporter (installs Debian's prometheus if needed);
#   4. the Python wheel: built fresh, installed into a new virtualenv, stubtest + pytest;
#   5. Go peers: NVIDIA's go-dcgm (from the Go module proxy) runs its own tests on dcgm-sim and
#      on the real libdcgm, and its samples are compared with the tools (scripts/go-peers.sh;
#      one SKIPPED line without Go or the proxy);
#   6. with DCGM_COSTS=1, costs on the real libdcgm beside the checkout: numbers only.
# Where a real libdcgm 4.6.0 sits beside the checkout (../shared/realdcgm-4.6.0), tiers 1 and 4
# also run their real-library cases; without it those cases say SKIPPED and why (under
# DCGM_REQUIRE_REAL=1, as in CI, a missing real library fails them instead).
set -uo pipefail
cd "$(dirname "$0")/.."
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT
SUMMARY=()
# The names of the tests that failed, listed just above the verdict (the end of the output is
# what a CI page shows first).
FAILED_NAMES=()
FAILED_TIERS=0
TOTAL_P=0 TOTAL_F=0 TOTAL_S=0

# The Debian packages the tiers need (README, "Try it"): named up front when missing, with the
# command that installs them, so that a normal user's run does not fail in the middle unexplained.
missing=()
for spec in prometheus=prometheus prometheus=promtool prometheus-alertmanager=prometheus-alertmanager \
    curl=curl openssl=openssl tmux=tmux chromium=chromium; do
    command -v "${spec#*=}" >/dev/null || missing+=("${spec%%=*}")
done
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
    echo "missing Debian packages: $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')" >&2
    echo "  install them first: sudo apt-get install $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')" >&2
    echo "  (the end-to-end tiers fail without prometheus/alertmanager; the tests that need tmux or chromium are reported skipped)" >&2
fi

# Counts in a tier's log: cargo's `test result:` lines, pytest's closing line, and the
# `N passed, N failed` lines of the shell suites; a skip is a line saying SKIPPED.
count() {
    python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
p = f = s = 0
for m in re.finditer(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", text):
    p += int(m[1]); f += int(m[2]); s += int(m[3])
for line in text.splitlines():
    m = re.fullmatch(r"=* *((?:\d+ (?:passed|failed|skipped|errors?|deselected|xfailed|xpassed|warnings?)(?:, )?)+) in [\d.]+s.*", line.strip())
    if m:
        for n, what in re.findall(r"(\d+) (passed|failed|skipped|error)", m[1]):
            if what == "passed": p += int(n)
            elif what == "skipped": s += int(n)
            else: f += int(n)
    # The shell suites' and the contract and differential harnesses' own lines
    # (`contract[real]: 59 passed, 0 failed, 0 not applicable`).
    m = re.search(r"\b(\d+) passed, (\d+) failed(?:, (\d+) (?:not applicable|skipped))?", line)
    if m:
        p += int(m[1]); f += int(m[2]); s += int(m[3] or 0)
s += sum(1 for line in text.splitlines() if re.search(r"\bSKIPPED\b", line))
# A Rust test that skips (dcgm::testing::skip) returns and so passes in libtest's count: its
# `SKIPPED[test]` line moves it from the passes to the skips.
p -= sum(1 for line in text.splitlines() if "SKIPPED[test]" in line)
print(p, f, s)
PY
}

# record NAME LOG RC SECONDS: counts a finished tier's log into the summary.
record() {
    local name=$1 log=$2 rc=$3 took=$4
    read -r p f s < <(count "$log")
    local verdict=ok
    if [ "$rc" -ne 0 ]; then
        verdict="FAILED (exit $rc)"
        FAILED_TIERS=$((FAILED_TIERS + 1))
    fi
    TOTAL_P=$((TOTAL_P + p)) TOTAL_F=$((TOTAL_F + f)) TOTAL_S=$((TOTAL_S + s))
    local why
    why=$(grep -h -o 'SKIPPED.*' "$log" | sort -u | head -3 | tr '\n' ';' | sed 's/;$//')
    SUMMARY+=("$(printf '%-34s %7s %7s %7s %6ss  %s%s' "$name" "$p" "$f" "$s" "$took" "$verdict" "${why:+  — $why}")")
    local failed
    # libtest (`test NAME ... FAILED`), pytest (`FAILED path::test`), the contract harness
    # (`contract[..] FAIL name`) and go-peers' table (`sim: FAIL`).
    failed=$(grep -h -E '^test .* \.\.\. FAILED$|^FAILED [^ ]+::|^contract\[[^]]*\] FAIL |sim: FAIL' "$log" \
        | sed -E 's/^test (.*) \.\.\. FAILED$/\1/' | sort -u | head -20)
    if [ -n "$failed" ]; then
        while IFS= read -r line; do FAILED_NAMES+=("$name: $line"); done <<<"$failed"
    fi
}

logname() { echo "$LOGS/$(echo "$1" | tr -c 'a-zA-Z0-9' _).log"; }

# tier NAME COMMAND...: runs COMMAND with its output shown and kept, and records the counts.
tier() {
    local name=$1
    shift
    local log
    log=$(logname "$name")
    echo "=== $name: $*"
    local t0=$SECONDS
    "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    record "$name" "$log" "$rc" $((SECONDS - t0))
}

# background NAME COMMAND...: a tier whose tests mostly wait (a real library's two-minute
# timeout; go-dcgm's runs), started beside the tiers that keep the two cores busy. Its output
# is kept, then shown and counted by `join_background`, in the order started.
BG_NAMES=() BG_PIDS=()
background() {
    local name=$1
    shift
    local log
    log=$(logname "$name")
    echo "=== $name (in the background, shown at the end): $*"
    (
        t0=$SECONDS
        "$@" >"$log" 2>&1
        echo "$? $((SECONDS - t0))" >"$log.rc"
    ) &
    BG_NAMES+=("$name") BG_PIDS+=($!)
}

join_background() {
    local i log rc took
    for i in "${!BG_PIDS[@]}"; do
        wait "${BG_PIDS[$i]}"
        log=$(logname "${BG_NAMES[$i]}")
        echo "=== ${BG_NAMES[$i]} (ran in the background)"
        cat "$log"
        read -r rc took <"$log.rc" || { rc=1 took=0; }
        record "${BG_NAMES[$i]}" "$log" "$rc" "$took"
    done
}

# The tool tests run the example programs and the dcgm-exporter binary, which `--all-targets`
# builds only as test harnesses.
# (and the simulator's library itself, so that `--simulate` never finds an older copy of it).
tier "build (bins, examples)" bash -c 'cargo build --workspace --bins --examples && cargo build -p dcgm-sim'
tier "Rust tests (all targets)" cargo test --workspace --all-targets --no-fail-fast
# Two tiers that mostly wait run beside the rest (on 2 cores they took 6 minutes in a row):
# dcgm-sim's silent-listener tests, whose real-library case sits out libdcgm's two 60 s
# waits (a test target with `test = false`, so --all-targets leaves it to this line), and
# go-dcgm's tests and samples.
background "silent listener (dcgm-sim)" cargo test -p dcgm-sim --test silent_listener
background "Go peers" env GO_PEERS_PREBUILT=1 bash scripts/go-peers.sh
tier "Rust doc tests" cargo test --workspace --doc --no-fail-fast
tier "async streams (feature tokio)" bash -c 'cargo test -p dcgm-reader --features tokio --test streams && cargo test -p dcgm -p dcgm-reader --features dcgm-reader/tokio --doc'
tier "Prometheus end-to-end" bash scripts/prometheus_e2e.sh
tier "Prometheus fleet end-to-end" bash scripts/fleet_e2e.sh
tier "Python wheel and sdist" bash python/build_and_test.sh
join_background

# Costs on the real libdcgm beside the checkout: numbers printed, nothing asserted. A
# benchmark, not a tier: only with DCGM_COSTS=1 (about 150 s on 2 cores), so that the test run
# stays within CI's time; `bash scripts/bench-real.sh` prints them alone.
bench="not run (DCGM_COSTS=1 runs it; or bash scripts/bench-real.sh)"
if [ "${DCGM_COSTS:-}" = 1 ]; then
    echo "=== real-library costs (numbers only, not a test)"
    bench="skipped: no real libdcgm beside the checkout"
    bench_t0=$SECONDS
    if BENCH_PROFILE=debug BENCH_EXPORTER_SECONDS=10 bash scripts/bench-real.sh >"$LOGS/bench.log" 2>&1; then
        bench="numbers printed above"
    elif [ -s "$LOGS/bench.log" ] && ! grep -q "no libdcgm" "$LOGS/bench.log"; then
        bench="did not complete (numbers only, not a test): $(tail -1 "$LOGS/bench.log")"
    fi
    cat "$LOGS/bench.log"
    bench="$bench ($((SECONDS - bench_t0)) s)"
fi

echo
echo "=== summary"
printf '%-34s %7s %7s %7s %7s  %s\n' "tier" "passed" "failed" "skipped" "time" "result"
for line in "${SUMMARY[@]}"; do echo "$line"; done
printf '%-34s %s\n' "real-library costs" "$bench"
echo "total: $TOTAL_P passed, $TOTAL_F failed, $TOTAL_S skipped"
if [ ${#FAILED_NAMES[@]} -gt 0 ]; then
    echo "failed:"
    printf '  %s\n' "${FAILED_NAMES[@]}"
fi
if [ "$FAILED_TIERS" -eq 0 ] && [ "$TOTAL_F" -eq 0 ]; then
    echo PASSED
else
    echo FAILED
    exit 1
fi
