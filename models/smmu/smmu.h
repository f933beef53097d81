// SystemMMU: per-stream stage-2 translation and protection of device DMA (paper §3.2, "SystemMMU
// and memory protection"). Devices (the TOE's `dma` socket) bind to `upstream`; `downstream` goes
// to the interconnect. The hypervisor programs one context per stream: a Stage2Table (IPA -> PA)
// and the VM that owns the stream.
//
// Stream identity: the stream_id of the transaction's core::SidebandExtension. A transaction
// without the extension faults (FaultKind::NoSideband); one whose stream has no context faults
// (FaultKind::NoContext). The extension is forwarded untouched.
//
// Translation: every 4 KiB page of the transaction's span ([addr, addr + streaming width) for a
// streaming burst) is translated and checked before anything is forwarded, so a transaction is
// either forwarded whole or not at all. If the PA range is contiguous, the transaction goes down as
// one piece; otherwise it is split at page boundaries into one downstream transaction per
// contiguous piece (same payload object, address/data pointer/length/byte enables adjusted),
// issued in order with the annotated delay accumulating across pieces; the first piece that fails
// stops the rest and its response status is returned. A streaming burst whose window is not
// contiguous gets TLM_BURST_ERROR_RESPONSE (not counted as a fault). Address, data pointer,
// length, streaming width and byte enables are restored before returning.
//
// Timing: a TLB per stream caches page translations (`tlb_entries`, LRU, deterministic; 0 = no
// TLB). Each page of a transaction adds `hit_latency_ps` on a hit or `walk_latency_ps` on a miss
// (a stage-2 walk, default 2 table reads ~ 100 ns); the walk result is cached even when the access
// then fails its permission check (as ARM TLBs do), unmapped pages are not cached. The TLB of a
// stream is flushed by set_context/clear_context/tlb_invalidate and automatically when its
// table's generation() changes, so a remapped or unmapped page is never served from a stale entry.
//
// Faults (Unmapped, Permission, NoContext, NoSideband): nothing is forwarded; the response is
// TLM_ADDRESS_ERROR_RESPONSE; a Fault record goes into a bounded queue (`fault_queue_depth`; when
// full, new records are dropped and counted, like an overflowing SMMU event queue); the per-kind
// counter is incremented and the fault callback, if set, is called with the record.
//
// Bypass (set_bypass(true), for native platforms): identity translation for every transaction,
// with or without the extension, no TLB and no latency.
//
// Interfaces: b_transport; transport_dbg (translated and permission-checked like b_transport,
// split into pieces, no timing, no TLB, no fault record: it returns the number of bytes
// transferred up to the first untranslatable page). nb_transport_fw (platform.timing: at): the
// four phases pass through; BEGIN_REQ is translated like b_transport (the TLB latency joins its
// annotated delay) and goes downstream with its PA, the IPA is restored at BEGIN_RESP; a fault
// completes at once (TLM_COMPLETED, error status, nothing forwarded); a transaction split over
// non-contiguous pages goes down as b_transport pieces and completes at once. DMI is refused (a
// device behind an SMMU never bypasses translation).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/core/module.h"
#include "models/core/param.h"
#include "models/core/payload_map.h"
#include "models/core/sideband.h"
#include "models/smmu/stage2_table.h"

namespace vtoe::smmu {

struct SmmuParams {
  std::size_t tlb_entries = 32;            ///< per-stream TLB entries (4 KiB pages), 0 = no TLB
  core::TimePs hit_latency_ps = 0;         ///< added per page on a TLB hit, ps
  core::TimePs walk_latency_ps = 100'000;  ///< added per page on a TLB miss (stage-2 walk), ps
  std::size_t fault_queue_depth = 64;      ///< fault records kept until popped
};

// The scenario keys that fill SmmuParams.
const std::vector<core::Param<SmmuParams>>& smmu_params();

struct Fault {
  static constexpr std::uint32_t kNoStream = 0xffffffffu;  // transaction had no sideband

  std::uint32_t stream = kNoStream;
  std::uint16_t vm = core::SidebandExtension::kHost;  // context's VM (else the sideband's)
  std::uint64_t address = 0;                          // transaction address (IPA)
  std::uint64_t fault_address = 0;                    // first faulting byte (IPA)
  std::uint32_t length = 0;
  bool write = false;
  FaultKind kind = FaultKind::Unmapped;
  core::TimePs time_ps = 0;  // sc_time_stamp() + annotated delay at the fault
};

class Smmu : public core::Module {
 public:
  using FaultCallback = std::function<void(const Fault&)>;

  tlm_utils::simple_target_socket<Smmu> upstream;
  tlm_utils::simple_initiator_socket<Smmu> downstream;

  explicit Smmu(const sc_core::sc_module_name& name, const SmmuParams& params = {});

