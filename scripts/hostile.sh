#!/usr/bin/env bash
# Runs the exporter's hostile-client battery (dcgm-exporter/tests/exporter_http.rs, the tests
# named hostile_*) one test at a time, and prints one table: the attack, how many attacking
# connections it keeps open, how many of the legitimate scraper's requests were answered 200
# within 5 s (a lock-out is a 503 or a wait for the attackers' 10 s deadline), the slowest of them, and how many connections the attackers opened in all.
# Every attack comes from 127.0.0.2 and the scraper from 127.0.0.1; loopback only, bounded.
# Then the hostile-input battery of issue 31 (tests/hostile_attribution.rs, hostile_otlp.rs,
# hostile_engine.rs: CDI spec directories, the kubelet gone, HPC mapping files, OTLP receivers
# that hang, reset streams or fill the queue, a host engine that never answers) and a second
# table: scrapes answered during and after each attack, their latency, resident memory.
#   bash scripts/hostile.sh            # debug build
#   HOSTILE_PROFILE=release bash scripts/hostile.sh
#   HOSTILE_ONLY=inputs bash scripts/hostile.sh   # only the second battery
set -euo pipefail
cd "$(dirname "$0")/.."
profile=()
[ "${HOSTILE_PROFILE:-debug}" = release ] && profile=(--release)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
if [ "${HOSTILE_ONLY:-}" != inputs ]; then
    cargo test -q "${profile[@]}" -p dcgm-exporter --test exporter_http hostile_ \
        -- --nocapture --test-threads=1 >"$out" 2>&1 || status=$?
    printf '%-60s | %6s | %9s | %10s | %s\n' "attack" "cases" "answered" "worst" "attack connections"
    printf '%s\n' "$(printf -- '-%.0s' $(seq 1 110))"
    grep -o 'HOSTILE|.*' "$out" | while IFS='|' read -r _ attack cases answered worst opened; do
        printf '%-60s | %6s | %9s | %10s | %s\n' "$attack" "$cases" "$answered" "$worst" "$opened"
    done
    if [ "$status" -ne 0 ]; then
        echo
        grep -E 'panicked|assert' "$out" | head -20
        echo "FAILED: a legitimate scrape went unanswered or took over 5 s (see above)"
        exit "$status"
    fi
    echo
    echo "PASSED: every legitimate scrape answered under every attack (the worst latency is in the table)"
    echo
fi
# The hostile inputs: one row per case, HOSTILE3|case|during|after|latency|memory|notes.
cargo test -q "${profile[@]}" -p dcgm-exporter --test hostile_attribution --test hostile_otlp \
    --test hostile_engine -- --nocapture --test-threads=1 >"$out" 2>&1 || status=$?
printf '| %s | %s | %s | %s | %s | %s |\n' "Case" "Scrapes answered during" "after" \
    "Latency min / median / max" "RSS before / peak / after" "Notes"
printf '|---|---|---|---|---|---|\n'
grep -o 'HOSTILE3|.*' "$out" | while IFS='|' read -r _ case during after latency rss notes; do
    printf '| %s | %s | %s | %s | %s | %s |\n' "$case" "$during" "$after" "$latency" "$rss" "$notes"
done
if [ "$status" -ne 0 ]; then
    echo
    grep -E 'panicked|assert' "$out" | head -20
    echo "FAILED: a hostile input cost a scrape, a label or a bound (see above)"
    exit "$status"
fi
echo
echo "PASSED: every scrape answered, every legitimate label kept, every bound held under every hostile input"
