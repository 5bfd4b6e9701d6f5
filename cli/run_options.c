/* `cureduce run` options. GNU getopt_long gives the usual forms for free: -n 5, -n5, --random 5,
 * --random=5, unique prefixes (--rand), options and the FILE argument in any order, and "--"
 * before a file name that starts with '-'. */
#define _GNU_SOURCE
#include "run_options.h"

#include "args.h"

#include <getopt.h>
#include <string.h>

enum { OPT_CPU = 256, OPT_ROWS, OPT_COLS, OPT_AXIS, OPT_SHOW };

static const struct option LONG_OPTIONS[] = {{"npy", required_argument, NULL, 'f'},
                                             {"random", required_argument, NULL, 'n'},
                                             {"dtype", required_argument, NULL, 'd'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"op", required_argument, NULL, 'o'},
                                             {"acc", required_argument, NULL, 'a'},
                                             {"exact", no_argument, NULL, 'e'},
                                             {"cpu", no_argument, NULL, OPT_CPU},
                                             {"rows", required_argument, NULL, OPT_ROWS},
                                             {"cols", required_argument, NULL, OPT_COLS},
                                             {"axis", required_argument, NULL, OPT_AXIS},
                                             {"show", required_argument, NULL, OPT_SHOW},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};

/* Leading '-': non-options come back in order as code 1 (so POSIXLY_CORRECT changes nothing);
   then ':': a missing value comes back as ':' rather than '?'. */
static const char SHORT_OPTIONS[] = "-:f:n:d:s:o:a:eh";

/* Accumulators allowed for (op, dtype), the default first and marked with '*'; "refused" where
   the op does not take the dtype (the exact ops and integers). */
static void print_accs(FILE *to, cureduce_op op, cureduce_dtype dtype) {
  cureduce_dtype def;
  if (cureduce_resolve_acc(op, dtype, CUREDUCE_ACC_DEFAULT, &def) != CUREDUCE_SUCCESS) {
    fprintf(to, " refused");
    return;
  }
  fprintf(to, " %s*", cureduce_dtype_name(def));
  for (int a = 0; a < CUREDUCE_DTYPE_COUNT; ++a)
    if (a != (int)def && cureduce_supported(op, dtype, (cureduce_dtype)a) == CUREDUCE_SUCCESS)
      fprintf(to, " %s", cureduce_dtype_name((cureduce_dtype)a));
}

/* One bit per accepted accumulator, and the default in the high bits: ops with equal keys
   share a line of the table. */
static unsigned acc_key(cureduce_op op, cureduce_dtype dtype) {
  cureduce_dtype def = CUREDUCE_ACC_DEFAULT;
  (void)cureduce_resolve_acc(op, dtype, CUREDUCE_ACC_DEFAULT, &def);
  unsigned key = (unsigned)(def + 1) << 16;
  for (int a = 0; a < CUREDUCE_DTYPE_COUNT; ++a)
    if (cureduce_supported(op, dtype, (cureduce_dtype)a) == CUREDUCE_SUCCESS)
      key |= 1u << a;
  return key;
}

/* The ops of dtype's table line that share op's accumulators, or "other ops" for a group of
   most of them. */
static void print_group(FILE *to, cureduce_dtype dt, unsigned key, int size) {
  if (size == CUREDUCE_OP_COUNT)
    return;
  if (2 * size > CUREDUCE_OP_COUNT) {
    fprintf(to, " (other ops)");
    return;
  }
  const char *sep = " (";
  for (int q = 0; q < CUREDUCE_OP_COUNT; ++q)
    if (acc_key((cureduce_op)q, dt) == key)
      fprintf(to, "%s%s", sep, cureduce_op_name((cureduce_op)q)), sep = ", ";
  fprintf(to, ")");
}

/* The accumulator table, read from the library so that it cannot drift from it. */
static void print_acc_table(FILE *to) {
  for (int d = 0; d < CUREDUCE_DTYPE_COUNT; ++d) {
    const cureduce_dtype dt = (cureduce_dtype)d;
    fprintf(to, "  %-5s", cureduce_dtype_name(dt));
    int done[CUREDUCE_OP_COUNT] = {0};
    const char *sep = "";
    for (int op = 0; op < CUREDUCE_OP_COUNT; ++op) {
      if (done[op])
        continue;
      const unsigned key = acc_key((cureduce_op)op, dt);
      int size = 0;
      for (int q = op; q < CUREDUCE_OP_COUNT; ++q)
        if (acc_key((cureduce_op)q, dt) == key)
          done[q] = 1, ++size;
      fprintf(to, "%s", sep);
      print_accs(to, (cureduce_op)op, dt);
      print_group(to, dt, key, size);
      sep = ";";
    }
    fprintf(to, "\n");
  }
}

