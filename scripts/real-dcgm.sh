#!/usr/bin/env bash
# A real libdcgm release beside the checkout (../shared/realdcgm-VERSION), made loadable.
#
#   scripts/real-dcgm.sh dir [VERSION]   prints the staged directory (bin/, lib/) of VERSION
#                                        (4.6.0 by default; 4.5.3, 4.1.1 and 3.3.9 too); exit 3
#                                        when it is absent (a user's fresh clone), with the
#                                        reason on stderr. Its library is lib/libdcgm.so.4
#                                        (lib/libdcgm.so.3 for 3.x).
#
# Why a staged copy: in ../shared the library's version links (libdcgm.so.4 -> libdcgm.so.4.6.0,
# and the same for every module) are stored as small text files holding the target's name, which
# the dynamic loader rejects ("file too short"). The copy under target/ (git-ignored, never
# committed) turns each of those files back into a symbolic link. The copy is refreshed when the
# source is newer than it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in
dir) ;;
*) echo "usage: $0 dir [VERSION]" >&2; exit 2 ;;
esac
version=${2:-4.6.0}
case "$version" in
[0-9]*.[0-9]*.[0-9]*) ;;
*) echo "usage: $0 dir [VERSION] (a release number such as 4.5.3, not $version)" >&2; exit 2 ;;
esac
if [ "$version" = 4.6.0 ]; then
    src=${DCGM_REAL_SRC:-${DCGM_SHARED_DIR:-$root/../shared}/realdcgm-4.6.0}
else
    src=${DCGM_SHARED_DIR:-$root/../shared}/realdcgm-$version
fi
dst=${CARGO_TARGET_DIR:-$root/target}/realdcgm-$version

if [ ! -f "$src/lib/libdcgm.so.$version" ] || [ ! -x "$src/bin/nv-hostengine" ]; then
    echo "real DCGM not found at $src (a fresh clone has none): the real-library tier is skipped" >&2
    exit 3
fi
src=$(cd "$src" && pwd)
mkdir -p "$(dirname "$dst")"
exec 9>"$dst.lock"
flock 9
if [ ! -f "$dst/.staged" ] || [ "$src/lib/libdcgm.so.$version" -nt "$dst/.staged" ]; then
    rm -rf "$dst"
    mkdir -p "$dst/lib" "$dst/bin"
    for f in "$src"/lib/*; do
        name=$(basename "$f")
        # A real symbolic link (a source tree that kept its links) stays one; reading it as a
        # stub would read the ELF it points to, which bash warns about ("ignored null byte").
        # A stub is read with its NUL bytes dropped, so no binary reaches a substitution.
        if [ -L "$f" ]; then
            ln -s "$(readlink "$f")" "$dst/lib/$name"
        elif [ "$(stat -c %s "$f")" -lt 256 ] \
            && target=$(tr -d '\0' <"$f") && [ -n "$target" ] && [ -f "$src/lib/$target" ]; then
            ln -s "$target" "$dst/lib/$name"
        else
            cp "$f" "$dst/lib/$name"
        fi
    done
    # nv-hostengine finds libdcgm through RUNPATH $ORIGIN/../lib, so it lives beside the copy.
    cp "$src/bin/nv-hostengine" "$dst/bin/"
    chmod -R u+w "$dst"
    touch "$dst/.staged"
fi
echo "$dst"
