// A resolution finer than the models' picosecond arithmetic is refused when a model is built, with
// an error that names the resolution, instead of silently mistiming every transfer.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "models/mem/dram.h"

using namespace sc_core;

TEST(TimeResolution, FemtosecondResolutionIsRefusedAtElaboration) {
  try {
    vtoe::mem::Dram dram("dram");
    FAIL() << "a 1 fs resolution was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("time resolution 1 fs"), std::string::npos) << e.what();
  }
}

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  sc_set_time_resolution(1, SC_FS);
  sc_report_handler::set_actions(SC_WARNING, SC_THROW);
  return RUN_ALL_TESTS();
}
