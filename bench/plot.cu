// Charts through bench/plot.py. See plot.h.
#include "plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string>

#ifndef CUREDUCE_SOURCE_DIR
#define CUREDUCE_SOURCE_DIR "."
#endif

int plot_csv(const char *kind, const char *csv, const char *png) {
  const char *script_env = getenv("CUREDUCE_PLOT_SCRIPT");
  const std::string script = script_env ? script_env : std::string(CUREDUCE_SOURCE_DIR) + "/bench/plot.py";
  const std::string cmd = "python3 '" + script + "' " + kind + " '" + csv + "' '" + png + "'";
  const int rc = system(cmd.c_str());
  if (rc != 0) {
    fprintf(stderr, "cureduce: could not draw %s (needs python3 with matplotlib; %s exited %d)\n", png,
            script.c_str(), rc);
    return 1;
  }
  return 0;
}
