// Charts through plot.py, which the build embeds in the tool (plot_script.cpp, generated), so
// they work wherever cureduce-bench is installed or run. See plot.h.
#include "plot.h"

#include <stdio.h>
#include <string>

extern const char CUREDUCE_PLOT_PY[]; // plot_script.cpp: bench/plot.py as a string

namespace {

// One argument for /bin/sh, single-quoted ('\'' for each quote inside).
std::string shell_quoted(const char *s) {
  std::string q = "'";
  for (; *s; ++s)
    q += *s == '\'' ? std::string("'\\''") : std::string(1, *s);
  return q + "'";
}

} // namespace

int plot_csv(const char *kind, const char *csv, const char *png) {
  const std::string cmd =
      std::string("python3 - ") + kind + " " + shell_quoted(csv) + " " + shell_quoted(png);
  FILE *py = popen(cmd.c_str(), "w");
  int rc = -1;
  if (py) {
    fputs(CUREDUCE_PLOT_PY, py);
    rc = pclose(py);
  }
  if (rc != 0) {
    fprintf(stderr, "cureduce-bench: could not draw %s (charts need python3 with matplotlib)\n", png);
    return 1;
  }
  return 0;
}
