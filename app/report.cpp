// `vtoe report DIR [--out FILE]`: the page is made by the Python package (python/vtoe/report.py,
// matplotlib); this runs it. The interpreter, first found wins:
//   $VTOE_PYTHON                        (set by the user: used as it is, never passed over);
//   SOURCE/build/venv/bin/python        (`make venv`), with SOURCE/python on PYTHONPATH, when the
//                                       source tree this binary was built from is still there;
//   python3 on PATH                     (with SOURCE/python on PYTHONPATH when it is there, else
//                                       an installed `vtoe` package: pip install SOURCE).
// The process is replaced by Python (exec): its output, errors and exit status are the command's.
// When no interpreter can be started, or it cannot import the package, the message says which
// interpreter was tried and what to install.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "app/cli.h"

#ifndef VTOE_SOURCE_DIR
#define VTOE_SOURCE_DIR ""
#endif

namespace vtoe::app {
namespace {

// Runs vtoe.report.main in the interpreter; an ImportError (the package, pandas, PyYAML) is
// reported as one line naming the interpreter. matplotlib is checked by the package itself.
constexpr const char* kBootstrap =
    "import sys\n"
    "try:\n"
    "    from vtoe.report import main\n"
    "except ImportError as e:\n"
    "    print(f'vtoe report: {sys.executable} cannot import the vtoe Python package ({e}); "
    "the report page needs it with matplotlib: run `make venv` in the source tree (build/venv), "
    "or `pip install \"vtoe[plot]\"` from it, or point VTOE_PYTHON at a Python that has them', "
    "file=sys.stderr)\n"
    "    sys.exit(2)\n"
    "sys.exit(main(sys.argv[1:]))\n";

bool executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

}  // namespace

int run_report(const ReportOptions& opts, std::ostream& err) {
  namespace fs = std::filesystem;
  const std::string source = VTOE_SOURCE_DIR;
  const bool have_source =
      !source.empty() && fs::is_regular_file(fs::path(source) / "python" / "vtoe" / "report.py");
  std::string python;
  if (const char* env = std::getenv("VTOE_PYTHON"); env != nullptr && *env != '\0') {
    python = env;
  } else if (have_source && executable(source + "/build/venv/bin/python")) {
    python = source + "/build/venv/bin/python";
  } else {
    python = "python3";
  }
  if (have_source) {
    const char* old = std::getenv("PYTHONPATH");
    const std::string path =
        source + "/python" + (old != nullptr && *old != '\0' ? ":" + std::string(old) : "");
    setenv("PYTHONPATH", path.c_str(), 1);
  }
  std::vector<std::string> args = {python, "-c", kBootstrap, opts.dir};
  if (!opts.out.empty()) {
    args.push_back("--out");
    args.push_back(opts.out);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  err.flush();
  execvp(python.c_str(), argv.data());
  const int e = errno;
  err << "vtoe report: cannot run " << python << " (" << std::strerror(e)
      << "): the report page is made by the Python package vtoe with matplotlib; install Python 3 "
         "and run `make venv`"
      << (have_source ? " in " + source : "") << ", or set VTOE_PYTHON to a Python that has them\n";
  return kExitUsage;
}

}  // namespace vtoe::app
