#!/usr/bin/env bash
# Proves README's quick-start install line on a fresh Debian of this machine's release (root).
#
# A minimal Debian (debootstrap --variant=minbase) plus what a fresh desktop install has anyway
# (python3, sudo, ca-certificates) gets a copy of this checkout; README's Debian/Ubuntu line is
# taken from README.md word for word and run there, except that the final launch becomes
# `--self-check` offscreen (there is no display in the chroot). With --tests the README's test
# command runs there too (the whole suite: ~10 minutes).
#
# Usage: packaging/linux/quickstart_test.sh [--tests] [MIRROR]
set -euo pipefail
cd "$(dirname "$0")/../.."

tests=0
if [ "${1:-}" = --tests ]; then tests=1; shift; fi
. /etc/os-release
mirror=${1:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)}
mirror=${mirror:-http://deb.debian.org/debian}
fail() { echo "quick start test FAILED: $*" >&2; exit 1; }
step() { echo "quick start test: $*"; }
[ "$(id -u)" = 0 ] || fail "run as root (debootstrap, chroot, mount)"

# The first ```bash block after "## Quick start" is the install line, the second the test line.
install_line=$(awk '/^## Quick start/{q=1} q&&/^```bash/{getline; print; exit}' README.md)
test_line=$(awk '/^## Quick start/{q=1} q&&/^```bash/{n++; if(n==2){getline; print; exit}}' README.md)
case "$install_line" in
  "sudo apt-get install "*"python3 -m venv .venv"*"&& .venv/bin/etos-desktop") ;;
  *) fail "unexpected install line: $install_line" ;;
esac
launch=" && .venv/bin/etos-desktop"
run_line="${install_line%"$launch"} && QT_QPA_PLATFORM=offscreen .venv/bin/etos-desktop --self-check"

root=$(mktemp -d /tmp/etos-quickstart.XXXXXX)
cleanup() {
  mountpoint -q "$root/proc" && umount "$root/proc"
  grep -q " $root/" /proc/mounts || rm -rf "$root"
}
trap cleanup EXIT
started=$SECONDS
step "debootstrap --variant=minbase $VERSION_CODENAME ($mirror)"
debootstrap --variant=minbase --include=python3,sudo,ca-certificates "$VERSION_CODENAME" "$root" \
  "$mirror" >"$root.log" 2>&1 || { tail -20 "$root.log" >&2; rm -f "$root.log"; fail "debootstrap"; }
rm -f "$root.log"
step "fresh root ready in $((SECONDS - started)) s ($(chroot "$root" python3 --version))"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# This machine's CA bundle: a network that inspects TLS has its own root, which a fresh Debian
# does not trust (pip would fail on certificates, not on the README line).
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
mount -t proc proc "$root/proc"
mkdir -p "$root/home/user/etos-desktop"
git archive HEAD | tar -x -C "$root/home/user/etos-desktop"
in_root() {
  chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive bash -c "cd /home/user/etos-desktop && $1"
}
# The system Python refuses a bare pip install (PEP 668): the README line must not need one.
if in_root "pip3 install --dry-run pytest" >/dev/null 2>&1; then
  step "note: this root's pip accepted a system install"
fi
begin=$SECONDS
step "running README's line: $run_line"
in_root "$run_line" >"$root/quickstart.log" 2>&1 || { tail -30 "$root/quickstart.log" >&2; fail "install line"; }
tail -n 25 "$root/quickstart.log" | grep -E "^(ok|FAIL|  )|self-check" || true
step "install line and self-check passed in $((SECONDS - begin)) s"
if [ "$tests" = 1 ]; then
  begin=$SECONDS
  step "running README's test line: $test_line"
  in_root "rm -rf .venv && $test_line" >"$root/tests.log" 2>&1 ||
    { tail -30 "$root/tests.log" >&2; fail "test line"; }
  tail -n 3 "$root/tests.log"
  step "test line passed in $((SECONDS - begin)) s"
fi
step "passed in $((SECONDS - started)) s"
