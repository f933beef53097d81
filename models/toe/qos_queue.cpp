#include "models/toe/qos_queue.h"

namespace vtoe::toe {

QosQueue::QosQueue(DispatchPolicyKind kind, std::size_t queues,
                   const std::vector<std::uint32_t>& quanta, std::uint32_t default_quantum)
    : policy_(make_dispatch_policy(kind, queues, quanta, default_quantum)), heads_(queues) {}

}  // namespace vtoe::toe
