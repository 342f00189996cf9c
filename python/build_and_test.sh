#!/usr/bin/env bash
# Builds the `dcgm` Python wheel with the dcgm-sim simulator inside, installs it in a fresh
# virtualenv and tests it there: mypy.stubtest on the package, mypy on the tests and the
# example, then the pytest suite (python/tests, which also runs
# examples/upstream_style_reader.py).
#
# Needs: cargo, python3 (3.9+) with the venv module, and PyPI for the pinned tools below.
#
# Environment:
#   DCGM_PY_WORK     scratch directory (default: <repo>/target/python): the tools virtualenv
#                    (kept between runs); each run builds its wheel and test virtualenv in a
#                    directory of its own there, removed at exit (DCGM_PY_KEEP=1 keeps it)
#   DCGM_PY_PROFILE  debug (default) or release. Debug: in `scripts/test.sh`, right after
#                    `cargo test`, dcgm, dcgm-reader and dcgm-sim are already built in the dev
#                    profile, so only pyo3 and the extension module are compiled (tens of
#                    seconds on 2 cores); a release build compiles everything again. Build
#                    wheels to publish with DCGM_PY_PROFILE=release.
#   PYTHON           the interpreter to make the virtualenvs from (default: python3)
#
# Exits non-zero if anything fails, including a pytest run that collected no test.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${DCGM_PY_WORK:-$ROOT/target/python}
PROFILE=${DCGM_PY_PROFILE:-debug}
PYTHON=${PYTHON:-python3}
MATURIN_VERSION=1.16.0
PYTEST_VERSION=9.2.0
MYPY_VERSION=2.4.1

# The tests choose their library themselves: nothing from the caller's environment.
unset DCGM_LIB_PATH DCGM_SIM_LIB DCGM_SIM_CONFIG DCGM_SIM_FAULTS DCGM_COMPAT_BLANK_SENTINELS

started=$(date +%s)
step() { echo "== [$(( $(date +%s) - started ))s] $*"; }

case "$PROFILE" in
    release) cargo_profile=(--release); target_subdir=release ;;
    debug) cargo_profile=(); target_subdir=debug ;;
    *) echo "DCGM_PY_PROFILE must be debug or release, not $PROFILE" >&2; exit 2 ;;
esac
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}

mkdir -p "$WORK"
export PIP_DISABLE_PIP_VERSION_CHECK=1
# This run's own wheel and test virtualenv: runs at the same time do not clobber each other.
RUN=$(mktemp -d "$WORK/run.XXXXXX")
if [[ ${DCGM_PY_KEEP:-0} == 1 ]]; then
    trap 'echo "kept $RUN"' EXIT
else
    # (a failure before the sdist step leaves its background build running: stop it first)
    trap 'if [ -n "${sdist_job:-}" ]; then kill "$sdist_job" 2>/dev/null || true; fi; wait 2>/dev/null || true; rm -rf "$RUN"' EXIT
fi

step "tools virtualenv (maturin $MATURIN_VERSION, pytest $PYTEST_VERSION, mypy $MYPY_VERSION)"
TOOLS=$WORK/tools-venv
pins="maturin==$MATURIN_VERSION pytest==$PYTEST_VERSION mypy==$MYPY_VERSION"
exec 9>"$WORK/.tools-venv.lock"
flock 9
if [[ ! -x $TOOLS/bin/python || "$(cat "$TOOLS/.pins" 2>/dev/null)" != "$pins" ]]; then
    rm -rf "$TOOLS"
    "$PYTHON" -m venv "$TOOLS"
    # shellcheck disable=SC2086
    "$TOOLS/bin/python" -m pip install --quiet $pins
    echo "$pins" > "$TOOLS/.pins"
fi
flock -u 9

step "cargo build -p dcgm-sim ($PROFILE)"
(cd "$ROOT" && cargo build "${cargo_profile[@]}" -p dcgm-sim)
mkdir -p "$ROOT/python/pysrc/dcgm/_sim"
cp "$TARGET_DIR/$target_subdir/libdcgm_sim.so" "$RUN/libdcgm_sim.so"
mv -f "$RUN/libdcgm_sim.so" "$ROOT/python/pysrc/dcgm/_sim/libdcgm_sim.so"  # atomic replace

