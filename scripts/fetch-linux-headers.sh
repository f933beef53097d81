#!/usr/bin/env bash
# Fetches what building a kernel module for the set-up's Debian kernel needs, all under build/:
# linux-headers-ABI-armmp and linux-headers-ABI-common (armhf) and the host's linux-kbuild-6.1 (its
# fixdep, modpost and scripts), each at the version scripts/debian-linux.version pins, with an apt
# index of its own (never the machine's apt state), extracted into one root directory:
#
#   scripts/fetch-linux-headers.sh [DIR]     (default build/linux/headers; idempotent)
#
# Result: DIR/root/usr/src/linux-headers-ABI-armmp, the tree for `make -C ... M=... ARCH=arm
# CROSS_COMPILE=arm-linux-gnueabihf- modules`. The packages link scripts/ and tools/ relatively
# (../../lib/linux-kbuild-6.1), which resolves inside DIR/root; the one absolute path, the armmp
# Makefile's include of /usr/src/linux-headers-ABI-common/Makefile, is pointed at DIR/root.
# Exits 1 with the reason when the packages cannot be had (no network, a pin the index lost).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=debian-linux.version
. "$ROOT/scripts/debian-linux.version"
DIR=$(mkdir -p "${1:-$ROOT/build/linux/headers}" && cd "${1:-$ROOT/build/linux/headers}" && pwd)
KDIR=$DIR/root/usr/src/linux-headers-$LINUX_ABI-armmp
STAMP=$DIR/root/.vtoe-complete
WANT="$LINUX_ABI $LINUX_PACKAGE_VERSION"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ -f "$KDIR/Makefile" ]; then
  exit 0
fi

HOST_ARCH=$(dpkg --print-architecture)
mkdir -p "$DIR/apt/lists/partial" "$DIR/apt/cache/archives/partial" "$DIR/debs"
touch "$DIR/apt/status"
APT=(-q -o "Dir::State::Lists=$DIR/apt/lists" -o "Dir::Cache=$DIR/apt/cache"
     -o "Dir::State::status=$DIR/apt/status" -o APT::Architecture="$HOST_ARCH"
     -o APT::Architectures::="$HOST_ARCH" -o APT::Architectures::=armhf -o Debug::NoLocking=1)
# apt-get update can exit 0 having fetched nothing (no network): the index files tell.
apt-get "${APT[@]}" update >"$DIR/apt-update.log" 2>&1 || true
if ! ls "$DIR"/apt/lists/*_main_binary-armhf_Packages* >/dev/null 2>&1; then
  tail -n 5 "$DIR/apt-update.log" >&2
  echo "fetch-linux-headers: apt-get update failed (no network?): no package index;" \
       "the kernel module is not built" >&2
  exit 1
fi
packages=("linux-headers-$LINUX_ABI-armmp:armhf=$LINUX_PACKAGE_VERSION"
          "linux-headers-$LINUX_ABI-common=$LINUX_PACKAGE_VERSION"
          "linux-kbuild-6.1:$HOST_ARCH=$LINUX_PACKAGE_VERSION")
rm -f "$DIR"/debs/*.deb
if ! (cd "$DIR/debs" && apt-get "${APT[@]}" download "${packages[@]}" >"$DIR/download.log" 2>&1); then
  cat "$DIR/download.log" >&2
  echo "fetch-linux-headers: could not download ${packages[*]} (scripts/debian-linux.version" \
       "pins them; Debian's index keeps the current kernel ABI only)" >&2
  exit 1
fi
rm -rf "$DIR/root"
mkdir -p "$DIR/root"
for deb in "$DIR"/debs/*.deb; do dpkg-deb -x "$deb" "$DIR/root"; done
printf 'include %s/usr/src/linux-headers-%s-common/Makefile\n' "$DIR/root" "$LINUX_ABI" \
  >"$KDIR/Makefile"
echo "$WANT" >"$STAMP"
echo "fetch-linux-headers: $KDIR ($(cd "$DIR/debs" && ls ./*.deb | sed 's#^\./##' | tr '\n' ' '))"
