#!/usr/bin/env bash
# Runs every test that reads ../shared once more with ../shared hidden (DCGM_SHARED_DIR pointed
# at an empty folder, DCGM_REQUIRE_REAL unset), as on a user's fresh clone: each must skip and
# say why, never fail. Run by .ci/run after scripts/test.sh (CI always has ../shared, so without
# this pass a test that breaks on a fresh clone would go unseen). Exit status 1 on a failure,
# or when nothing reported a skip (then the hiding did not work).
set -uo pipefail
cd "$(dirname "$0")/.."
empty=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$empty" "$log"' EXIT
export DCGM_SHARED_DIR=$empty
unset DCGM_REQUIRE_REAL DCGM_H200_TRACES
rc=0
# The same feature set as scripts/test.sh's `cargo test --workspace --all-targets`, so nothing
# is rebuilt.
cargo test --workspace --no-fail-fast \
    --test nvsmi_formats --test query --test stat --test top --test doctor \
    --test doctor_browser --test hostengine_auto --test contract --test differential \
    --test fixture_phases --test hostengines --test exporter_health --test releases \
    --test hostile_engine --test silent_listener --test doctor_releases --test real_releases 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ -d python/tests ] && [ -n "${DCGM_PY_VENV:-}" ] && [ -x "$DCGM_PY_VENV/bin/python" ]; then
    "$DCGM_PY_VENV/bin/python" -m pytest -q python/tests/compat 2>&1 | tee -a "$log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
fi
# go-dcgm's tests (scripts/go-peers.sh, without the samples: they never read ../shared).
GO_PEERS_SAMPLES=0 GO_PEERS_PREBUILT=1 bash scripts/go-peers.sh 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
skips=$(grep -c 'SKIPPED' "$log" || true)
failed=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s+=$1} END {print s+0}')
echo "without ../shared: $skips skip lines, $failed failed, exit status $rc"
if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ]; then
    echo "FAILED: a test that reads ../shared fails instead of skipping where it is absent"
    exit 1
fi
if [ "$skips" -eq 0 ]; then
    echo "FAILED: no test reported a skip with ../shared hidden"
    exit 1
fi
echo PASSED
