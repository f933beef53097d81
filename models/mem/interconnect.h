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
// Approximately timed (InterconnectParams::at, set by the platform from platform.timing): one
// shared fabric with an arbiter. A BEGIN_REQ (answered TLM_ACCEPTED) waits in its initiator
// port's queue; at the end of each time step at which the fabric is free the arbiter grants one
// queued request whose target is free (round robin over ports, or weighted round robin: port i
// gets weights[i] grants in a row). A granted request occupies the fabric for
// ceil(len / width_bytes) clock cycles, then goes downstream as BEGIN_REQ hop_latency later. A
// target is free again when it sent END_REQ (request exclusion downstream), and only then does
// the initiator get its END_REQ, so a target's back-pressure reaches the initiators. Responses
// route back as in LT mode; a target that completes early (TLM_COMPLETED, e.g. an LT DRAM) gets
// END_REQ and BEGIN_RESP sent to the initiator for it. b_transport books the same fabric (grant at
// max(arrival, fabric free), then the cycles and the hop) and forwards, never waiting.
// AT counters (grants_<port>, arbitration_wait_ps) exist only in AT mode.
//
// Errors: an address in no region (or straddling a region's end) gets TLM_ADDRESS_ERROR_RESPONSE
// and counts as decode_errors; overlapping or empty regions, or map() after elaboration, throw
// std::invalid_argument / std::logic_error.
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/core/module.h"
#include "models/core/param.h"
#include "models/core/payload_map.h"

namespace vtoe::mem {

enum class Arbitration { RoundRobin, Weighted };
Arbitration parse_arbitration(const std::string& text);
const char* to_string(Arbitration a);

struct InterconnectParams {
  core::TimePs hop_latency_ps = 10'000;  ///< added to each request
  // Approximately-timed mode (set by the platform from platform.timing, not a key of its own).
  bool at = false;
  std::uint32_t width_bytes = 16;  ///< fabric bytes per clock cycle
  double clock_hz = 1e9;           ///< fabric clock
  Arbitration arbitration = Arbitration::RoundRobin;
  std::string weights;  ///< comma-separated grants per round, by initiator port; missing = 1
};

// The scenario keys that fill InterconnectParams (platform.bus_*).
const std::vector<core::Param<InterconnectParams>>& interconnect_params();

// Parses a weight list ("3,1"); throws std::invalid_argument on anything but positive integers.
std::vector<std::uint32_t> parse_weights(const std::string& text);

class Interconnect : public core::Module {
 public:
  tlm_utils::multi_passthrough_target_socket<Interconnect> in;

  SC_HAS_PROCESS(Interconnect);
  // LT with a hop latency (the existing callers' form).
  explicit Interconnect(const sc_core::sc_module_name& name, core::TimePs hop_latency_ps = 0);
  Interconnect(const sc_core::sc_module_name& name, const InterconnectParams& params);
  ~Interconnect() override;

  // Maps [base, base + size) to `target`; the target sees addresses from 0. Call during
  // elaboration only. Throws std::invalid_argument on size 0, wrap-around or overlap.
  void map(std::uint64_t base, std::uint64_t size, tlm::tlm_target_socket<>& target,
           const std::string& name);

  core::TimePs hop_latency_ps() const { return hop_latency_ps_; }
  std::size_t regions() const { return regions_.size(); }
  const InterconnectParams& params() const { return params_; }
  // AT only: absolute time (ps) until which the fabric is booked.
  core::TimePs fabric_free() const { return fabric_free_; }

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
    // AT only:
    enum class State { Arriving, Queued, Granted, Downstream, Responding } state = State::Arriving;
    core::TimePs queued_at = 0;
    bool target_done = false;  // the target completed early: END_RESP is not forwarded to it
  };

