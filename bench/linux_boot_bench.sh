#!/usr/bin/env bash
# Debian's Linux boot to the initramfs marker on qemu-system-arm 7.2 (TCG) and on one or more
# vtoe builds, alternated in one run, from SVC and from Hyp: wall and CPU (user) time of each
# (the machine may be shared: CPU time is then the comparable figure). Images from
# scripts/fetch-debian-linux.sh (make linux-images). docs/performance.md has the figures.
# Usage: bench/linux_boot_bench.sh [rounds] [vtoe ...]   (default: 2 build/release/app/vtoe)
# SMP=N boots N cores on both (qemu-system-arm -smp N, vtoe system run --smp N).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-2}
shift || true
[ $# -gt 0 ] || set -- "$here/build/release/app/vtoe"
K=$here/build/linux/vmlinuz
I=$here/build/linux/initrd.cpio
[ -f "$K" ] && [ -f "$I" ] || { echo "no $K or $I: run make linux-images" >&2; exit 1; }
SMP=${SMP:-1}
qsmp=() vsmp=()
[ "$SMP" -gt 1 ] && qsmp=(-smp "$SMP") && vsmp=(--smp "$SMP")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
marker() { grep -q VTOE-INITRAMFS-REACHED "$out/console" && echo marker || echo "NO MARKER"; }
for r in $(seq 1 "$ROUNDS"); do
  echo "round $r: $(uptime)"
  for mode in svc hyp; do
    machine=virt,highmem=off
    flag=()
    [ $mode = hyp ] && machine=$machine,virtualization=on && flag=(--virtualization)
    /usr/bin/time -o "$out/t" -f "user %U s wall %e s" qemu-system-arm -M $machine -cpu cortex-a15 \
      "${qsmp[@]}" -nodefaults -display none -serial stdio -kernel "$K" -initrd "$I" -append console=ttyAMA0 \
      >"$out/console" 2>/dev/null || true
    echo "  $mode qemu-system-arm: $(cat "$out/t") $(marker)"
    for v in "$@"; do
      /usr/bin/time -o "$out/t" -f "user %U s wall %e s" "$v" system run "${flag[@]}" "${vsmp[@]}" --kernel "$K" \
        --initrd "$I" --append console=ttyAMA0 >"$out/console" 2>/dev/null || true
      echo "  $mode $v: $(cat "$out/t") $(marker)"
    done
  done
done
echo "end: $(uptime)"
