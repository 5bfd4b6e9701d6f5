/* `cureduce run`: its command line, parsed with getopt_long, and its --help text. */
#ifndef CUREDUCE_CLI_RUN_OPTIONS_H
#define CUREDUCE_CLI_RUN_OPTIONS_H

#include "cureduce.h"

#include <stdint.h>
#include <stdio.h>

typedef struct run_options {
  const char *npy;      /* --npy FILE or the FILE argument ("-": standard input); NULL: none */
  uint64_t random_n;    /* the element count when have_random */
  int have_random;      /* --random N given, or implied by --rows/--cols alone */
  cureduce_dtype dtype; /* CUREDUCE_ACC_DEFAULT: not given */
  uint64_t seed;
  int have_seed; /* --seed given: refused with a file, which it would not change */
  cureduce_op op;
  cureduce_dtype acc; /* CUREDUCE_ACC_DEFAULT: the default accumulator */
  int exact, force_cpu;
  int matrix; /* --rows and --cols given */
  uint64_t rows, cols;
  int have_axis;
  int64_t axis; /* as given: negative counts from the end */
  uint64_t show;
  int have_show; /* --show given: refused without --axis, which it would not change */
} run_options;

/* Parse argv[1 .. argc-1] (argv[0] is "run"). Returns 0 when parsed, 2 after printing a usage
   error, -1 after printing --help to stdout. */
int parse_run_options(int argc, char **argv, run_options *o);

void run_usage(FILE *to);

#endif
