// "No interrupt lost": a scripted storm of random raise / VM switch / guest acknowledge / guest EOI
// across 3 VMs sharing 4 list registers. The test plays the hypervisor: it keeps what does not fit
// in the LRs in a per-VM software queue, writes a switched-out VM's free LRs in its saved state,
// saves/restores the GICH at every switch (paper Fig. 8) and refills LRs on maintenance. Every
// injected virtual interrupt must be acknowledged exactly once, by its own VM.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <deque>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <systemc>
#include <vector>

#include "tests/unit/gic/gic_bench.h"
#include "tests/support/bench.h"

using gic_test::Bench;
using gic_test::Proc;
using vtoe::gic::kListRegisters;
using vtoe::gic::kSpuriousId;
using vtoe::gic::ListRegister;
using vtoe::gic::VgicState;

namespace {

constexpr int kVms = 3;
constexpr int kSteps = 10000;
constexpr int kSharedVid = 33;  // every VM's "TOE" interrupt: same virtual ID in all VMs

struct Token {
  bool acked = false;
  std::uint8_t prio = 0;
};

struct Vm {
  VgicState saved;                 // the GICH contents while switched out
  std::deque<ListRegister> queue;  // overflow kept by the hypervisor in software
  std::map<int, Token> inflight;   // vid -> injected, not yet EOI'd
  std::vector<int> acked;          // the guest's nesting stack (EOI in reverse order)
  std::vector<int> pool;           // the virtual IDs this VM's devices use
  std::uint64_t injected = 0, acks = 0, eois = 0;
};

class Storm {
 public:
  explicit Storm(Bench& b) : b_(b), rng_(20240611u) {
    for (int v = 0; v < kVms; ++v) {
      vms_[v].pool.push_back(kSharedVid);
      for (int k = 0; k < 16; ++k) vms_[v].pool.push_back(64 + 32 * v + k);  // disjoint ranges
    }
    b_.gic.on_maintenance([this] { on_maintenance(); });
  }

  void run() {
    for (int step = 0; step < kSteps && !::testing::Test::HasFatalFailure(); ++step) {
      sc_core::wait(sc_core::sc_time(10, sc_core::SC_NS));
      check_lines(step);
      const int r = pick(0, 99);
      if (r < 25) {
        inject(pick(0, kVms - 1));
      } else if (r < 32) {
        switch_to((cur_ + pick(1, kVms - 1)) % kVms);
      } else if (r < 66) {
        guest_ack(step);
      } else {
        guest_eoi();
      }
    }
    drain();
  }