  // Index into regions_ of the region containing [addr, addr + len), or -1.
  // `hint`: the region to try first, set to the one found.
  long decode(std::uint64_t addr, std::uint64_t len, std::size_t& hint) const;
  long decode_or_fail(int id, tlm::tlm_generic_payload& trans) {
    // Inline: the port's last region, which nearly every transaction hits; the rest (a search
    // of the map, or a decode error and its report) out of line.
    const std::uint64_t len = trans.get_data_length();
    const std::uint64_t width = trans.get_streaming_width();
    std::uint64_t span = (width != 0 && width < len) ? width : len;
    if (span == 0) span = 1;
    const std::size_t hint = last_region(id);
    if (hint < regions_.size()) {
      const Region& last = regions_[hint];
      const std::uint64_t addr = trans.get_address();
      const std::uint64_t off = addr - last.base;
      if (addr >= last.base && off < last.size && span <= last.size - off)
        return static_cast<long>(hint);
    }
    return decode_elsewhere(id, trans);
  }
  long decode_elsewhere(int id, tlm::tlm_generic_payload& trans);

  void b_transport(int id, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned int transport_dbg(int id, tlm::tlm_generic_payload& trans);
  bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  tlm::tlm_sync_enum nb_transport_bw(int target, tlm::tlm_generic_payload& trans,
                                     tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void invalidate_direct_mem_ptr(int target, sc_dt::uint64 start, sc_dt::uint64 end);

  // Approximately-timed mode.
  void end_of_elaboration() override;
  core::TimePs occupancy_ps(const tlm::tlm_generic_payload& trans) const;
  std::uint32_t weight(std::size_t port) const;
  tlm::tlm_sync_enum nb_transport_fw_at(int id, tlm::tlm_generic_payload& trans,
                                        tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw_at(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                        sc_core::sc_time& delay);
  void peq_cb(tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase);
  void enqueue(tlm::tlm_generic_payload& trans, Pending& p);  // joins its port's queue now
  void arbitrate();                                           // SC_METHOD on arbitrate_
  void send_downstream(tlm::tlm_generic_payload& trans);
  void target_accepted(tlm::tlm_generic_payload& trans);     // END_REQ from the target
  void respond_for_target(tlm::tlm_generic_payload& trans);  // the target completed early

  InterconnectParams params_;
  core::TimePs hop_latency_ps_;
  std::vector<Region> regions_;  // sorted by base
  // The region each initiator port decoded last, tried first (a DMA engine streams into one
  // region, a CPU's register accesses hit one device; regions do not overlap, so a hit is the
  // binary search's answer). Ports past the array share the last entry.
  mutable std::array<std::size_t, 8> last_region_{};
  std::size_t& last_region(int id) const {
    return last_region_[std::min<std::size_t>(static_cast<std::size_t>(id), 7)];
  }
  sc_core::sc_time hop_latency_;  // hop_latency_ps_ as a kernel time, made once
  std::vector<std::unique_ptr<OutSocket>> outs_;
  std::vector<std::uint64_t> out_base_;  // base of the region each out socket serves
  core::PayloadMap<Pending> pending_;    // 4-phase only

  core::Counter& transactions_;
  core::Counter& decode_errors_;

  std::vector<std::uint32_t> weights_;  // AT only, as everything below
  std::unique_ptr<tlm_utils::peq_with_cb_and_phase<Interconnect>> peq_;
  sc_core::sc_event arbitrate_;
  std::vector<std::deque<tlm::tlm_generic_payload*>> queues_;  // per initiator port
  std::size_t queued_ = 0;                                     // in all queues_
  std::vector<tlm::tlm_generic_payload*> target_busy_;         // per out socket: awaiting END_REQ
  core::TimePs fabric_free_ = 0;
  std::size_t rr_next_ = 0;      // port the arbiter looks at first
  std::uint32_t rr_credit_ = 0;  // grants left to rr_next_ in this round
  int settle_deltas_ = 0;        // delta cycles the arbiter waited at this instant
  std::vector<core::Counter*> grants_;
  core::Accumulator* arbitration_wait_ = nullptr;
};

}  // namespace vtoe::mem
