#!/usr/bin/env bash
# Remote skew: the project's tools with one real libdcgm release as the client library, talking
# to an nv-hostengine of another release (both from ../shared/realdcgm-*, replaying the H200
# capture through DCGM's injection NVML). Prints a markdown table: one row per (client, engine)
# pair, one column per tool, each cell the tool's exit status (0 ok, 4 "not in this DCGM
# release", other: the first words of its error).
#   bash scripts/remote-skew.sh            # needs the tools built: cargo build -p dcgm-tools
set -u
cd "$(dirname "$0")/.."
T=${TOOLS:-target/debug}
releases=(3.3.9 4.1.1 4.5.3 4.6.0)
capture=${DCGM_SHARED_DIR:-../shared}/fixtures/nvml-capture-2xh200.yaml
tools=("dmon -c 1" "query -q -d CLOCK" "health -c 1" "topology" "nvlink" "discovery" "diag -r 1")
lib_of() { local d; d=$(bash scripts/real-dcgm.sh dir "$1") || return 1; ls "$d"/lib/libdcgm.so.[34] | head -1; }
printf '| client lib → engine |'; for t in "${tools[@]}"; do printf ' `%s` |' "$t"; done; echo
printf '|---|'; for _ in "${tools[@]}"; do printf -- '---|'; done; echo
for engine in "${releases[@]}"; do
    d=$(bash scripts/real-dcgm.sh dir "$engine") || { echo "no $engine: skipped" >&2; continue; }
    port=$((5700 + RANDOM % 200))
    NVML_INJECTION_MODE=True NVML_YAML_FILE=$capture "$d/bin/nv-hostengine" -n -b 127.0.0.1 -p $port \
        -f /tmp/skew-he-$engine.log >/dev/null 2>&1 &
    he=$!
    sleep 2
    for client in "${releases[@]}"; do
        lib=$(lib_of "$client") || continue
        printf '| %s → %s |' "$client" "$engine"
        for t in "${tools[@]}"; do
            read -r -a w <<<"$t"
            err=$(timeout 60 "$T/dcgm-${w[0]}" --lib "$lib" --host 127.0.0.1:$port "${w[@]:1}" 2>&1 >/dev/null)
            rc=$?
            case $rc in
            0) printf ' ✓ |' ;;
            4) printf ' needs %s |' "$(echo "$err" | grep -o 'needs DCGM [0-9.]*' | head -1 | cut -d' ' -f3)" ;;
            *) printf ' %s: %s |' "$rc" "$(echo "$err" | grep -v '^\[' | grep -m1 . | cut -c1-60 | tr '|' '/')" ;;
            esac
        done
        echo
    done
    kill $he 2>/dev/null
    wait $he 2>/dev/null
done
