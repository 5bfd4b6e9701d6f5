/* cureduce: the command-line tool. `cureduce --help` lists the subcommands. */
#include "args.h"
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *to) {
  fprintf(to,
          "usage: %s <command> [options]\n"
          "\n"
          "GPU reductions (sum, min, max, absmax, sumsq, mean, argmin, argmax, and exact sums and\n"
          "means: sum_exact, mean_exact) of every dtype, with a CPU reference and fallback.\n"
          "\n"
          "commands:\n"
          "  info     list the CUDA GPUs found\n"
          "  run      reduce one array (.npy file or generated) and print the result\n"
          "\n"
          "'%s <command> --help' describes a command. The benchmarks and the teaching ladder are\n"
          "a separate tool, cureduce-bench. Version %d.%d.%d.\n",
          CLI_NAME, CLI_NAME, CUREDUCE_VERSION_MAJOR, CUREDUCE_VERSION_MINOR, CUREDUCE_VERSION_PATCH);
}

/* The command's exit status, or 1 where what it printed to stdout could not all be written (a
   full disk, a closed pipe): results lost must not look like success. */
static int finish(int rc) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "%s: cannot write the output: %s\n", CLI_NAME, strerror(errno));
    return rc != 0 ? rc : 1;
  }
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    usage(stdout);
    return finish(0);
  }
  if (!strcmp(cmd, "--version")) {
    printf("%s %d.%d.%d\n", CLI_NAME, CUREDUCE_VERSION_MAJOR, CUREDUCE_VERSION_MINOR, CUREDUCE_VERSION_PATCH);
    return finish(0);
  }
  if (!strcmp(cmd, "info"))
    return finish(cmd_info(argc - 1, argv + 1));
  if (!strcmp(cmd, "run"))
    return finish(cmd_run(argc - 1, argv + 1));
  fprintf(stderr, "%s: unknown command '%s'\n\n", CLI_NAME, cmd);
  usage(stderr);
  return 2;
}
