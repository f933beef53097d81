// vtoe: the command-line entry point. The CLI lives in cli.cpp, the run in runner.cpp.
#include <cstdlib>
#include <systemc>

#include "scenarios/cli.h"
#include "scenarios/runner.h"

int sc_main(int argc, char** argv) {
  return vtoe::scenario::cli_main(argc, argv, vtoe::scenario::run_scenario);
}

// Our own main (instead of libsystemc's) so that SystemC's banner is switched off before the
// kernel prints it: stdout carries vtoe's summary only.
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
