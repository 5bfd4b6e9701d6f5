/* cureduce-bench: validates and times the library against the read roofline and CUB, and runs
 * the teaching ladder. A tool beside the product: the `cureduce` CLI holds no benchmark code. */
#include "bench_commands.h"
#include "cureduce.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *to) {
  fprintf(to,
          "usage: %s [ladder] [options]\n"
          "\n"
          "Validate every result against the CPU reference, then time it (needs a GPU).\n"
          "\n"
          "  %s [--quick] [--held] [--out DIR] ...  full arrays: every (dtype, op, acc, n)\n"
          "  %s --rows [--out DIR] ...              rows, columns and segments\n"
          "  %s ladder [--csv F] [--plot F] ...     the teaching ladder, rung by rung\n"
          "\n"
          "Results go to DIR (default ./cureduce-results/<gpu>/); charts need python3 with\n"
          "matplotlib (pip install matplotlib). '%s ladder --help' lists the ladder's options.\n"
          "Version %d.%d.%d.\n",
          BENCH_NAME, BENCH_NAME, BENCH_NAME, BENCH_NAME, BENCH_NAME, CUREDUCE_VERSION_MAJOR,
          CUREDUCE_VERSION_MINOR, CUREDUCE_VERSION_PATCH);
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "ladder"))
    return cmd_ladder(argc - 1, argv + 1);
  if (argc >= 2 && (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    usage(stdout);
    printf("\n");
    char *bench_help[] = {argv[0], "--help", NULL};
    return cmd_bench(2, bench_help); /* then the sweep's own options */
  }
  if (argc >= 2 && !strcmp(argv[1], "--version")) {
    printf("%s %d.%d.%d\n", BENCH_NAME, CUREDUCE_VERSION_MAJOR, CUREDUCE_VERSION_MINOR,
           CUREDUCE_VERSION_PATCH);
    return 0;
  }
  if (argc >= 2 && argv[1][0] != '-') {
    fprintf(stderr, "%s: unknown command '%s'\n\n", BENCH_NAME, argv[1]);
    usage(stderr);
    return 2;
  }
  return cmd_bench(argc, argv);
}
