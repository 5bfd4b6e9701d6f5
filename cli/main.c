/* cureduce: the command-line tool. `cureduce --help` lists the subcommands. */
#include "args.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *to) {
  fprintf(to,
          "usage: %s <command> [options]\n"
          "\n"
          "GPU reductions (sum, min, max, absmax, sumsq, mean, argmin, argmax) of every dtype,\n"
          "with a CPU reference and fallback.\n"
          "\n"
          "commands:\n"
          "  info     list the CUDA GPUs found\n"
          "  run      reduce one array (.npy file or generated) and print the result\n"
          "\n"
          "'%s <command> --help' describes a command. The benchmarks and the teaching ladder are\n"
          "a separate tool, cureduce-bench. Version %d.%d.%d.\n",
          CLI_NAME, CLI_NAME, CUREDUCE_VERSION_MAJOR, CUREDUCE_VERSION_MINOR, CUREDUCE_VERSION_PATCH);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version")) {
    printf("%s %d.%d.%d\n", CLI_NAME, CUREDUCE_VERSION_MAJOR, CUREDUCE_VERSION_MINOR, CUREDUCE_VERSION_PATCH);
    return 0;
  }
  if (!strcmp(cmd, "info"))
    return cmd_info(argc - 1, argv + 1);
  if (!strcmp(cmd, "run"))
    return cmd_run(argc - 1, argv + 1);
  fprintf(stderr, "%s: unknown command '%s'\n\n", CLI_NAME, cmd);
  usage(stderr);
  return 2;
}
