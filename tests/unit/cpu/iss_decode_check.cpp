// Decoder coverage tool for tests/iss/test_decode_coverage.py: reads objdump's disassembly
// reduced to lines "A <hex> <text>" (A32) or "T <hex1> <hex2> <text>" (T32, hex2 = 0 for 16-bit)
// and prints every line the ISS decoders reject as undefined.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "models/cpu/iss/insn.h"

int main() {
  using vtoe::cpu::iss::Op;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string mode;
    uint32_t a = 0, b = 0;
    in >> mode >> std::hex >> a;
    if (mode == "T") in >> b;
    bool undef = mode == "A" ? vtoe::cpu::iss::decode_a32(a, 0x10000).op == Op::Undefined
                             : vtoe::cpu::iss::decode_t32(static_cast<uint16_t>(a),
                                                          static_cast<uint16_t>(b), 0x10000)
                                       .op == Op::Undefined;
    if (undef) std::cout << line << "\n";
  }
  return 0;
}
