#include "app/build_info.h"

#include <cstdio>
#include <fstream>
#include <vector>

#include "app/cli.h"

namespace vtoe::app {

std::string binary_id() {
  static const std::string id = [] {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    if (!in) return std::string("unknown");
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a: fast, and identity is all we need
    std::vector<char> buf(1 << 16);
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      for (std::streamsize i = 0; i < in.gcount(); ++i) {
        h ^= static_cast<unsigned char>(buf[static_cast<std::size_t>(i)]);
        h *= 0x100000001b3ull;
      }
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return std::string("fnv1a64:") + hex;
  }();
  return id;
}

nlohmann::ordered_json build_identity() {
  return {{"version", version_string()}, {"git", git_describe()}, {"binary", binary_id()}};
}

}  // namespace vtoe::app
