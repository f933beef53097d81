// Registers as a device's software sees them: one field type (`Reg<T>`) and one bank type
// (`RegisterBank`) for every register target of the platform, after VCML's `reg<>` and
// libsystemctlm-soc's regapi.
//
// A register's shape (name, offset, width, array count and stride, reset value, read-only and
// write-1-to-clear masks, the access sizes it takes) comes from a `RegisterInfo`, which the
// generated header of the device's description (`models/<block>/<device>.regs.yaml`,
// `scripts/regmap.py`) provides; the model only adds behaviour (read and write callbacks). The
// same description gives the C header ARM code includes and the docs' register tables, so the
// three cannot drift apart.
//
// A `RegisterBank` is what one address window decodes to; a `core::Peripheral` (peripheral.h)
// maps banks onto its target sockets and owns the one bad-access policy.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace vtoe::core {

// Access sizes a register takes (bit set of byte counts).
constexpr unsigned kAccess8 = 1u << 0;
constexpr unsigned kAccess16 = 1u << 1;
constexpr unsigned kAccess32 = 1u << 2;
constexpr unsigned kAccess64 = 1u << 3;
constexpr unsigned access_bit(unsigned bytes) {
  return bytes == 1   ? kAccess8
         : bytes == 2 ? kAccess16
         : bytes == 4 ? kAccess32
         : bytes == 8 ? kAccess64
                      : 0;
}

// What a device's description says of one register (or one array of registers).
struct RegisterInfo {
  const char* name;
  std::uint64_t offset;     // byte offset of element 0 in its bank
  unsigned bytes;           // width: 1, 2, 4 or 8
  unsigned count;           // elements (1 for a plain register)
  std::uint64_t stride;     // bytes from one element to the next
  std::uint64_t reset;      // every element's value after reset
  std::uint64_t read_only;  // bits a write leaves alone
  std::uint64_t w1c;        // bits a written 1 clears (and a written 0 leaves alone)
  unsigned access;          // kAccess8 | ...: the access sizes the register takes
  bool readable;
  bool writable;
  const char* description;
};

class RegisterBank;

// The part of a register the bank sees: decode, reset and debug access.
class RegisterBase {
 public:
  RegisterBase(RegisterBank& bank, const RegisterInfo& info);
  virtual ~RegisterBase() = default;
  RegisterBase(const RegisterBase&) = delete;
  RegisterBase& operator=(const RegisterBase&) = delete;

  const RegisterInfo& info() const { return info_; }
  const char* name() const { return info_.name; }
  // Bus side: a whole element read (with side effects), or a write of the bits in `mask`.
  virtual std::uint64_t bus_read(unsigned index) = 0;
  virtual void bus_write(unsigned index, std::uint64_t value, std::uint64_t mask) = 0;
  // Debug side, no side effects: the stored value, or the model's through the peek callback
  // (else the read callback, which must then have none).
  virtual std::uint64_t peek(unsigned index) const = 0;
  virtual void poke(unsigned index, std::uint64_t value) = 0;
  virtual void reset() = 0;

 protected:
  const RegisterInfo& info_;
};

template <typename T>
class Reg final : public RegisterBase {
 public:
  // Replaces reading the stored value (a register that is a view of the model's state).
  using ReadFn = std::function<T(unsigned index)>;
  // Replaces storing: `value` carries the written bits, `mask` says which bits the access wrote
  // (all of them for a full-width access). The callback may call store() for the default.
  using WriteFn = std::function<void(unsigned index, T value, T mask)>;

  Reg(RegisterBank& bank, const RegisterInfo& info)
      : RegisterBase(bank, info), values_(info.count, static_cast<T>(info.reset)) {}

  void on_read(ReadFn fn) { read_ = std::move(fn); }
  // What a debugger reads when the read callback has side effects (a FIFO's data register).
  void on_peek(ReadFn fn) { peek_ = std::move(fn); }
  void on_write(WriteFn fn) { write_ = std::move(fn); }

