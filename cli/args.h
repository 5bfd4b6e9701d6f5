/* Small helpers for the CLI's argument parsing: every failure prints a message naming the
 * problem to stderr and returns non-zero, so commands can exit with it. */
#ifndef CUREDUCE_CLI_ARGS_H
#define CUREDUCE_CLI_ARGS_H

#include "cureduce.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* If argv[*i] is --name VALUE or --name=VALUE, set *value, advance *i past it, return 1.
   A missing VALUE prints an error and returns -1. Otherwise returns 0. */
int arg_value(int argc, char **argv, int *i, const char *name, const char **value);

/* Parse text for option into *out; on failure print "<option> wants ..., got '<text>'" and
   return 1. parse_dtype takes cureduce's names (f32, bf16, ...) and NumPy's (float32,
   bfloat16, ...); parse_i64 takes negative values too. */
int parse_u64(const char *option, const char *text, uint64_t *out);
int parse_i64(const char *option, const char *text, int64_t *out);
int parse_dtype(const char *option, const char *text, cureduce_dtype *out);
int parse_op(const char *option, const char *text, cureduce_op *out);

/* NumPy's (or ml_dtypes') name of dtype, e.g. "float8_e4m3fn"; "?" when dtype is not one. */
const char *dtype_numpy_name(cureduce_dtype dtype);

/* bytes as a short human-readable size ("1.5 GiB") into buf; returns buf. */
const char *format_bytes(double bytes, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

/* The program's name for messages. */
#define CLI_NAME "cureduce"

#endif
