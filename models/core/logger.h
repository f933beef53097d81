// Per-module logger with a runtime level. Messages carry simulated time and the module name.
#pragma once

#include <iosfwd>
#include <sstream>
#include <string>

namespace vtoe::core {

enum class LogLevel { Off = 0, Error, Warn, Info, Debug, Trace };

// Parses "off|error|warn|info|debug|trace"; throws std::invalid_argument otherwise.
LogLevel parse_log_level(const std::string& text);
const char* to_string(LogLevel level);

class Logger {
 public:
  explicit Logger(std::string name);

  // Level shared by all loggers unless a logger has its own override.
  static void set_default_level(LogLevel level);
  static LogLevel default_level();
  // Where all loggers write (default std::cerr); tests capture it.
  static void set_sink(std::ostream* out);

  void set_level(LogLevel level) {
    level_ = level;
    has_level_ = true;
  }
  LogLevel level() const { return has_level_ ? level_ : default_level(); }
  bool enabled(LogLevel level) const { return level != LogLevel::Off && level <= this->level(); }
  const std::string& name() const { return name_; }

  void write(LogLevel level, const std::string& message) const;

 private:
  std::string name_;
  LogLevel level_ = LogLevel::Info;
  bool has_level_ = false;
};

// Builds the message only when the level is enabled, then writes it when the statement ends.
class LogLine {
 public:
  LogLine(const Logger& logger, LogLevel level) : logger_(logger), level_(level) {}
  ~LogLine() { logger_.write(level_, stream_.str()); }
  std::ostringstream& stream() { return stream_; }

 private:
  const Logger& logger_;
  LogLevel level_;
  std::ostringstream stream_;
};

}  // namespace vtoe::core

// Usage: VTOE_LOG(log_, Debug) << "fetched " << n << " contexts";
#define VTOE_LOG(logger, lvl)                           \
  if (!(logger).enabled(::vtoe::core::LogLevel::lvl)) { \
  } else                                                \
    ::vtoe::core::LogLine((logger), ::vtoe::core::LogLevel::lvl).stream()
