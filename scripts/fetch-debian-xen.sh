#!/usr/bin/env bash
# Fetches Debian's Xen hypervisor for armhf (the package and version scripts/debian-xen.version
# pins) with an apt index of its own (never the machine's apt configuration or state) and
# extracts its image, which boots Debian's kernel as dom0 (tests/system/test_xen_boot.py).
#
#   scripts/fetch-debian-xen.sh [DIR]      (default build/xen; idempotent)
#
# Result: DIR/xen (the hypervisor's zImage-format image) and DIR/versions.txt. Offline or with
# the version gone from the index it says why on standard error and exits 0 without DIR/xen, so
# that a set-up goes on and the test skips with the reason (DIR/fetch-error.txt).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=debian-xen.version
. "$ROOT/scripts/debian-xen.version"
DIR=$(mkdir -p "${1:-$ROOT/build/xen}" && cd "${1:-$ROOT/build/xen}" && pwd)
want="package: $XEN_PACKAGE=$XEN_PACKAGE_VERSION"
if [ -s "$DIR/xen" ] && grep -qsxF "$want" "$DIR/versions.txt"; then
  exit 0
fi
rm -f "$DIR/xen" "$DIR/versions.txt" "$DIR/fetch-error.txt"
give_up() {
  echo "fetch-debian-xen: $1" | tee "$DIR/fetch-error.txt" >&2
  exit 0
}
# shellcheck source=scripts/armhf-apt.sh
. "$ROOT/scripts/armhf-apt.sh"
armhf_apt_setup "$DIR"
deb="$DIR/debs/${XEN_PACKAGE}_${XEN_PACKAGE_VERSION//:/%3a}_armhf.deb"
if [ ! -s "$deb" ]; then
  # A suite that fails to update is tolerated when the main armhf index arrived (apt-get
  # update also ends with status 0 when it could reach no mirror at all).
  apt-get "${APT[@]}" update >"$DIR/apt-update.log" 2>&1
  if ! ls "$DIR"/apt/lists/*_main_binary-armhf_Packages* >/dev/null 2>&1; then
    give_up "no armhf package index from Debian's mirror (offline?): see $DIR/apt-update.log"
  fi
  if ! (cd "$DIR/debs" && apt-get "${APT[@]}" download "$XEN_PACKAGE=$XEN_PACKAGE_VERSION" \
        >"$DIR/apt-download.log" 2>&1); then
    give_up "no $XEN_PACKAGE=$XEN_PACKAGE_VERSION in Debian's index (scripts/debian-xen.version pins it): see $DIR/apt-download.log"
  fi
fi
rm -rf "$DIR/extract" && mkdir -p "$DIR/extract"
dpkg-deb -x "$deb" "$DIR/extract" || give_up "cannot extract $deb"
image=$(ls "$DIR"/extract/boot/xen-*-armhf 2>/dev/null | head -n 1)
[ -n "$image" ] || give_up "no boot/xen-*-armhf in $deb"
cp "$image" "$DIR/xen"
echo "$want" >"$DIR/versions.txt"
cat "$DIR/versions.txt"