step "maturin build ($PROFILE)"
(cd "$ROOT/python" && "$TOOLS/bin/maturin" build "${cargo_profile[@]}" --out "$RUN/wheels" --interpreter "$TOOLS/bin/python")
wheel=$(ls "$RUN"/wheels/dcgm-*.whl)
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"
"$TOOLS/bin/python" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for want in ("dcgm/_sim/libdcgm_sim.so", "dcgm/_native.abi3.so", "dcgm/py.typed", "dcgm/__init__.pyi"):
    if want not in names:
        sys.exit("the wheel lacks " + want)
for want in ("LICENSE-MIT", "LICENSE-APACHE"):
    if not any(n.endswith(".dist-info/licenses/" + want) for n in names):
        sys.exit("the wheel's dist-info lacks licenses/" + want)
PY

step "fresh test virtualenv"
TEST=$RUN/test-venv
"$PYTHON" -m venv "$TEST"
"$TEST/bin/python" -m pip install --quiet "$wheel" "pytest==$PYTEST_VERSION" "mypy==$MYPY_VERSION"

# The source distribution (checked below): its build and its install into a fresh virtualenv
# compile the extension in the release profile, two to three minutes on 2 cores, so they run in
# the background beside mypy and pytest (which keep about one core busy); a failure there fails
# this script at the sdist step.
SDIST=$RUN/sdist
SDIST_VENV=$RUN/sdist-venv
(
    set -e
    cd "$ROOT/python"
    "$TOOLS/bin/maturin" sdist --out "$SDIST"
    "$PYTHON" -m venv "$SDIST_VENV"
    "$SDIST_VENV/bin/python" -m pip install --quiet "$SDIST"/dcgm-*.tar.gz "pytest==$PYTEST_VERSION"
) >"$RUN/sdist.log" 2>&1 &
sdist_job=$!

# Run from this run's directory, so that `import dcgm` can only find the installed wheel.
cd "$RUN"

step "mypy.stubtest dcgm"
"$TEST/bin/python" -m mypy.stubtest dcgm --allowlist "$ROOT/python/stubtest-allowlist.txt"

step "mypy on the tests and examples (the stubs as a user's code sees them), and on the package's source"
# python/tests/compat drives NVIDIA's untyped API (dcgm.compat builds its names at import):
# it is checked against NVIDIA's own modules, not by mypy. The package's own source, dcgm.compat
# included, is checked as source (mypy does not report errors inside an installed package).
"$TEST/bin/python" -m mypy --no-incremental --exclude '/tests/compat/' \
    "$ROOT/python/tests" "$ROOT/python/contract" "$ROOT/python/examples"
"$TEST/bin/python" -m mypy --no-incremental "$ROOT/python/pysrc/dcgm"

step "pytest"
set +e
"$TEST/bin/python" -m pytest "$ROOT/python/tests" -p no:cacheprovider -ra
rc=$?
set -e
if [[ $rc -eq 5 ]]; then
    echo "pytest collected no test: that is a failure" >&2
    exit 1
elif [[ $rc -ne 0 ]]; then
    exit "$rc"
fi

# The tests that read ../shared once more with it hidden, as on a user's fresh clone: each must
# skip with its reason, none fail (CI always has ../shared, so a break there would go unseen).
step "pytest with ../shared hidden (DCGM_SHARED_DIR=an empty folder): skips, no failure"
mkdir -p "$RUN/no-shared"
env -u DCGM_REQUIRE_REAL -u DCGM_H200_TRACES DCGM_SHARED_DIR="$RUN/no-shared" \
    "$TEST/bin/python" -m pytest "$ROOT/python/tests/compat" "$ROOT/python/tests/test_doctor.py" \
    -p no:cacheprovider -q | tail -3 | sed 's/^/without ..\/shared: /'

step "contract pytest on dcgm-sim (python/contract)"
"$TEST/bin/python" -m pytest "$ROOT/python/contract" -p no:cacheprovider -q

