#!/usr/bin/env bash
# The training set of the profile-guided build (scripts/pgo-build.sh, `make pgo`): runs the
# instrumented vtoe given as $1 on short variants of the scenarios users run most, each adding its
# counts to the profile. The cases cover what the hot paths depend on: the three architectures,
# both timing modes, several VMs, receive and RPC traffic, loss and retransmission, a topology of
# several hosts, and the README's quickstart. About 15 s on one core (docs/performance.md,
# "The profile-guided build"). Runs one after the other, so that the same tree gives the same
# profile.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: scripts/pgo-train.sh INSTRUMENTED_VTOE}
out=build/pgo/train
rm -rf "$out"
# name, scenario, overrides
cases=(
  "quickstart        scenarios/quickstart.yaml"
  "native            scenarios/native/tx_10g.yaml       duration=300ms"
  "native-at         scenarios/native/tx_10g.yaml       duration=100ms platform.timing=at"
  "de                scenarios/native/tx_10g.yaml       duration=200ms architecture=de"
  "da                scenarios/native/tx_10g.yaml       duration=200ms architecture=da"
  "4vm-da            scenarios/bench/da_4vm_10g.yaml    duration=150ms"
  "4vm-de            scenarios/bench/da_4vm_10g.yaml    duration=150ms architecture=de"
  "rx                scenarios/native/rx_10g.yaml       duration=200ms"
  "rpc               scenarios/native/rpc.yaml          duration=200ms"
  "lossy             scenarios/native/lossy_tx.yaml     duration=300ms"
  "2host-4pair       scenarios/bench/two_hosts_4pairs.yaml duration=100ms"
)
start=$SECONDS
for c in "${cases[@]}"; do
  read -r name scenario overrides <<<"$c"
  args=()
  for o in $overrides; do args+=(--set "$o"); done
  # Warm-up counts as much as measurement for a profile: keep it short of the run.
  [ -n "$overrides" ] && args+=(--set warmup=20ms)
  "$bin" run "$scenario" "${args[@]}" --out "$out/$name" --quiet ||
    { echo "pgo-train: the training run $name ($scenario $overrides) failed" >&2; exit 1; }
done
echo "pgo-train: ${#cases[@]} runs in $((SECONDS - start)) s"