  // Model side: the stored value, no side effects.
  T get(unsigned index = 0) const { return values_[index]; }
  void set(T value, unsigned index = 0) { values_[index] = value; }
  operator T() const { return values_[0]; }  // NOLINT: a register reads as its value

  // The default write: the written bits except the read-only ones, then the written 1s of the
  // write-1-to-clear bits clear them.
  void store(unsigned index, T value, T mask) {
    const T ro = static_cast<T>(info_.read_only), w1c = static_cast<T>(info_.w1c);
    const T plain = mask & ~ro & ~w1c;
    T v = (values_[index] & ~plain) | (value & plain);
    v &= ~(value & mask & w1c);
    values_[index] = v;
  }

  std::uint64_t bus_read(unsigned index) override {
    return read_ ? static_cast<std::uint64_t>(read_(index)) : values_[index];
  }
  void bus_write(unsigned index, std::uint64_t value, std::uint64_t mask) override {
    if (write_)
      write_(index, static_cast<T>(value), static_cast<T>(mask));
    else
      store(index, static_cast<T>(value), static_cast<T>(mask));
  }
  std::uint64_t peek(unsigned index) const override {
    if (peek_) return static_cast<std::uint64_t>(peek_(index));
    return read_ ? static_cast<std::uint64_t>(read_(index)) : values_[index];
  }
  void poke(unsigned index, std::uint64_t value) override {
    values_[index] = static_cast<T>(value);
  }
  void reset() override {
    for (auto& v : values_) v = static_cast<T>(info_.reset);
  }

 private:
  std::vector<T> values_;
  ReadFn read_;
  ReadFn peek_;
  WriteFn write_;
};

// What one access found: the register and element it hit, or why none.
struct RegisterHit {
  RegisterBase* reg = nullptr;
  unsigned index = 0;
  unsigned shift = 0;           // bits from the element's bit 0 to the access's first byte
  const char* error = nullptr;  // set when reg is null or the access is not allowed
};

// The registers one address window decodes to, sorted by offset.
class RegisterBank {
 public:
  explicit RegisterBank(std::string name) : name_(std::move(name)) {}
  RegisterBank(const RegisterBank&) = delete;
  RegisterBank& operator=(const RegisterBank&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<RegisterBase*>& registers() const { return regs_; }
  // The register element covering [offset, offset + bytes), checked against the register's
  // access sizes, alignment and direction.
  RegisterHit find(std::uint64_t offset, unsigned bytes, bool write) const;
  void reset();
  // Debug access: bytes [offset, offset + n) from or into the stored values; bytes outside any
  // register read as zero and are not written. Returns the bytes that hit a register.
  unsigned debug_read(std::uint64_t offset, std::uint8_t* data, unsigned n) const;
  unsigned debug_write(std::uint64_t offset, const std::uint8_t* data, unsigned n);
  // Checks that every register of a generated table has its field in this bank (so nothing a
  // description lists goes undecoded); throws naming the bank and the register.
  void expect_all(const RegisterInfo* const* table, std::size_t n) const;

 private:
  friend class RegisterBase;
  struct Location {
    RegisterBase* reg = nullptr;
    unsigned index = 0;
    unsigned within = 0;  // byte of the element
  };
  Location locate(std::uint64_t offset) const;
  Location search(std::uint64_t offset) const;
  void build_word_table() const;
  void add(RegisterBase* reg);

  std::string name_;
  std::vector<RegisterBase*> regs_;
  // Word-indexed decode (built at the first access when every register is a 32-bit word at a
  // word offset): entry w names the register element covering bytes [4w, 4w + 4). A doorbell
  // then costs one load instead of a search.
  struct WordEntry {
    RegisterBase* reg;
    unsigned index;
  };
  mutable std::vector<WordEntry> words_;
  mutable bool words_built_ = false;
};

}  // namespace vtoe::core
