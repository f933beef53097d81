#!/usr/bin/env bash
# Fetches Debian's armhf Linux kernel (linux-image-ABI-armmp at the version
# scripts/debian-linux.version pins) and busybox-static from the Debian package registry with an
# apt index of its own (never the machine's apt configuration or state),
# extracts the zImage and builds an initramfs whose /init prints a marker and powers off.
#
#   scripts/fetch-debian-linux.sh [DIR]      (default build/linux; idempotent)
#
# Results: DIR/vmlinuz (zImage), DIR/initrd.cpio (newc), DIR/versions.txt, and DIR/System.map
# (the kernel's symbols, for GDB: Debian's package ships a stub whose one line says the real one
# is in the -dbg package, 600 MB; so the script boots the kernel once on qemu-system-arm with an
# initramfs that prints /proc/kallsyms, which has System.map's format; about 10 s).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=debian-linux.version
. "$ROOT/scripts/debian-linux.version"
kernel=linux-image-$LINUX_ABI-armmp
DIR=$(mkdir -p "${1:-$ROOT/build/linux}" && cd "${1:-$ROOT/build/linux}" && pwd)
# Images of another kernel than the pinned one are fetched anew (the module's headers follow the pin).
if ! grep -qs "^kernel: $kernel " "$DIR/versions.txt"; then
  rm -f "$DIR/vmlinuz" "$DIR/initrd.cpio" "$DIR/System.map"
  rm -rf "$DIR/extract" "$DIR/debs"
fi
if [ -s "$DIR/vmlinuz" ] && [ -s "$DIR/initrd.cpio" ] && [ -s "$DIR/System.map" ]; then
  exit 0
fi

# System.map: Debian's own when it is a real one, else the running kernel's /proc/kallsyms.
system_map() {
  local shipped
  shipped=$(ls "$DIR"/extract/boot/System.map-* 2>/dev/null | head -n 1 || true)
  if [ -n "$shipped" ] && [ "$(wc -l <"$shipped")" -gt 1000 ]; then
    cp "$shipped" "$DIR/System.map"
    return
  fi
  if ! command -v qemu-system-arm >/dev/null || [ ! -x "$DIR/extract/bin/busybox" ]; then
    echo "fetch-debian-linux: no System.map (needs qemu-system-arm and $DIR/extract);" \
         "the GDB test at start_kernel will be skipped" >&2
    return
  fi
  python3 "$ROOT/scripts/make_initramfs.py" --busybox "$DIR/extract/bin/busybox" --kallsyms \
    --out "$DIR/initrd-kallsyms.cpio"
  timeout 300 qemu-system-arm -M virt,highmem=off -cpu cortex-a15 -nodefaults -display none \
    -serial stdio -kernel "$DIR/vmlinuz" -initrd "$DIR/initrd-kallsyms.cpio" \
    -append console=ttyAMA0 </dev/null >"$DIR/kallsyms-boot.log" 2>&1 || true
  tr -d '\r' <"$DIR/kallsyms-boot.log" |
    sed -n '/^VTOE-KALLSYMS-BEGIN$/,/^VTOE-KALLSYMS-END$/p' |
    grep -E '^[0-9a-f]{8} [A-Za-z] ' | sort >"$DIR/System.map.tmp" || true
  if grep -q ' T start_kernel$' "$DIR/System.map.tmp"; then
    mv "$DIR/System.map.tmp" "$DIR/System.map"
    echo "System.map: /proc/kallsyms of a QEMU boot ($(wc -l <"$DIR/System.map") symbols)" \
      >>"$DIR/versions.txt"
  else
    rm -f "$DIR/System.map.tmp"
    echo "fetch-debian-linux: no start_kernel in /proc/kallsyms (see $DIR/kallsyms-boot.log)" >&2
  fi
}

if [ -s "$DIR/vmlinuz" ] && [ -s "$DIR/initrd.cpio" ]; then
  system_map
  exit 0
fi
# shellcheck source=scripts/armhf-apt.sh
. "$ROOT/scripts/armhf-apt.sh"
armhf_apt_setup "$DIR"
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
if ! (cd "$DIR/debs" && apt-get "${APT[@]}" download "$kernel=$LINUX_PACKAGE_VERSION" busybox-static \
      >/dev/null); then
  echo "fetch-debian-linux: no $kernel=$LINUX_PACKAGE_VERSION in Debian's index" \
       "(scripts/debian-linux.version pins it; the index keeps the current ABI only)" >&2
  exit 1
fi
for deb in "$DIR"/debs/*.deb; do dpkg-deb -x "$deb" "$DIR/extract"; done
vmlinuz=$(ls "$DIR"/extract/boot/vmlinuz-*-armmp | head -n 1)
cp "$vmlinuz" "$DIR/vmlinuz"
python3 "$ROOT/scripts/make_initramfs.py" --busybox "$DIR/extract/bin/busybox" \
  --out "$DIR/initrd.cpio"
{
  echo "kernel: $kernel ($(basename "$vmlinuz"))"
  (cd "$DIR/debs" && ls ./*.deb | sed 's#^\./#deb: #')
} >"$DIR/versions.txt"
system_map
cat "$DIR/versions.txt"
