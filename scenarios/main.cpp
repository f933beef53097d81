// vtoe: the command-line entry point. SystemC owns main(); the CLI lives in cli.cpp.
#include <systemc>

#include "scenarios/cli.h"
#include "scenarios/runner.h"

int sc_main(int argc, char** argv) {
  // The SystemC banner would precede every run's output.
  return vtoe::scenario::cli_main(argc, argv, vtoe::scenario::run_scenario);
}
