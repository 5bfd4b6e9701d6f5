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

#ifdef __cplusplus
}
#endif

#endif
