// What every ARM PrimeCell peripheral (the PL011, the PL031) has alike: its interrupt registers
// (IMSC the mask, RIS the raw status, MIS the masked one, ICR write-1-to-clear) and its
// identification words (PeriphID0-3 with the part number, PCellID0-3 the same for all).
#pragma once

#include <cstdint>
#include <functional>

#include "models/core/register.h"

namespace vtoe::core {

constexpr std::uint8_t kPrimeCellId[4] = {0x0d, 0xf0, 0x05, 0xb1};

// Wires the interrupt registers to `ris` (the raw status the model sets) and the ID registers to
// `periph_id`; `update` drives the interrupt line after the mask or the status changed.
inline void wire_primecell(Reg<std::uint32_t>& imsc, Reg<std::uint32_t>& ris_reg,
                           Reg<std::uint32_t>& mis, Reg<std::uint32_t>& icr,
                           Reg<std::uint32_t>& periph_id_reg, Reg<std::uint32_t>& pcell_id_reg,
                           std::uint32_t& ris, const std::uint8_t (&periph_id)[4],
                           std::function<void()> update) {
  imsc.on_write([&imsc, update](unsigned, std::uint32_t value, std::uint32_t mask) {
    imsc.store(0, value, mask);
    update();
  });
  ris_reg.on_read([&ris](unsigned) { return ris; });
  mis.on_read([&ris, &imsc](unsigned) -> std::uint32_t { return ris & imsc; });
  icr.on_write([&ris, update](unsigned, std::uint32_t value, std::uint32_t mask) {
    ris &= ~(value & mask);
    update();
  });
  periph_id_reg.on_read([&periph_id](unsigned i) -> std::uint32_t { return periph_id[i]; });
  pcell_id_reg.on_read([](unsigned i) -> std::uint32_t { return kPrimeCellId[i]; });
}

}  // namespace vtoe::core
