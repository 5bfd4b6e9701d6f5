// Charts: the tools write CSV, then draw it with bench/plot.py (python3 + matplotlib).
#pragma once

// kind: "ladder", "shmoo" or "bench". Returns 0, or prints why not and returns 1.
int plot_csv(const char *kind, const char *csv, const char *png);
