/* `cureduce run`'s input array: a .npy file or generated data, with its shape. */
#ifndef CUREDUCE_CLI_RUN_INPUT_H
#define CUREDUCE_CLI_RUN_INPUT_H

#include "npy.h"
#include "run_options.h"

#include <stddef.h>

/* The array of the options, in *a (an npy_array in every case: dtype, shape, C-order data),
   its shape set by --rows/--cols where they apply. Prints the "input:" line. Returns 0, 1
   (runtime error, printed) or 2 (usage error, printed). Generated data is checked against
   `acc` and its size before anything is allocated. */
int input_load(const run_options *o, npy_array *a, int *from_file);

/* The dtype and shape that input_load gives generated data (--random), without its elements
   (a->data NULL): 0, or 2 (usage error, printed). So that the options can be checked against
   the shape before the data is made. */
int input_random_shape(const run_options *o, npy_array *a);

/* Frees what input_load allocated. */
void input_free(npy_array *a, int from_file);

/* shape as NumPy prints it: "()", "(5,)", "(2, 3)". Returns buf. */
const char *shape_text(int ndim, const uint64_t *shape, char *buf, size_t len);

/* Checks the accumulator of o against (op, dtype); on success writes the accumulator used to
 *acc and returns 0, else prints which accumulators are allowed and returns 2. */
int input_resolve_acc(const run_options *o, cureduce_dtype dtype, cureduce_dtype *acc);

#endif
