/* Internal facts about dtypes that several layers of the library share (the public ones, such
 * as names and sizes, are in cureduce.h). Defined in dtype_info.c. */
#ifndef CUREDUCE_DTYPE_FACTS_H
#define CUREDUCE_DTYPE_FACTS_H

#include "cureduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether d is one of the floating-point dtypes (f32, f64, f16, bf16, e4m3, e5m2). */
int cr_dtype_is_float(cureduce_dtype d);

/* Whether op is SUM_EXACT or MEAN_EXACT. */
int cr_op_is_exact(cureduce_op op);

/* Whether an exact state may be finished with op into out_dtype: SUCCESS, or INVALID_OP,
   INVALID_DTYPE or UNSUPPORTED (op not SUM_EXACT or MEAN_EXACT, out_dtype not a float). */
cureduce_status cr_exact_finish_supported(cureduce_op op, cureduce_dtype out_dtype);

/* Whether op gives zero for zero elements (the sums) rather than CUREDUCE_EMPTY. */
int cr_op_empty_is_zero(cureduce_op op);

#ifdef __cplusplus
}
#endif

#endif
