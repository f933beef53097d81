// PayloadMap<T>: the state a model keeps for each four-phase transaction it has in flight, keyed
// by the transaction's payload.
//
// A model holds a handful of transactions at once, so the entries sit in a flat table searched
// linearly: a few pointer compares where a hash table pays a hash, a bucket walk and node
// handling, and nothing is allocated once the table has grown to the most ever in flight.
// A freed slot is reused by the next insert; an entry never moves, so a reference to it stays
// valid until that entry is erased, whatever else is inserted or erased meanwhile (models keep
// one across calls into other models that may end other transactions).
#pragma once

#include <cstddef>
#include <deque>
#include <stdexcept>
#include <string>
#include <tlm>

namespace vtoe::core {

template <typename T>
class PayloadMap {
 public:
  // The entry of `p`, or null.
  T* find(const tlm::tlm_generic_payload* p) {
    for (Slot& s : slots_) {
      if (s.key == p) return &s.value;
    }
    return nullptr;
  }
  // The entry of `p`; throws std::logic_error naming `who` if there is none.
  T& at(const tlm::tlm_generic_payload* p, const char* who) {
    if (T* v = find(p)) return *v;
    throw std::logic_error(std::string(who) + ": internal: no state for a transaction in flight");
  }
  // Sets the entry of `p` (a payload reused before its end has its entry overwritten).
  T& insert(const tlm::tlm_generic_payload* p, const T& value) {
    Slot* free_slot = nullptr;
    for (Slot& s : slots_) {
      if (s.key == p) {
        s.value = value;
        return s.value;
      }
      if (s.key == nullptr && free_slot == nullptr) free_slot = &s;
    }
    if (free_slot == nullptr) {
      slots_.emplace_back();
      free_slot = &slots_.back();
    }
    free_slot->key = p;
    free_slot->value = value;
    ++size_;
    return free_slot->value;
  }
  // Drops the entry of `p`, if any.
  void erase(const tlm::tlm_generic_payload* p) {
    for (Slot& s : slots_) {
      if (s.key == p) {
        s.key = nullptr;
        --size_;
        return;
      }
    }
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    const tlm::tlm_generic_payload* key = nullptr;  // null: free
    T value{};
  };
  std::deque<Slot> slots_;  // a deque: growing it moves no entry
  std::size_t size_ = 0;
};

}  // namespace vtoe::core
