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

Logger::Logger(std::string name) : name_(std::move(name)), type_("vtoe/" + name_) {
  // A model's error or warning is reported, not thrown: the model has handled it (a bad register
  // write is ignored and latched, ...). These per-type actions win over per-severity ones; a
  // platform that wants otherwise sets this type's actions after building the model.
  for (auto sev : {sc_core::SC_ERROR, sc_core::SC_WARNING})
    sc_core::sc_report_handler::set_actions(type_.c_str(), sev,
                                            sc_core::SC_DISPLAY | sc_core::SC_LOG);
}

int verbosity_of(LogLevel level) {
  switch (level) {
    case LogLevel::Debug:
      return sc_core::SC_HIGH;
    case LogLevel::Trace:
      return sc_core::SC_DEBUG;
    default:
      return sc_core::SC_MEDIUM;
  }
}

void Logger::set_default_level(LogLevel level) { g_default_level = level; }
LogLevel Logger::default_level() { return g_default_level; }
void Logger::set_sink(std::ostream* out) { g_sink = out ? out : &std::cerr; }

void Logger::write(LogLevel level, const std::string& message) const {
  using namespace sc_core;
  switch (level) {
    case LogLevel::Off:
      return;
    case LogLevel::Error:
      sc_report_handler::report(SC_ERROR, type_.c_str(), message.c_str(), "", 0);
      return;
    case LogLevel::Warn:
      sc_report_handler::report(SC_WARNING, type_.c_str(), message.c_str(), "", 0);
      return;
    default:
      sc_report_handler::report(SC_INFO, type_.c_str(), message.c_str(), verbosity_of(level), "",
                                0);
  }
}

void compact_report_handler(const sc_core::sc_report& report, const sc_core::sc_actions& actions) {
  using namespace sc_core;
  const std::string type = report.get_msg_type();
  if (type.rfind("vtoe/", 0) != 0 || !(actions & SC_DISPLAY)) {
    sc_report_handler::default_handler(report, actions);
    return;
  }
  const char* level = "info";
  if (report.get_severity() == SC_ERROR || report.get_severity() == SC_FATAL) level = "error";
  if (report.get_severity() == SC_WARNING) level = "warn";
  if (report.get_severity() == SC_INFO && report.get_verbosity() > SC_MEDIUM)
    level = report.get_verbosity() > SC_HIGH ? "trace" : "debug";
  (*g_sink) << "[" << report.get_time().to_string() << "] " << level << " " << type.substr(5)
            << ": " << report.get_msg() << '\n';
  sc_report_handler::default_handler(report, actions & ~SC_DISPLAY);
}

}  // namespace vtoe::core
