# Helpers shared by the end-to-end scripts (scripts/prometheus_e2e.sh, scripts/fleet_e2e.sh):
# pass/fail counting, background processes stopped at exit, waiting with a deadline, free
# loopback ports, Debian packages. Sourced (bash) from the repository root:
#
#   cd "$(dirname "$0")/.." && . scripts/lib/e2e.sh && e2e_start "fleet e2e" fleet-e2e
#
# e2e_start NAME PREFIX sets ROOT (the repository root), START, PASSED, FAILED, PIDS (append
# the pid of every background process: each is killed and waited for at exit) and TMP (a fresh
# directory, removed at exit); at exit it prints `NAME time: N s` and `N passed, N failed`, and
# the script exits non-zero unless something passed and nothing failed.

e2e_start() { # e2e_start NAME PREFIX
    E2E_NAME=$1
    ROOT=$PWD
    START=$(date +%s)
    PASSED=0
    FAILED=0
    PIDS=()
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/$2.XXXXXX")
    trap e2e_finish EXIT
    trap 'exit 1' INT TERM
}

pass() { echo "ok   - $*"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL - $*"; FAILED=$((FAILED + 1)); }
check() { # check DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}

e2e_cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null
    done
    rm -rf "$TMP"
}
e2e_finish() {
    e2e_cleanup
    trap - EXIT
    echo "$E2E_NAME time: $(($(date +%s) - START)) s"
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
    exit $?
}

# wait_for SECONDS COMMAND...: true once COMMAND succeeds (tried every 0.5 s); its last output
# is kept in $TMP/why for the caller to show on failure.
wait_for() {
    local deadline=$(($(date +%s) + $1))
    shift
    until "$@" >"$TMP/why" 2>&1; do
        [ "$(date +%s)" -ge "$deadline" ] && return 1
        sleep 0.5
    done
}
# expect DESCRIPTION SECONDS COMMAND...: check with a deadline, the reason shown on failure.
expect() {
    local what=$1
    shift
    if wait_for "$@"; then pass "$what"; else fail "$what: $(tail -3 "$TMP/why")"; fi
}

# free_ports N: N distinct free loopback TCP ports, one a line (all held open while chosen, so
# none is handed out twice).
free_ports() {
    python3 - "$1" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print("\n".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# need_debian_packages PACKAGE=COMMAND...: installs (as root, with apt-get) each PACKAGE whose
# COMMAND is not on the PATH; a no-op where there is nothing to install or no way to.
need_debian_packages() {
    local need=() spec
    for spec in "$@"; do
        command -v "${spec#*=}" >/dev/null || need+=("${spec%%=*}")
    done
    if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        echo "# installing Debian's ${need[*]}"
        apt-get update -qq >/dev/null 2>&1
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" \
            >"$TMP/apt.log" 2>&1 || tail -20 "$TMP/apt.log"
    fi
}
# need_tools COMMAND...: a failure (and exit) for the first COMMAND not on the PATH.
need_tools() {
    local tool
    for tool in "$@"; do
        if ! command -v "$tool" >/dev/null; then
            fail "$tool is installed"
            exit 1
        fi
    done
}
