#include "models/cpu/iss/cluster.h"

#include "models/cpu/iss/arm_core.h"

namespace vtoe::cpu::iss {

Cluster::Cluster(const std::vector<ArmCore*>& cores)
    : cores_(cores), monitor_(static_cast<int>(cores.size())) {
  for (std::size_t i = 0; i < cores_.size(); ++i) cores_[i]->set_cluster(this, static_cast<int>(i));
}

Cluster::~Cluster() {
  for (ArmCore* c : cores_) c->set_cluster(nullptr, 0);
}

void Cluster::code_marked(int from, std::uint32_t pa_page) {
  for (int i = 0; i < size(); ++i)
    if (i != from) cores_[static_cast<std::size_t>(i)]->peer_code_marked(pa_page);
}

void Cluster::code_written(int from, std::uint32_t pa_page) {
  if (in_code_written_) return;
  in_code_written_ = true;
  for (int i = 0; i < size(); ++i)
    if (i != from) cores_[static_cast<std::size_t>(i)]->peer_code_written(pa_page);
  in_code_written_ = false;
}

void Cluster::tlb_flush(int from) {
  ++tlb_broadcasts_;
  for (int i = 0; i < size(); ++i)
    if (i != from) cores_[static_cast<std::size_t>(i)]->tlb_flush();
}

void Cluster::tlb_flush_va(int from, std::uint32_t va) {
  ++tlb_broadcasts_;
  for (int i = 0; i < size(); ++i)
    if (i != from) cores_[static_cast<std::size_t>(i)]->tlb_flush_va(va);
}

}  // namespace vtoe::cpu::iss
