#include "models/core/sim_time.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace vtoe::core {

void check_time_resolution() {
  // sc_get_time_resolution() fixes the resolution; every model is built after the integrator set
  // it.
  const double seconds = sc_core::sc_get_time_resolution().to_seconds();
  const double ps = seconds * 1e12;
  const double whole = std::round(ps);
  if (whole < 1 || std::fabs(ps - whole) > 1e-6 * whole)
    throw std::runtime_error(
        "vtoe: SystemC time resolution " + sc_core::sc_get_time_resolution().to_string() +
        " is not supported: the models need a whole number of picoseconds (1 ps or coarser, e.g. "
        "sc_set_time_resolution(1, SC_NS))");
  detail::g_resolution_ps = static_cast<TimePs>(whole);
}

}  // namespace vtoe::core
