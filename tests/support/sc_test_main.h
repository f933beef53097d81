// sc_main for a GoogleTest program that runs SystemC models: SystemC warnings become exceptions,
// so a test cannot pass while a model reports a problem. Put VTOE_TEST_MAIN once in a test source.
#pragma once

#include <gtest/gtest.h>

#include <systemc>

// SystemC elaborates once per process: ctest runs every TEST in its own process.
#define VTOE_TEST_MAIN                                                               \
  int sc_main(int argc, char** argv) {                                               \
    ::testing::InitGoogleTest(&argc, argv);                                          \
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_THROW); \
    return RUN_ALL_TESTS();                                                          \
  }
