// Interconnect: an address-decoding router between any number of initiators and mapped targets.
//
// Each map() entry creates an internal initiator socket `out_<name>` bound to the given target.
// A transaction is decoded by [address, address + length) (it must lie inside one region),
// its address is rebased to the region's offset while the target sees it and restored before the
// initiator sees it again, and `hop_latency_ps` is added to the annotated delay once per request.
// Extensions (the core::SidebandExtension included) pass through untouched.
//
// Interfaces forwarded: b_transport, nb_transport_fw/bw (base protocol, see below),
// transport_dbg, get_direct_mem_ptr (DMI ranges translated back to initiator addresses) and
// invalidate_direct_mem_ptr (broadcast to every initiator, translated).
//
// nb_transport: BEGIN_REQ is forwarded to the target; if the target completes early
// (TLM_COMPLETED) the answer goes straight back. Targets using the full four-phase protocol are
// routed too (a table keyed by payload address remembers the initiator), with the address restored
// at BEGIN_RESP. The hop latency is added on BEGIN_REQ only.
//
// A target socket can be mapped once (a simple_target_socket accepts one binding).
//
// Errors: an address in no region (or straddling a region's end) gets TLM_ADDRESS_ERROR_RESPONSE
// and counts as decode_errors; overlapping or empty regions, or map() after elaboration, throw
// std::invalid_argument / std::logic_error.
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "models/core/module.h"

namespace vtoe::mem {

class Interconnect : public core::Module {
 public:
  tlm_utils::multi_passthrough_target_socket<Interconnect> in;

  explicit Interconnect(const sc_core::sc_module_name& name, core::TimePs hop_latency_ps = 0);
  ~Interconnect() override;

  // Maps [base, base + size) to `target`; the target sees addresses from 0. Call during
  // elaboration only. Throws std::invalid_argument on size 0, wrap-around or overlap.
  void map(std::uint64_t base, std::uint64_t size, tlm::tlm_target_socket<>& target,
           const std::string& name);

  core::TimePs hop_latency_ps() const { return hop_latency_ps_; }
  std::size_t regions() const { return regions_.size(); }

 private:
  using OutSocket = tlm_utils::simple_initiator_socket_tagged<Interconnect>;
  struct Region {
    std::uint64_t base;
    std::uint64_t size;
    std::size_t target;  // index into outs_
    std::string name;
  };
  struct Pending {
    int initiator;
    std::size_t target;
    std::uint64_t base;
  };

  // Index into regions_ of the region containing [addr, addr + len), or -1.
  long decode(std::uint64_t addr, std::uint64_t len) const;
  long decode_or_fail(tlm::tlm_generic_payload& trans);

  void b_transport(int id, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned int transport_dbg(int id, tlm::tlm_generic_payload& trans);
  bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  tlm::tlm_sync_enum nb_transport_bw(int target, tlm::tlm_generic_payload& trans,
                                     tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void invalidate_direct_mem_ptr(int target, sc_dt::uint64 start, sc_dt::uint64 end);

  core::TimePs hop_latency_ps_;
  std::vector<Region> regions_;  // sorted by base
  std::vector<std::unique_ptr<OutSocket>> outs_;
  std::vector<std::uint64_t> out_base_;  // base of the region each out socket serves
  std::unordered_map<tlm::tlm_generic_payload*, Pending> pending_;  // 4-phase only

  core::Counter& transactions_;
  core::Counter& decode_errors_;
};

}  // namespace vtoe::mem