# The same contracts on the real libdcgm 4.6.0 beside the checkout, with DCGM's injection NVML
# replaying the H200 capture, through the package installed in virtualenv $1 ($2 names it);
# skipped, with the reason, where the library is absent.
real_contract() {
    local python=$1 what=$2 real
    if real=$(bash "$ROOT/scripts/real-dcgm.sh" dir); then
        step "contract pytest on the real libdcgm 4.6.0 ($what)"
        DCGM_CONTRACT_LIB="$real/lib/libdcgm.so.4" NVML_INJECTION_MODE=True \
            NVML_YAML_FILE="${DCGM_SHARED_DIR:-$ROOT/../shared}/fixtures/nvml-capture-h200.yaml" \
            "$python" -m pytest "$ROOT/python/contract" -p no:cacheprovider -q
    elif [[ "${DCGM_REQUIRE_REAL:-}" == 1 ]]; then
        echo "DCGM_REQUIRE_REAL=1: the real-library contract pass ($what) must run here" >&2
        exit 1
    else
        echo "contract pytest on the real libdcgm ($what): SKIPPED (see the line above)"
    fi
}
real_contract "$TEST/bin/python" wheel

# The source distribution: what `pip install dcgm-<version>.tar.gz` does on a user's machine.
# maturin packs the extension crate with the workspace crates it needs (dcgm, dcgm-sys with its
# field table and build script, dcgm-reader); pip builds it in an isolated environment with
# maturin from PyPI, in the release profile, exactly as for a user. A PEP 517 build makes no
# separate simulator library, but the extension links dcgm-sim: the checks below hold an sdist
# install to simulating through the extension (and to a clear error from simulator_path(), which
# other programs would load), and run the contract pass on the real libdcgm through it.
step "sdist: build (begun in the background above), contents, metadata"
if ! wait "$sdist_job"; then
    cat "$RUN/sdist.log"
    echo "the sdist's build or its install into a fresh virtualenv failed (above)" >&2
    exit 1
fi
cat "$RUN/sdist.log"
sdist=$(ls "$SDIST"/dcgm-*.tar.gz)
echo "sdist: $sdist ($(du -h "$sdist" | cut -f1))"
"$TOOLS/bin/python" - "$sdist" <<'PY'
import email, sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    meta = email.message_from_bytes(t.extractfile(t.getmember(t.getnames()[0].split("/")[0] + "/PKG-INFO")).read())
for want in ("pyproject.toml", "Cargo.toml", "Cargo.lock", "python/Cargo.toml", "dcgm-sys/build.rs",
             "dcgm-sys/data/fields.tsv", "dcgm/src/lib.rs", "dcgm-reader/src/lib.rs", "dcgm-sim/src/lib.rs",
             "pysrc/dcgm/__init__.py", "pysrc/dcgm/py.typed", "LICENSE-MIT", "LICENSE-APACHE"):
    if want not in names:
        sys.exit("the sdist lacks " + want)
if any(n.endswith(".so") for n in names):
    sys.exit("the sdist carries a compiled library: " + ", ".join(n for n in names if n.endswith(".so")))
for key in ("Name", "Version", "Summary", "Requires-Python", "Description-Content-Type"):
    if not meta.get(key):
        sys.exit("the sdist's PKG-INFO has no " + key)
if not (meta.get("License") or meta.get("License-Expression")) or not meta.get_all("Classifier"):
    sys.exit("the sdist's PKG-INFO has no license or no classifiers")
print("sdist metadata:", meta["Name"], meta["Version"], "|", meta["Summary"])
PY

step "sdist: installed into a fresh virtualenv (isolated build, release profile; in the background above)"
"$SDIST_VENV/bin/python" - <<'PY'
import importlib.metadata, dcgm
assert dcgm.__version__ == importlib.metadata.version("dcgm"), (dcgm.__version__, importlib.metadata.version("dcgm"))
try:
    dcgm.simulator_path()
except dcgm.structs.DCGMError_LibraryNotFound as e:
    assert "no simulator" in str(e), e
else:
    raise SystemExit("an sdist install claims a bundled simulator")
with dcgm.Handle.embedded(simulate=True) as h:
    assert h.is_simulated and "_native" in h.library_path, h.library_path
    gpus = h.system().gpu_ids()
    assert gpus, "the simulator linked into the extension has no GPU"
print("sdist install:", dcgm.__version__, "imports; simulate=True works through the extension (%d GPUs);"
      " simulator_path() says there is no separate library" % len(gpus))
PY
real_contract "$SDIST_VENV/bin/python" sdist

step "done"
