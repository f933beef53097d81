// vtoe: the command-line entry point. The CLI lives in cli.cpp, the run in runner.cpp.
#include <cstdlib>
#include <systemc>

#include "app/cli.h"
#include "app/runner.h"

int sc_main(int argc, char** argv) {
  return vtoe::app::cli_main(argc, argv, vtoe::app::run_scenario, vtoe::app::check_scenario);
}

// Our own main (instead of libsystemc's) so that SystemC's banner is switched off before the
// kernel prints it: stdout carries vtoe's summary only.
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
