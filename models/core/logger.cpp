#include "models/core/logger.h"

#include <iostream>
#include <stdexcept>
#include <systemc>

namespace vtoe::core {
namespace {
LogLevel g_default_level = LogLevel::Warn;
std::ostream* g_sink = &std::cerr;
}  // namespace

LogLevel parse_log_level(const std::string& text) {
  if (text == "off") return LogLevel::Off;
  if (text == "error") return LogLevel::Error;
  if (text == "warn") return LogLevel::Warn;
  if (text == "info") return LogLevel::Info;
  if (text == "debug") return LogLevel::Debug;
  if (text == "trace") return LogLevel::Trace;
  throw std::invalid_argument("unknown log level '" + text +
                              "' (expected off, error, warn, info, debug or trace)");
}

const char* to_string(LogLevel level) {
  switch (level) {
    case LogLevel::Off:
      return "off";
    case LogLevel::Error:
      return "error";
    case LogLevel::Warn:
      return "warn";
    case LogLevel::Info:
      return "info";
    case LogLevel::Debug:
      return "debug";
    case LogLevel::Trace:
      return "trace";
  }
  return "?";
}

Logger::Logger(std::string name) : name_(std::move(name)) {}

void Logger::set_default_level(LogLevel level) { g_default_level = level; }
LogLevel Logger::default_level() { return g_default_level; }
void Logger::set_sink(std::ostream* out) { g_sink = out ? out : &std::cerr; }

void Logger::write(LogLevel level, const std::string& message) const {
  (*g_sink) << "[" << sc_core::sc_time_stamp().to_string() << "] " << to_string(level) << " "
            << name_ << ": " << message << '\n';
}

}  // namespace vtoe::core
