#!/usr/bin/env bash
# Fetches Debian's armhf Linux kernel (linux-image-*-armmp) and busybox-static from the Debian
# package registry with an apt index of its own (never the machine's apt configuration or state),
# extracts the zImage and builds an initramfs whose /init prints a marker and powers off.
#
#   scripts/fetch-debian-linux.sh [DIR]      (default build/linux; idempotent)
#
# Results: DIR/vmlinuz (zImage), DIR/initrd.cpio (newc), DIR/versions.txt.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(mkdir -p "${1:-$ROOT/build/linux}" && cd "${1:-$ROOT/build/linux}" && pwd)
if [ -s "$DIR/vmlinuz" ] && [ -s "$DIR/initrd.cpio" ]; then
  exit 0
fi
mkdir -p "$DIR/apt/lists/partial" "$DIR/apt/cache/archives/partial" "$DIR/debs" "$DIR/extract"
touch "$DIR/apt/status"
APT=(-q -o "Dir::State::Lists=$DIR/apt/lists" -o "Dir::Cache=$DIR/apt/cache"
     -o "Dir::State::status=$DIR/apt/status" -o APT::Architecture=armhf
     -o APT::Architectures::=armhf -o Debug::NoLocking=1)
# A suite that fails to update (a mirror in sync, say) is tolerated when the main armhf index
# arrived: the kernel and busybox come from there.
if ! apt-get "${APT[@]}" update >"$DIR/apt-update.log" 2>&1; then
  if ! ls "$DIR"/apt/lists/*_main_binary-armhf_Packages* >/dev/null 2>&1; then
    cat "$DIR/apt-update.log" >&2
    echo "fetch-debian-linux: apt-get update failed (no armhf package index)" >&2
    exit 1
  fi
  echo "fetch-debian-linux: apt-get update reported errors (see $DIR/apt-update.log); going on" >&2
fi
# The metapackage names the current kernel package.
kernel=$(apt-cache "${APT[@]}" depends linux-image-armmp |
         sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-armmp\)$/\1/p' | head -n 1)
if [ -z "$kernel" ]; then
  echo "fetch-debian-linux: no linux-image-*-armmp behind linux-image-armmp" >&2
  exit 1
fi
(cd "$DIR/debs" && apt-get "${APT[@]}" download "$kernel" busybox-static >/dev/null)
for deb in "$DIR"/debs/*.deb; do dpkg-deb -x "$deb" "$DIR/extract"; done
vmlinuz=$(ls "$DIR"/extract/boot/vmlinuz-*-armmp | head -n 1)
cp "$vmlinuz" "$DIR/vmlinuz"
python3 "$ROOT/scripts/make_initramfs.py" --busybox "$DIR/extract/bin/busybox" \
  --out "$DIR/initrd.cpio"
{
  echo "kernel: $kernel ($(basename "$vmlinuz"))"
  (cd "$DIR/debs" && ls ./*.deb | sed 's#^\./#deb: #')
} >"$DIR/versions.txt"
cat "$DIR/versions.txt"
