#!/usr/bin/env bash
# Smoke test of the .deb on this machine (root; .ci/run runs it after the build):
#   install it with apt-get, run the installed launcher's --self-check offscreen with a temporary
#   data folder (and on xcb under Xvfb when xvfb-run is there), check the menu entry and the icons,
#   remove the package and check that nothing of it is left.
# On this machine Qt's libraries are already installed for the test suite, so this run cannot show
# that the package's Depends are complete: clean_root_test.sh does that on a fresh Debian.
#
# Usage: packaging/linux/smoke_test.sh [DEB]   (default: dist/etos-desktop_<version>_<arch>.deb)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$root/etos_desktop/__init__.py")
deb=$(realpath "${1:-$root/dist/etos-desktop_${version}_$(dpkg --print-architecture).deb}")

fail() { echo "smoke test FAILED: $*" >&2; exit 1; }
step() { echo "smoke test: $*"; }

[ "$(id -u)" = 0 ] || fail "run as root (it installs a package)"
[ -f "$deb" ] || fail "$deb not found (build it with: python packaging/build.py)"

tmp=$(mktemp -d)
finish() {
  local status=$?
  # A failed run must not leave the package on the machine (CI machines are reused).
  if [ "$status" != 0 ] && dpkg -s etos-desktop >/dev/null 2>&1; then
    apt-get remove -y -qq etos-desktop >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
}
trap finish EXIT
started=$SECONDS

# A copy left by an earlier run would make this an upgrade instead of an install.
if dpkg -s etos-desktop >/dev/null 2>&1; then
  apt-get remove -y -qq etos-desktop >/dev/null
fi

step "apt-get install $(basename "$deb")"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$tmp/apt.log" 2>&1 ||
  { cat "$tmp/apt.log" >&2; fail "apt-get install"; }
dpkg -s etos-desktop | grep -qx "Version: $version" || fail "the installed version is not $version"
# The system's PATH: a venv on the caller's PATH may hold the pip-installed etos-desktop script.
[ "$(PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v etos-desktop)" = /usr/bin/etos-desktop ] ||
  fail "etos-desktop is not on the system PATH as /usr/bin/etos-desktop"
[ "$(readlink -f /usr/bin/etos-desktop)" = /opt/etos-desktop/etos-desktop ] ||
  fail "/usr/bin/etos-desktop does not lead to /opt/etos-desktop/etos-desktop"

# --self-check of the installed launcher: a clean environment, its own HOME and data folder.
self_check() {
  local platform=$1
  shift
  local data="$tmp/data-$platform"
  local begin=$SECONDS
  if ! env -i PATH=/usr/bin:/bin HOME="$tmp/home" LANG=C.UTF-8 QT_QPA_PLATFORM="$platform" \
    "$@" etos-desktop --self-check --data-dir "$data" >"$tmp/out" 2>"$tmp/err"; then
    cat "$tmp/out"
    cat "$tmp/err" >&2
    fail "etos-desktop --self-check on $platform"
  fi
  sed 's/^/  /' "$tmp/out"
  [ -f "$data/etos.db" ] || fail "the self-check did not use its data folder $data"
  step "self-check on $platform passed in $((SECONDS - begin)) s"
}
mkdir -p "$tmp/home"
self_check offscreen
if command -v xvfb-run >/dev/null 2>&1; then
  self_check xcb xvfb-run -a
else
  step "xvfb-run not installed: xcb not checked"
fi

# The menu entry and its icon.
entry=/usr/share/applications/etos-desktop.desktop
[ -f "$entry" ] || fail "$entry missing"
grep -qx "Exec=etos-desktop" "$entry" || fail "$entry does not start etos-desktop"
grep -qx "Icon=etos-desktop" "$entry" || fail "$entry names another icon"
if command -v desktop-file-validate >/dev/null 2>&1; then
  desktop-file-validate "$entry" || fail "desktop-file-validate $entry"
fi
for size in 16 24 32 48 64 128 256 512; do
  icon=/usr/share/icons/hicolor/${size}x${size}/apps/etos-desktop.png
  [ -f "$icon" ] || fail "$icon missing"
  # PNG: 8-byte signature, IHDR length and type, then the width as a big-endian 32-bit number.
  width=$(od -An -tu1 -j16 -N4 "$icon" | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}')
  [ "$width" = "$size" ] || fail "$icon is $width px wide"
done
[ -f /usr/share/icons/hicolor/scalable/apps/etos-desktop.svg ] || fail "scalable icon missing"
step "menu entry and icons in place"

step "apt-get remove etos-desktop"
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq etos-desktop >"$tmp/apt.log" 2>&1 ||
  { cat "$tmp/apt.log" >&2; fail "apt-get remove"; }
for path in /opt/etos-desktop /usr/bin/etos-desktop "$entry" \
  /usr/share/icons/hicolor/256x256/apps/etos-desktop.png; do
  [ ! -e "$path" ] && [ ! -L "$path" ] || fail "$path is still there after removal"
done
step "passed in $((SECONDS - started)) s"