  void report() const {
    std::uint64_t injected = 0, acks = 0;
    for (int v = 0; v < kVms; ++v) {
      const Vm& vm = vms_[v];
      EXPECT_TRUE(vm.inflight.empty()) << "VM" << v << " lost " << vm.inflight.size();
      EXPECT_TRUE(vm.queue.empty());
      EXPECT_EQ(vm.acks, vm.injected) << "VM" << v;
      EXPECT_EQ(vm.eois, vm.injected) << "VM" << v;
      EXPECT_GT(vm.injected, 400u) << "VM" << v << " barely exercised";
      injected += vm.injected;
      acks += vm.acks;
    }
    EXPECT_EQ(acks, injected);
    std::cout << "storm: injected " << injected << ", switches " << switches_ << ", max queue "
              << max_queue_ << ", saved-LR writes " << saved_lr_writes_ << ", refills " << refills_
              << " (on maintenance " << maintenance_refills_ << ")"
              << ", switched out while active " << active_across_switch_ << "\n";
    EXPECT_EQ(b_.count("virtual_acks"), acks);
    EXPECT_EQ(b_.count("virtual_eois"), acks);
    EXPECT_EQ(b_.count("saves"), switches_);
    EXPECT_EQ(b_.count("restores"), switches_);
    // The storm really stressed what it claims to.
    EXPECT_GT(switches_, 300u);
    EXPECT_GT(max_queue_, 4u) << "the LRs never overflowed";
    EXPECT_GT(saved_lr_writes_, 20u) << "no injection into a switched-out VM's saved LRs";
    EXPECT_GT(maintenance_refills_, 100u) << "maintenance never refilled an LR from the queue";
    EXPECT_GT(active_across_switch_, 50u) << "no VM was switched out with an active interrupt";
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  void check_lines(int step) {
    ASSERT_EQ(b_.virq.read(), b_.gic.virq_asserted()) << "step " << step;
    ASSERT_FALSE(b_.maintenance.read()) << "step " << step << ": maintenance left unhandled";
  }

  void inject(int v) {
    Vm& vm = vms_[v];
    std::vector<int> free;
    for (int vid : vm.pool) {
      if (!vm.inflight.count(vid)) free.push_back(vid);
    }
    if (free.empty()) return;
    const int vid = free[static_cast<std::size_t>(pick(0, static_cast<int>(free.size()) - 1))];
    const auto prio = static_cast<std::uint8_t>(pick(0, 30) << 3);
    vm.inflight[vid] = Token{false, prio};
    ++vm.injected;
    const ListRegister lr = ListRegister::make_pending(vid, prio);
    if (v == cur_) {
      const int i = b_.gic.free_lr();
      if (i >= 0) {
        b_.gic.write_lr(i, lr);
        return;
      }
    } else {
      for (int i = 0; i < kListRegisters; ++i) {
        if (!vm.saved.lr[static_cast<std::size_t>(i)].valid()) {
          vm.saved.lr[static_cast<std::size_t>(i)] = lr;
          vm.saved.eisr &= ~(1u << i);
          ++saved_lr_writes_;
          return;
        }
      }
    }
    vm.queue.push_back(lr);
    max_queue_ = std::max<std::uint64_t>(max_queue_, vm.queue.size());
  }

  // The hypervisor's maintenance handler: refill emptied LRs of the running VM from its queue and
  // acknowledge every EOI status bit.
  void on_maintenance() {
    const std::uint64_t before = refills_;
    refill();
    maintenance_refills_ += refills_ - before;
    const std::uint32_t eisr = b_.gic.eisr();
    for (int i = 0; i < kListRegisters; ++i) {
      if (eisr & (1u << i)) b_.gic.write_lr(i, ListRegister{});
    }
  }

  void refill() {
    Vm& vm = vms_[cur_];
    int i;
    while (!vm.queue.empty() && (i = b_.gic.free_lr()) >= 0) {
      b_.gic.write_lr(i, vm.queue.front());
      vm.queue.pop_front();
      ++refills_;
    }
  }

  void switch_to(int next) {
    Vm& out = vms_[cur_];
    out.saved = b_.gic.save();
    if (!out.acked.empty()) ++active_across_switch_;
    b_.gic.restore(vms_[next].saved);
    cur_ = next;
    ++switches_;
    refill();
  }

  void guest_ack(int step) {
    Vm& vm = vms_[cur_];
    const bool signalled = b_.virq.read();
    const int vid = b_.gic.virtual_acknowledge();
    if (vid == kSpuriousId) {
      EXPECT_FALSE(signalled) << "step " << step << ": virq high but acknowledge spurious";
      return;
    }
    ASSERT_TRUE(signalled) << "step " << step << ": acknowledged " << vid << " without virq";
    auto it = vm.inflight.find(vid);
    if (it == vm.inflight.end()) {
      std::ostringstream owners;
      for (int v = 0; v < kVms; ++v) {
        if (vms_[v].inflight.count(vid)) owners << " VM" << v;
      }
      FAIL() << "step " << step << ": VM" << cur_ << " acknowledged vid " << vid
             << " it never got; in flight for:" << owners.str();
    }
    ASSERT_FALSE(it->second.acked) << "step " << step << ": vid " << vid << " acknowledged twice";
    if (!vm.acked.empty()) {  // nesting: only a strictly higher priority preempts
      EXPECT_LT(it->second.prio, vm.inflight[vm.acked.back()].prio)
          << "step " << step << ": vid " << vid << " preempted vid " << vm.acked.back();
    }
    it->second.acked = true;
    vm.acked.push_back(vid);
    ++vm.acks;
  }

  void guest_eoi() {
    Vm& vm = vms_[cur_];
    if (vm.acked.empty()) return;
    const int vid = vm.acked.back();
    vm.acked.pop_back();
    b_.gic.virtual_end_of_interrupt(vid);
    vm.inflight.erase(vid);
    ++vm.eois;
  }

  // Every VM runs until it has nothing left: whatever is still queued or loaded must arrive.
  void drain() {
    for (int round = 0; round < 50; ++round) {
      bool left = false;
      for (int v = 0; v < kVms; ++v) left = left || !vms_[v].inflight.empty();
      if (!left) return;
      switch_to((cur_ + 1) % kVms);
      for (int k = 0; k < 200; ++k) {
        sc_core::wait(sc_core::sc_time(10, sc_core::SC_NS));
        check_lines(kSteps + k);
        if (::testing::Test::HasFatalFailure()) return;
        if (b_.virq.read()) {
          guest_ack(kSteps + k);
        } else if (!vms_[cur_].acked.empty()) {
          guest_eoi();
        } else {
          break;
        }
      }
    }
  }

  Bench& b_;
  std::mt19937 rng_;
  std::array<Vm, kVms> vms_;
  int cur_ = 0;
  std::uint64_t switches_ = 0, max_queue_ = 0, saved_lr_writes_ = 0, refills_ = 0;
  std::uint64_t active_across_switch_ = 0, maintenance_refills_ = 0;
};

}  // namespace

TEST(GicStorm, NoVirtualInterruptLostAcrossVmSwitches) {
  Bench b;
  Storm storm(b);
  Proc p("p", [&] { storm.run(); });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
  ASSERT_TRUE(p.done);
  storm.report();
  EXPECT_EQ(b.count("bad_eois"), 0u);
  EXPECT_EQ(gic_test::sc_warnings(), 0u);
}

VTOE_TEST_MAIN
