#!/usr/bin/env bash
# Proves the .deb's Depends on a Debian that has none of Qt's libraries (root; .ci/run runs it).
#
# The machine that builds the package has every library the test suite needs, so installing the
# .deb there proves nothing about its Depends. This script makes a minimal Debian of this
# machine's release with debootstrap (--variant=minbase: no X, no GL, no fonts), installs the
# .deb there with `apt-get install --no-install-recommends` (Recommends are optional, so only
# Depends may be relied on), then runs the installed launcher's --self-check offscreen and on
# xcb against an Xvfb of this machine (its socket bind-mounted in). A library missing from
# Depends fails the self-check: the launcher cannot load Qt.
#
# Usage: packaging/linux/clean_root_test.sh DEB [MIRROR]
#        packaging/linux/clean_root_test.sh --prepare ROOT [MIRROR]   (only make the minimal root)
#        ETOS_CLEAN_ROOT=ROOT packaging/linux/clean_root_test.sh DEB  (use a root made that way)
# .ci/run prepares the root in the background while the tests run (debootstrap mostly waits on
# the network and the disk), then hands it over; the root is removed at the end either way.
set -euo pipefail

. /etc/os-release
fail() { echo "clean root test FAILED: $*" >&2; exit 1; }
step() { echo "clean root test: $*"; }

[ "$(id -u)" = 0 ] || fail "run as root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null || fail "debootstrap is not installed (apt-get install debootstrap)"

make_root() {  # ROOT MIRROR
  local target=$1 mirror=$2 begun=$SECONDS
  step "debootstrap --variant=minbase $VERSION_CODENAME ($mirror)"
  debootstrap --variant=minbase "$VERSION_CODENAME" "$target" "$mirror" >"$target.log" 2>&1 ||
    { tail -20 "$target.log" >&2; rm -f "$target.log"; fail "debootstrap"; }
  rm -f "$target.log"
  step "minimal root ready in $((SECONDS - begun)) s"
}

default_mirror() {
  local found
  found=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
  echo "${found:-http://deb.debian.org/debian}"
}

if [ "${1:-}" = "--prepare" ]; then
  [ -n "${2:-}" ] || fail "--prepare needs a directory"
  mkdir -p "$2"
  make_root "$(realpath "$2")" "${3:-$(default_mirror)}"
  exit 0
fi

deb=$(realpath "$1")
mirror=${2:-$(default_mirror)}
[ -f "$deb" ] || fail "$deb not found"

if [ -n "${ETOS_CLEAN_ROOT:-}" ]; then
  root=$(realpath "$ETOS_CLEAN_ROOT")
  [ -x "$root/usr/bin/apt-get" ] || fail "$root is not a prepared minimal root"
else
  root=$(mktemp -d /tmp/etos-clean-root.XXXXXX)
fi
xvfb_pid=""
cleanup() {
  [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
  for mnt in "$root/tmp/.X11-unix" "$root/proc"; do
    mountpoint -q "$mnt" && umount "$mnt"
  done
  # Only remove the root once nothing of this machine is mounted inside it.
  if ! grep -q " $root/" /proc/mounts; then rm -rf "$root"; fi
}
trap cleanup EXIT
started=$SECONDS

[ -n "${ETOS_CLEAN_ROOT:-}" ] || make_root "$root" "$mirror"

cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

begin=$SECONDS
in_root DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  "/tmp/$(basename "$deb")" >"$root/tmp/apt.log" 2>&1 ||
  { tail -30 "$root/tmp/apt.log" >&2; fail "apt-get install"; }
pulled=$(grep -c '^Setting up' "$root/tmp/apt.log" || true)
step "apt-get install pulled $((pulled - 1)) packages besides etos-desktop in $((SECONDS - begin)) s"

self_check() {
  local platform=$1
  shift
  if ! in_root QT_QPA_PLATFORM="$platform" "$@" etos-desktop --self-check >"$root/tmp/out" 2>"$root/tmp/err"; then
    cat "$root/tmp/out"
    cat "$root/tmp/err" >&2
    fail "etos-desktop --self-check on $platform"
  fi
  sed 's/^/  /' "$root/tmp/out"
  step "self-check on $platform passed"
}
self_check offscreen

if command -v Xvfb >/dev/null 2>&1; then
  # No auth cookie: the server listens only on its socket, which only the chroot shares.
  mkdir -p /tmp/.X11-unix "$root/tmp/.X11-unix"
  mount --bind /tmp/.X11-unix "$root/tmp/.X11-unix"
  display_file=$(mktemp)
  Xvfb -displayfd 3 -nolisten tcp -screen 0 1280x800x24 3>"$display_file" 2>/dev/null &
  xvfb_pid=$!
  for _ in $(seq 100); do [ -s "$display_file" ] && break; sleep 0.1; done
  [ -s "$display_file" ] || fail "Xvfb did not start"
  self_check xcb DISPLAY=":$(cat "$display_file")"
  rm -f "$display_file"
else
  step "Xvfb not installed: xcb not checked"
fi
step "passed in $((SECONDS - started)) s"