void run_usage(FILE *to) {
  fprintf(to,
          "usage: %s run [options] (FILE | --npy FILE | --random N | --rows R --cols C)\n"
          "\n"
          "Reduce one array and print the result. Runs on the GPU when there is one and then\n"
          "also prints the reduction's time and bandwidth; else runs on the CPU and says why.\n"
          "\n"
          "input (exactly one of FILE, --npy FILE, --random N, or --rows R --cols C alone):\n"
          "  FILE, -f, --npy FILE  a NumPy .npy file ('-': standard input), C or Fortran order,\n"
          "                        either byte order, any shape. bf16 and fp8 arrays saved by\n"
          "                        ml_dtypes (raw '<V2', '<V1' bytes) need --dtype; its\n"
          "                        float8_e5m2 ('<f1') is read as e5m2\n"
          "  -n, --random N        N generated elements: uniform in [-1, 1) for float dtypes,\n"
          "                        the whole range for i8, [-2^20, 2^20) for i32 and i64\n"
          "  --rows R --cols C     the shape R x C: of generated data (R*C elements when\n"
          "                        --random is not given), or a reshape of --random N or of\n"
          "                        a 1-D file (R*C must equal the count); a file of 2 or more\n"
          "                        dimensions keeps its own shape, which they must equal\n"
          "\n"
          "options:\n"
          "  -d, --dtype D         element dtype of --random (default f32); for a file, what\n"
          "                        its raw bytes hold (it must agree when the file names one)\n"
          "  -s, --seed S          random seed (default 1)\n"
          "  -o, --op OP           the reduction (default sum), one of:\n"
          "                       ",
          CLI_NAME);
  for (int op = 0; op < CUREDUCE_OP_COUNT; ++op)
    fprintf(to, " %s", cureduce_op_name((cureduce_op)op));
  fprintf(to, "\n"
              "  -a, --acc D           accumulator dtype (default: see the table below)\n"
              "  --axis A              reduce along axis A of the shape, as NumPy's axis=A: one\n"
              "                        result per position of the other axes; negative A counts\n"
              "                        from the end. Without --axis the whole array is reduced as\n"
              "                        one flat array in C order\n"
              "  --show K              print the first K results of --axis (default 8)\n"
              "  -e, --exact           also print the exact sum of the whole array, correctly\n"
              "                        rounded to f64 (float dtypes; on the GPU when there is one;\n"
              "                        --op sum_exact and mean_exact round into --acc instead)\n"
              "  --cpu                 run on the CPU even when there is a GPU\n"
              "  -h, --help            print this text\n"
              "\n"
              "dtypes (cureduce's name or NumPy's; --dtype and --acc take both):");
  for (int d = 0; d < CUREDUCE_DTYPE_COUNT; ++d)
    fprintf(to, "%s%s=%s", d % 5 ? " " : "\n  ", cureduce_dtype_name((cureduce_dtype)d),
            dtype_numpy_name((cureduce_dtype)d));
  fprintf(to, "\n\naccumulators by input dtype (* the default):\n");
  print_acc_table(to);
  fprintf(to, "\n"
              "results: sums wrap for integers; argmin and argmax print the index of the first\n"
              "minimum or maximum (a flat C-order index over the whole array, or the index along\n"
              "--axis), the accumulator setting only the precision of the comparison. Of zero\n"
              "elements, sum, sumsq and sum_exact are 0 and the other ops have no result (exit\n"
              "status 1).\n"
              "\n"
              "exit status: 0 done; 1 runtime error (unreadable file, empty input, out of memory,\n"
              "a CUDA error); 2 usage error (a --dtype that a file's raw bytes need, or that\n"
              "contradicts the file's dtype, included).\n");
}

/* "--random (-n)" for an option's code, for messages. */
static void option_name(int val, char *buf, size_t len) {
  for (const struct option *p = LONG_OPTIONS; p->name; ++p) {
    if (p->val == val) {
      if (val < 256)
        snprintf(buf, len, "--%s (-%c)", p->name, val);
      else
        snprintf(buf, len, "--%s", p->name);
      return;
    }
  }
  snprintf(buf, len, "-%c", val);
}

/* How many long options start with the name in arg ("--na=1" -> "na"); lists them in buf. */
static int prefix_matches(const char *arg, char *buf, size_t len) {
  const char *name = arg + 2;
  const size_t n = strcspn(name, "=");
  int count = 0;
  buf[0] = '\0';
  for (const struct option *p = LONG_OPTIONS; p->name; ++p) {
    if (strncmp(p->name, name, n) == 0) {
      const size_t used = strlen(buf);
      snprintf(buf + used, len - used, "%s--%s", count ? ", " : "", p->name);
      ++count;
    }
  }
  return count;
}

