// The guest's symbols, for the ISS model's profile (docs/iss-mode.md#where-the-instructions-go):
// the kernel's from a System.map, a module's from its .ko at the address Linux loaded its .text,
// a static program's from its ELF. Each function spans to the next symbol of its image.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vtoe::app {

class GuestSymbols {
 public:
  struct Hit {
    std::string image;   // "kernel", "vtoe_toe", "toe_stream", or "?" where nothing is known
    std::string symbol;  // the function, or "" where the image is known but not the function
  };

  // Text symbols of a System.map ("c0008000 T stext"); false when the file cannot be read.
  bool add_system_map(const std::string& path);
  // The functions of an ELF file: a static program (absolute addresses), or a relocatable module
  // whose .text Linux put at `text_base`. False when the file is not a readable ELF32.
  bool add_elf(const std::string& path, const std::string& image, std::uint32_t text_base = 0);

  Hit lookup(std::uint32_t address) const;
  std::size_t size() const { return symbols_.size(); }

 private:
  struct Symbol {
    std::uint32_t address, end;  // [address, end); end 0: up to the next symbol
    std::string name;
    std::string image;
  };
  void sort() const;

  mutable std::vector<Symbol> symbols_;
  mutable bool sorted_ = true;
};

}  // namespace vtoe::app
