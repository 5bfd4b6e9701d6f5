/* Small helpers for the CLI's argument parsing: every failure prints a message naming the
 * problem to stderr and returns non-zero, so commands can exit with it. */
#ifndef CUREDUCE_CLI_ARGS_H
#define CUREDUCE_CLI_ARGS_H

#include "cureduce.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* If argv[*i] is --name VALUE or --name=VALUE, set *value, advance *i past it, return 1.
   A missing VALUE prints an error and returns -1. Otherwise returns 0. */
int arg_value(int argc, char **argv, int *i, const char *name, const char **value);

int parse_u64(const char *option, const char *text, uint64_t *out);
int parse_dtype(const char *option, const char *text, cureduce_dtype *out);
int parse_op(const char *option, const char *text, cureduce_op *out);

#ifdef __cplusplus
}
#endif

/* The program's name for messages. */
#define CLI_NAME "cureduce"

#endif