  // Programs stream `stream` to translate through `table` on behalf of VM `vm_id`; replaces any
  // previous context and flushes the stream's TLB. Throws std::invalid_argument on a null table.
  void set_context(std::uint32_t stream, std::shared_ptr<const Stage2Table> table,
                   std::uint16_t vm_id);
  // Removes the stream's context (its transactions fault with NoContext); flushes its TLB.
  void clear_context(std::uint32_t stream);
  bool has_context(std::uint32_t stream) const { return contexts_.count(stream) != 0; }
  void set_bypass(bool on) { bypass_ = on; }
  // Walks read their descriptors from [base, base + size) downstream (platform.timing: at): each
  // TLB miss costs two dependent 8-byte reads through the memory system instead of the fixed
  // walk latency. size 0 (the default) keeps the fixed latency.
  void set_walk_memory(std::uint64_t base, std::uint64_t size) {
    walk_base_ = base;
    walk_size_ = size;
  }
  bool bypass() const { return bypass_; }
  // Bytes forwarded so far (translated or bypassed): whether the device has used its DMA.
  std::uint64_t bytes_forwarded() const { return bytes_.value(); }

  // TLB maintenance (the hypervisor's TLBI): one stream, or all.
  void tlb_invalidate(std::uint32_t stream);
  void tlb_invalidate_all();
  // Valid entries in the stream's TLB (0 without a context).
  std::size_t tlb_occupancy(std::uint32_t stream) const;

  void set_fault_callback(FaultCallback cb) { fault_callback_ = std::move(cb); }
  // Records not yet popped, oldest first.
  const std::deque<Fault>& faults() const { return faults_; }
  // Removes and returns the oldest record, or nullopt if there is none.
  std::optional<Fault> pop_fault();

  const SmmuParams& params() const { return params_; }

 private:
  struct TlbEntry {
    std::uint64_t ipa_page;
    std::uint64_t pa_page;
    Perm perm;
    std::uint64_t last_use;
  };
  struct Context {
    std::shared_ptr<const Stage2Table> table;
    std::uint16_t vm_id = core::SidebandExtension::kHost;
    std::uint64_t generation = 0;  // table generation the TLB was filled from
    std::vector<TlbEntry> tlb;
    std::uint64_t use_clock = 0;
    std::uint32_t stream = 0;
  };
  // A contiguous piece of a translated transaction.
  struct Piece {
    std::uint64_t offset;  // into the transaction's data
    std::uint64_t pa;
    std::uint64_t len;
  };

  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  // Checks and translates a transaction (TLB latency added to `delay`); false, with the response
  // status set and any fault recorded, if it must not go downstream.
  bool prepare(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay,
               std::vector<Piece>& pieces);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);

  // Translates the page containing `ipa` through the TLB (timed path), adding its latency to
  // `latency`. Returns false with `fault` set if the page is unmapped or does not allow the access.
  bool tlb_translate(Context& ctx, std::uint64_t ipa, bool write, std::uint64_t& pa,
                     core::TimePs& latency, TranslationFault& fault);
  // Fills `pieces` for [addr, addr + span); timed paths go through the TLB.
  bool translate(Context& ctx, std::uint64_t addr, std::uint64_t span, bool write, bool timed,
                 std::vector<Piece>& pieces, core::TimePs& latency, TranslationFault& fault);
  void record_fault(const Fault& fault);
  // A stage-2 walk through memory for `page`, starting `latency` after the transaction's
  // annotated time; returns its duration.
  core::TimePs walk(const Context& ctx, std::uint64_t page, core::TimePs latency);
  // Forwards `trans` downstream as the given pieces and restores it.
  void forward(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay,
               const std::vector<Piece>& pieces);

  SmmuParams params_;
  bool bypass_ = false;
  std::map<std::uint32_t, Context> contexts_;
  std::uint64_t walk_base_ = 0, walk_size_ = 0;
  core::TimePs walk_offset_ps_ = 0;  // the annotated delay of the transaction being translated
  std::deque<Fault> faults_;
  core::PayloadMap<std::uint64_t> in_flight_;  // 4-phase: its IPA
  std::vector<Piece> fw_pieces_;               // nb_transport_fw's pieces
  FaultCallback fault_callback_;

  core::Counter& transactions_;
  core::Counter& bytes_;
  core::Counter& pieces_;
  core::Counter& bypassed_;
  core::Counter& tlb_hits_;
  core::Counter& tlb_misses_;
  core::Counter& walk_reads_;
  core::Counter& tlb_flushes_;
  core::Counter& faults_unmapped_;
  core::Counter& faults_permission_;
  core::Counter& faults_no_context_;
  core::Counter& faults_no_sideband_;
  core::Counter& fault_records_dropped_;
  core::Counter& burst_errors_;
};

}  // namespace vtoe::smmu
