#!/usr/bin/env bash
# The NetVP lab: two network namespaces joined by a veth pair, with addresses only inside them.
#   vtoe-sim   holds `vtoe0`, the interface the simulator's raw socket bridges the TOE to (no IP)
#   vtoe-peer  holds `vtoe-peer0` with the Linux peer's address (default 10.0.0.2/24)
# The simulated TOE answers as network.host_ip (default 10.0.0.1) on the same segment.
# Usage: scripts/netvp-lab.sh up|down|status   (root; names and address from the environment:
#        VTOE_SIM_NS, VTOE_PEER_NS, VTOE_IF, VTOE_PEER_IF, VTOE_PEER_ADDR)
# The veth ends keep Linux's default offloads (NetVP finishes partial checksums and cuts TSO/GRO
# segments itself); VTOE_LAB_OFFLOADS=off turns them off, for frames exactly as on a wire.
set -euo pipefail
SIM_NS=${VTOE_SIM_NS:-vtoe-sim}
PEER_NS=${VTOE_PEER_NS:-vtoe-peer}
IF=${VTOE_IF:-vtoe0}
PEER_IF=${VTOE_PEER_IF:-vtoe-peer0}
PEER_ADDR=${VTOE_PEER_ADDR:-10.0.0.2/24}

offloads_off() {  # frames as on a wire: complete checksums (no tx offload), never coalesced
  [ "${VTOE_LAB_OFFLOADS:-on}" = off ] || return 0
  ip netns exec "$1" ethtool -K "$2" rx off tx off gro off gso off tso off lro off >/dev/null 2>&1 || true
}

case "${1:-}" in
  up)
    ip netns add "$SIM_NS"
    ip netns add "$PEER_NS"
    ip link add "$IF" netns "$SIM_NS" type veth peer name "$PEER_IF" netns "$PEER_NS"
    ip -n "$SIM_NS" link set lo up
    ip -n "$SIM_NS" link set "$IF" up
    ip -n "$PEER_NS" link set lo up
    ip -n "$PEER_NS" addr add "$PEER_ADDR" dev "$PEER_IF"
    ip -n "$PEER_NS" link set "$PEER_IF" up
    offloads_off "$SIM_NS" "$IF"
    offloads_off "$PEER_NS" "$PEER_IF"
    echo "lab up: simulator side $SIM_NS/$IF, Linux peer $PEER_NS/$PEER_IF $PEER_ADDR"
    echo "run:  ip netns exec $SIM_NS build/release/app/vtoe run scenarios/netvp/sink.yaml"
    echo "then: ip netns exec $PEER_NS ping 10.0.0.1"
    ;;
  down)
    ip netns del "$SIM_NS" 2>/dev/null || true
    ip netns del "$PEER_NS" 2>/dev/null || true
    echo "lab down"
    ;;
  status)
    ip netns list | grep -E "^($SIM_NS|$PEER_NS)( |$)" || echo "lab is down"
    ;;
  *)
    echo "usage: $0 up|down|status" >&2
    exit 2
    ;;
esac
