// PayloadPool: a memory manager (tlm::tlm_mm_interface) that recycles generic payloads, for
// initiators speaking the four-phase base protocol (several payloads in flight, each released by
// whoever holds the last reference).
//
//   core::PayloadPool pool;
//   tlm::tlm_generic_payload* t = pool.acquire();  // reference count 1, fields reset
//   ...  socket->nb_transport_fw(*t, phase, delay);  // a target may acquire()/release() too
//   pool.release(t);                                 // back to the pool at count 0
//
// acquire() hands out a payload with its reference count at 1 and its fields reset (command
// IGNORE, address 0, no data, no byte enables, streaming width 0, TLM_INCOMPLETE_RESPONSE, DMI
// not allowed). When the last reference goes (pool.release(t) or t->release()), the payload's
// auto extensions are freed (tlm_generic_payload::reset()) and it returns to the free list.
// Extensions set with set_extension() stay attached: clear them before the last release, or use
// set_auto_extension(). Not thread-safe (SystemC processes are not threads). The pool owns its
// payloads and must outlive every use of them.
#pragma once

#include <cstddef>
#include <memory>
#include <tlm>
#include <vector>

namespace vtoe::core {

class PayloadPool : public tlm::tlm_mm_interface {
 public:
  PayloadPool() = default;
  ~PayloadPool() override;
  PayloadPool(const PayloadPool&) = delete;
  PayloadPool& operator=(const PayloadPool&) = delete;

  // A payload with reference count 1 and reset fields.
  tlm::tlm_generic_payload* acquire();
  // Drops one reference (same as t->release()); at 0 the payload goes back to the pool.
  void release(tlm::tlm_generic_payload* t) { t->release(); }

  // Payloads created so far, and how many are out (referenced).
  std::size_t allocated() const { return all_.size(); }
  std::size_t in_use() const { return all_.size() - free_.size(); }

  // tlm_mm_interface: called by tlm_generic_payload::release() at reference count 0.
  void free(tlm::tlm_generic_payload* t) override;

 private:
  std::vector<std::unique_ptr<tlm::tlm_generic_payload>> all_;
  std::vector<tlm::tlm_generic_payload*> free_;
};

}  // namespace vtoe::core