/* getopt_long's '?': an unknown or ambiguous option, or a value given to a flag. */
static int bad_option(char **argv) {
  char name[64], list[256];
  const char *arg = argv[optind - 1];
  if (optopt >= 256 || (optopt && strchr("eh", optopt) && !strncmp(arg, "--", 2))) {
    option_name(optopt, name, sizeof name);
    fprintf(stderr, "%s run: option %s takes no value ('%s')\n", CLI_NAME, name, arg);
  } else if (optopt) {
    fprintf(stderr, "%s run: unknown option '-%c' (see --help)\n", CLI_NAME, optopt);
  } else if (!strncmp(arg, "--", 2) && prefix_matches(arg, list, sizeof list) > 1) {
    fprintf(stderr, "%s run: ambiguous option '%s': %s?\n", CLI_NAME, arg, list);
  } else {
    fprintf(stderr, "%s run: unknown argument '%s' (see --help)\n", CLI_NAME, arg);
  }
  return 2;
}

static int set_file(run_options *o, const char *path) {
  if (o->npy) {
    fprintf(stderr, "%s run: more than one input file ('%s' and '%s'); give one\n", CLI_NAME, o->npy, path);
    return 2;
  }
  o->npy = path;
  return 0;
}

/* One option; returns 0, 2 (usage error, printed) or -1 (--help printed). */
static int take_option(run_options *o, int c, char **argv) {
  char name[64];
  switch (c) {
  case 1: return set_file(o, optarg);
  case 'f': return set_file(o, optarg);
  case 'n': o->have_random = 1; return parse_u64("--random", optarg, &o->random_n) ? 2 : 0;
  case 'd': return parse_dtype("--dtype", optarg, &o->dtype) ? 2 : 0;
  case 's': o->have_seed = 1; return parse_u64("--seed", optarg, &o->seed) ? 2 : 0;
  case 'o': return parse_op("--op", optarg, &o->op) ? 2 : 0;
  case 'a': return parse_dtype("--acc", optarg, &o->acc) ? 2 : 0;
  case 'e': o->exact = 1; return 0;
  case OPT_CPU: o->force_cpu = 1; return 0;
  case OPT_ROWS: o->matrix |= 1; return parse_u64("--rows", optarg, &o->rows) ? 2 : 0;
  case OPT_COLS: o->matrix |= 2; return parse_u64("--cols", optarg, &o->cols) ? 2 : 0;
  case OPT_AXIS: o->have_axis = 1; return parse_i64("--axis", optarg, &o->axis) ? 2 : 0;
  case OPT_SHOW: o->have_show = 1; return parse_u64("--show", optarg, &o->show) ? 2 : 0;
  case 'h': run_usage(stdout); return -1;
  case ':':
    option_name(optopt, name, sizeof name);
    fprintf(stderr, "%s run: option %s needs a value\n", CLI_NAME, name);
    return 2;
  default: return bad_option(argv);
  }
}

/* The rules between options, once all are read. */
static int check_options(run_options *o) {
  if (o->matrix && o->matrix != 3) {
    fprintf(stderr, "%s run: give both --rows R and --cols C\n", CLI_NAME);
    return 2;
  }
  o->matrix = o->matrix == 3;
  if (o->npy && o->have_random) {
    fprintf(stderr, "%s run: give exactly one of a FILE (--npy FILE) and --random N, not both\n", CLI_NAME);
    return 2;
  }
  if (o->matrix && o->cols && o->rows > UINT64_MAX / o->cols) {
    fprintf(stderr, "%s run: --rows %llu x --cols %llu is more than 2^64 elements\n", CLI_NAME,
            (unsigned long long)o->rows, (unsigned long long)o->cols);
    return 2;
  }
  if (o->matrix && !o->npy && !o->have_random) {
    o->random_n = o->rows * o->cols;
    o->have_random = 1;
  }
  if (!o->npy && !o->have_random) {
    fprintf(stderr, "%s run: give exactly one of a FILE (--npy FILE) and --random N (see --help)\n",
            CLI_NAME);
    return 2;
  }
  if (o->npy && o->have_seed) {
    fprintf(stderr, "%s run: --seed sets the generated data (--random); it does nothing to a file\n",
            CLI_NAME);
    return 2;
  }
  if (o->have_show && !o->have_axis) {
    fprintf(stderr, "%s run: --show K prints the results of --axis; give --axis too\n", CLI_NAME);
    return 2;
  }
  if (o->exact && o->have_axis) {
    fprintf(stderr, "%s run: --exact sums the whole array; it does not combine with --axis\n", CLI_NAME);
    return 2;
  }
  return 0;
}

int parse_run_options(int argc, char **argv, run_options *o) {
  *o = (run_options){.dtype = CUREDUCE_ACC_DEFAULT, .seed = 1, .acc = CUREDUCE_ACC_DEFAULT, .show = 8};
  optind = 0; /* glibc: a full restart of getopt's state; argv[0] is the command's name */
  opterr = 0; /* our messages, which say "cureduce run" and name the option */
  int c;
  while ((c = getopt_long(argc, argv, SHORT_OPTIONS, LONG_OPTIONS, NULL)) != -1) {
    const int rc = take_option(o, c, argv);
    if (rc)
      return rc;
  }
  for (int i = optind; i < argc; ++i) /* the words after "--" */
    if (set_file(o, argv[i]))
      return 2;
  return check_options(o);
}
