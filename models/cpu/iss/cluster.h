// What the cores of one cluster share, beyond the bus: the global exclusive monitor, and the
// maintenance the Multiprocessing Extensions broadcast to the Inner Shareable domain. Plain C++.
//
//  - TLB maintenance: the *IS operations (TLBIALLIS, TLBIMVAIS, ...) flush every core's TLB.
//  - Decoded code: a page one core decodes is marked as code in every core's memory, so that a
//    store by any core drops it from every core (the ISS's decoded-instruction cache stays
//    coherent with memory, as a single core's is; instruction-cache maintenance has nothing
//    left to do).
//  - WFE: with more than one core it ends the core's quantum (a yield, as QEMU 7.2's TCG runs it),
//    so that a core spinning on a lock lets the lock's holder run.
// The cores are the platform's; they run in turn (one SystemC thread each, never at once), so a
// broadcast from one core's instruction finds every other core between two of its own.
#pragma once

#include <cstdint>
#include <vector>

#include "models/cpu/iss/global_monitor.h"

namespace vtoe::cpu::iss {

class ArmCore;

class Cluster {
 public:
  // Joins `cores` (1 to 8) into one cluster: core i gets index i (ArmCore::set_cluster).
  explicit Cluster(const std::vector<ArmCore*>& cores);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  int size() const { return static_cast<int>(cores_.size()); }
  GlobalMonitor& monitor() { return monitor_; }
  const GlobalMonitor& monitor() const { return monitor_; }

  // Broadcasts from core `from` to the others.
  void code_marked(int from, std::uint32_t pa_page);
  void code_written(int from, std::uint32_t pa_page);
  void tlb_flush(int from);
  void tlb_flush_va(int from, std::uint32_t va);

  std::uint64_t tlb_broadcasts() const { return tlb_broadcasts_; }

 private:
  std::vector<ArmCore*> cores_;
  GlobalMonitor monitor_;
  bool in_code_written_ = false;  // a peer's drop must not broadcast again
  std::uint64_t tlb_broadcasts_ = 0;
};

}  // namespace vtoe::cpu::iss
