// Per-module logger with a runtime level. Every message goes through SystemC's
// sc_report_handler with the message type "vtoe/<module name>" (e.g. "vtoe/toe.ppm"), so that a
// platform embedding the models sees them with its own handler, actions and verbosity: error ->
// SC_ERROR, warn -> SC_WARNING (both displayed, not thrown: the type's actions say so),
// info/debug/trace -> SC_INFO at verbosity SC_MEDIUM/SC_HIGH/SC_DEBUG. The logger's own level is
// checked first (a disabled message costs a branch). The vtoe program installs
// compact_report_handler: one line per vtoe message.
#pragma once

#include <iosfwd>
#include <sstream>
#include <string>
#include <systemc>

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
  // "vtoe/<name>": this logger's SystemC message type.
  const std::string& message_type() const { return type_; }

 private:
  std::string name_;
  std::string type_;
  LogLevel level_ = LogLevel::Info;
  bool has_level_ = false;
};

// An sc_report_handler handler: vtoe's messages ("vtoe/..." types) as one line each on the logger
// sink, "[<time>] <level> <module>: <message>"; every other message, and every action besides
// display, as SystemC's default handler does.
void compact_report_handler(const sc_core::sc_report& report, const sc_core::sc_actions& actions);
// The SystemC verbosity at which a vtoe level's messages are shown (for `--log-level`).
int verbosity_of(LogLevel level);

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
