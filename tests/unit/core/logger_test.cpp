// core::Logger: every message goes through sc_report_handler with the type "vtoe/<module>", the
// severity and verbosity of its level, and is displayed (not thrown); compact_report_handler prints
// vtoe's one line per message.
#include "models/core/logger.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/support/bench.h"

namespace {

struct Seen {
  std::string type, msg;
  sc_core::sc_severity severity;
  int verbosity;
  sc_core::sc_actions actions;
};
std::vector<Seen> g_seen;

void capture(const sc_core::sc_report& r, const sc_core::sc_actions& a) {
  g_seen.push_back({r.get_msg_type(), r.get_msg(), r.get_severity(), r.get_verbosity(), a});
}

}  // namespace

TEST(Logger, ReportsThroughSystemCWithAMessageTypePerModel) {
  using vtoe::core::LogLevel;
  vtoe::core::Logger log("toe.ppm");
  log.set_level(LogLevel::Debug);
  g_seen.clear();
  sc_core::sc_report_handler::set_handler(capture);
  VTOE_LOG(log, Warn) << "ring " << 2 << " reprogrammed";
  VTOE_LOG(log, Debug) << "fetched";  // SC_HIGH: filtered by SystemC's verbosity (SC_MEDIUM)
  const int before = sc_core::sc_report_handler::set_verbosity_level(sc_core::SC_HIGH);
  VTOE_LOG(log, Debug) << "fetched";      // the platform's verbosity lets it through
  VTOE_LOG(log, Trace) << "not enabled";  // below the logger's level: never reported
  sc_core::sc_report_handler::set_verbosity_level(before);
  sc_core::sc_report_handler::set_handler(sc_core::sc_report_handler::default_handler);
  ASSERT_EQ(g_seen.size(), 2u);
  EXPECT_EQ(g_seen[0].type, "vtoe/toe.ppm");
  EXPECT_EQ(g_seen[0].msg, "ring 2 reprogrammed");
  EXPECT_EQ(g_seen[0].severity, sc_core::SC_WARNING);
  // Displayed, not thrown, even where warnings throw (this test's main makes them throw).
  EXPECT_FALSE(g_seen[0].actions & sc_core::SC_THROW);
  EXPECT_TRUE(g_seen[0].actions & sc_core::SC_DISPLAY);
  EXPECT_EQ(g_seen[1].severity, sc_core::SC_INFO);
  EXPECT_EQ(g_seen[1].verbosity, sc_core::SC_HIGH);
}

TEST(Logger, CompactHandlerPrintsOneLinePerVtoeMessage) {
  std::ostringstream out;
  vtoe::core::Logger::set_sink(&out);
  sc_core::sc_report_handler::set_handler(vtoe::core::compact_report_handler);
  vtoe::core::Logger log("gic");
  VTOE_LOG(log, Warn) << "EOI of interrupt 32 which was not acknowledged (ignored)";
  sc_core::sc_report_handler::set_handler(sc_core::sc_report_handler::default_handler);
  vtoe::core::Logger::set_sink(nullptr);
  EXPECT_EQ(out.str(),
            "[0 s] warn gic: EOI of interrupt 32 which was not acknowledged (ignored)\n");
}

VTOE_TEST_MAIN
