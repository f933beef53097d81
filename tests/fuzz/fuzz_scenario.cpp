// libFuzzer harness: scenario YAML into the loader. Bad input must come back as a ConfigError
// (naming the file and key) and nothing else: no crash, no other exception, no hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16384) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    vtoe::config::Config cfg = vtoe::config::Config::from_string(text, "fuzz.yaml");
    (void)cfg.resolved_yaml();
  } catch (const vtoe::config::ConfigError&) {
    // the expected answer to bad input
  }
  return 0;
}
