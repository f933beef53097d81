#!/usr/bin/env bash
# Debian's Xen 4.17 booting Debian's kernel as dom0 to the initramfs marker, on qemu-system-arm
# 7.2 (TCG) and on one or more vtoe builds, alternated, with QEMU's command line on both: wall and
# CPU (user + system) time of each (the machine may be shared: CPU time is then the comparable
# figure). Images from scripts/fetch-debian-xen.sh and scripts/fetch-debian-linux.sh (make
# linux-images). docs/performance.md has the figures.
# Usage: bench/xen_boot_bench.sh [rounds] [vtoe ...]   (default: 2 build/release/app/vtoe)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-2}
shift || true
[ $# -gt 0 ] || set -- "$here/build/release/app/vtoe"
X=$here/build/xen/xen
K=$here/build/linux/vmlinuz
I=$here/build/linux/initrd.cpio
for f in "$X" "$K" "$I"; do
  [ -f "$f" ] || { echo "no $f: run make linux-images" >&2; exit 1; }
done
APPEND="dom0_mem=512M console=dtuart dtuart=/pl011@9000000"
DEVICES=(guest-loader,addr=0x60000000,kernel=$K,bootargs=console=hvc0
         guest-loader,addr=0x64000000,initrd=$I)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
marker() { grep -q VTOE-INITRAMFS-REACHED "$out/console" && echo marker || echo "NO MARKER"; }
FORMAT="user %U s sys %S s wall %e s"
for r in $(seq 1 "$ROUNDS"); do
  echo "round $r: $(uptime)"
  /usr/bin/time -o "$out/t" -f "$FORMAT" qemu-system-arm -M virt,virtualization=on,highmem=off \
    -cpu cortex-a15 -m 2048 -nodefaults -display none -serial stdio -kernel "$X" \
    -append "$APPEND" -device "${DEVICES[0]}" -device "${DEVICES[1]}" \
    </dev/null >"$out/console" 2>/dev/null || true
  echo "  qemu-system-arm: $(cat "$out/t") $(marker)"
  for v in "$@"; do
    /usr/bin/time -o "$out/t" -f "$FORMAT" "$v" system run --virtualization --memory 2GiB \
      --kernel "$X" --append "$APPEND" --device "${DEVICES[0]}" --device "${DEVICES[1]}" \
      >"$out/console" 2>/dev/null || true
    echo "  $v: $(cat "$out/t") $(marker)"
  done
done
echo "end: $(uptime)"
